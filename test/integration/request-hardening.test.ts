// Hostile but well-formed requests are 400s in the spec's error body, never 500s, on SQLite and
// PostgreSQL alike: U+0000 in any text (path, query, JSON at any depth, multipart fields), JSON bodies
// whose values only match their schema after type coercion, and estimate models that are properties
// of Object.prototype rather than models.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createOrgWithKey,
  createTestServices,
  fixture,
  type TestOrg,
  type TestServices,
} from '../helpers/index.js';
import { encodeForm, type FormPart } from '../helpers/multipart.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';
const NUL = '\u0000';

interface Res {
  statusCode: number;
  body: string;
  json(): any;
}

function assertInvalid(res: Res, field: string, code = 'invalid_request'): void {
  assert.equal(res.statusCode, 400, res.body);
  const body = res.json();
  assert.equal(body.statusCode, 400);
  assert.equal(body.errorCode, code, res.body);
  assert.equal(body.field, field, res.body);
  assert.equal(typeof body.message, 'string');
  assert.equal(body.requestId, undefined, 'a 400, not an unexpected failure');
}

describe(`request hardening (${DB})`, { timeout: 120_000 }, () => {
  let t: TestServices;
  let org: TestOrg;
  let projectId: string;
  let keyId: string;
  let videoAsset: string;
  let audioAsset: string;

  before(async () => {
    t = await createTestServices({ env: { LIPSYNC_RATE_LIMIT_ENABLED: 'false' } });
    org = await createOrgWithKey(t.services, { plan: 'enterprise' });
    const p = await send('POST', '/v2/projects', { name: 'Hardening' });
    assert.equal(p.statusCode, 201, p.body);
    projectId = p.json().id;
    const k = await send('POST', '/v2/api-keys', { name: 'second', role: 'member' });
    assert.equal(k.statusCode, 201, k.body);
    keyId = k.json().id;
    videoAsset = await upload(fixture('media/face_5.mp4'));
    audioAsset = await upload(fixture('media/hello.wav'));
  });
  after(() => t?.cleanup());

  function send(method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE', url: string, payload?: unknown) {
    return t.app.inject({
      method,
      url,
      headers: {
        ...org.owner.headers,
        ...(payload === undefined ? {} : { 'content-type': 'application/json' }),
      },
      payload: payload === undefined ? undefined : JSON.stringify(payload),
    });
  }

  async function sendForm(url: string, parts: FormPart[]) {
    const { payload, headers } = await encodeForm(parts);
    return t.app.inject({ method: 'POST', url, headers: { ...org.owner.headers, ...headers }, payload });
  }

  async function upload(path: string): Promise<string> {
    const res = await sendForm('/v2/assets/upload', [{ name: 'file', file: path }]);
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id;
  }

  const inputs = () => [
    { type: 'video', assetId: videoAsset },
    { type: 'audio', assetId: audioAsset },
  ];

  describe('U+0000 is a 400 naming the field', () => {
    test('project and API key names', async () => {
      assertInvalid(await send('POST', '/v2/projects', { name: `a${NUL}b` }), 'name');
      assertInvalid(await send('PATCH', `/v2/projects/${projectId}`, { name: `x${NUL}` }), 'name');
      assertInvalid(await send('PUT', `/v2/projects/${projectId}`, { name: NUL }), 'name');
      assertInvalid(await send('POST', '/v2/api-keys', { name: `key${NUL}` }), 'name');
      assertInvalid(await send('PATCH', `/v2/api-keys/${keyId}`, { name: `${NUL}k` }), 'name');
      // Nothing was stored: the project keeps its name.
      const p = await send('GET', `/v2/projects/${projectId}`);
      assert.equal(p.json().name, 'Hardening');
    });

    test('path ids', async () => {
      for (const [method, url] of [
        ['GET', '/v2/projects/%00'],
        ['GET', `/v2/projects/${projectId}%00`],
        ['DELETE', '/v2/projects/a%00b'],
        ['GET', '/v2/generate/%00abc'],
        ['GET', '/v2/generations/%00/download'],
        ['DELETE', '/v2/generations/%00'],
        ['GET', '/v2/assets/%00'],
        ['DELETE', '/v2/assets/%00'],
        ['DELETE', '/v2/api-keys/%00'],
      ] as const) {
        assertInvalid(await send(method, url), 'id');
      }
    });

    test('generation list filters and the asset search', async () => {
      assertInvalid(await send('GET', '/v2/generations?ids=%00'), 'ids');
      assertInvalid(await send('GET', `/v2/generations?ids=${videoAsset},a%00`), 'ids');
      assertInvalid(await send('GET', '/v2/generations?source=api%00'), 'source');
      assertInvalid(await send('GET', '/v2/generations?status=PENDING%00'), 'status');
      assertInvalid(await send('GET', '/v2/generations?projectId=%00'), 'projectId');
      assertInvalid(await send('GET', '/v2/generations?limit=5&cursor=%00'), 'cursor');
      assertInvalid(await send('GET', '/v2/assets?searchQuery=%00'), 'searchQuery');
      assertInvalid(await send('GET', '/v2/assets?searchQuery=face%00x'), 'searchQuery');
      assertInvalid(await send('GET', '/v2/projects?cursor=%00'), 'cursor');
    });

    test('JSON body strings at any depth, and property names', async () => {
      const base = { model: 'lipsync-2', input: inputs() };
      assertInvalid(
        await send('POST', '/v2/generate', { ...base, webhookUrl: `https://h.test/${NUL}` }),
        'webhookUrl',
      );
      assertInvalid(await send('POST', '/v2/generate', { ...base, model: `lipsync-2${NUL}` }), 'model');
      assertInvalid(
        await send('POST', '/v2/generate', {
          model: 'lipsync-2',
          input: [{ type: 'video', url: `https://media.test/a${NUL}.mp4` }, inputs()[1]],
        }),
        'input[0].url',
      );
      assertInvalid(
        await send('POST', '/v2/generate', {
          ...base,
          options: { active_speaker_detection: { extra: [{ deep: ['ok', `no${NUL}`] }] } },
        }),
        'options.active_speaker_detection.extra[0].deep[1]',
      );
      assertInvalid(
        await send('POST', '/v2/generate', { ...base, options: { [`x${NUL}`]: 1 } }),
        'options.x\\u0000',
      );
      assertInvalid(
        await send('POST', '/v2/generate', { ...base, outputFileName: `out${NUL}.mp4` }),
        'outputFileName',
      );
      assertInvalid(
        await send('POST', '/v2/generate', { ...base, projectId: `${projectId}${NUL}` }),
        'projectId',
      );
      assertInvalid(
        await send('POST', '/v2/generations/estimate', { model: `x${NUL}`, duration: 5 }),
        'model',
      );
      const list = await send('GET', '/v2/generations');
      assert.deepEqual(list.json(), [], 'no generation was created');
    });

    test('multipart text fields, JSON fields and file names', async () => {
      const video: FormPart = { name: 'video', file: fixture('media/face_5.mp4') };
      const audio: FormPart = { name: 'audio', file: fixture('media/hello.wav') };
      assertInvalid(
        await sendForm('/v2/generate', [
          { name: 'model', value: 'lipsync-2' },
          { name: 'webhookUrl', value: `https://h.test/${NUL}` },
          video,
          audio,
        ]),
        'webhookUrl',
      );
      // A JSON field whose text only holds the escape \u0000: found once it is parsed.
      assertInvalid(
        await sendForm('/v2/generate', [
          { name: 'model', value: 'lipsync-2' },
          { name: 'input', value: JSON.stringify([{ type: 'video', url: `https://m.test/${NUL}` }]) },
          audio,
        ]),
        'input[0].url',
      );
      assertInvalid(
        await sendForm('/v2/generate', [
          { name: 'model', value: 'lipsync-2' },
          { name: 'video', file: fixture('media/face_5.mp4'), filename: `face${NUL}.mp4` },
          audio,
        ]),
        'video',
      );
      assertInvalid(
        await sendForm('/v2/assets/upload', [
          { name: 'name', value: `clip${NUL}` },
          { name: 'file', file: fixture('media/hello.wav') },
        ]),
        'name',
      );
      assertInvalid(
        await sendForm('/v2/assets/upload', [
          { name: 'file', file: fixture('media/hello.wav'), filename: `a${NUL}.wav` },
        ]),
        'file',
      );
      const assets = await send('GET', '/v2/assets');
      assert.equal(assets.json().totalCount, 2, 'no asset was stored');
    });
  });

  describe('JSON bodies are not coerced; query strings are', () => {
    test('estimate: a string, an array or a boolean where a number is expected is 400', async () => {
      for (const url of ['/v2/generations/estimate', '/v2/generate/estimate-cost']) {
        const ok = await send('POST', url, { model: 'lipsync-2', duration: 5, fps: 25 });
        assert.equal(ok.statusCode, 200, ok.body);
        for (const duration of ['5', [5], true, null]) {
          assertInvalid(await send('POST', url, { model: 'lipsync-2', duration }), 'duration');
        }
        assertInvalid(await send('POST', url, { model: 'lipsync-2', duration: 5, fps: '30' }), 'fps');
        assertInvalid(await send('POST', url, { model: ['lipsync-2'], duration: 5 }), 'model');
      }
    });

    test('other bodies: a number is not a name, a string is not a number or a boolean', async () => {
      assertInvalid(await send('POST', '/v2/projects', { name: 5 }), 'name');
      assertInvalid(await send('PATCH', `/v2/api-keys/${keyId}`, { name: true }), 'name');
      const base = { model: 'lipsync-2', input: inputs() };
      assertInvalid(
        await send('POST', '/v2/generate', { ...base, options: { temperature: '0.5' } }),
        'options.temperature',
      );
      assertInvalid(
        await send('POST', '/v2/generate', { ...base, options: { speedup: '2' } }),
        'options.speedup',
      );
      assertInvalid(
        await send('POST', '/v2/generate', { ...base, options: { active_speaker: 'true' } }),
        'options.active_speaker',
      );
      assertInvalid(
        await send('POST', '/v2/generate', { ...base, options: { pads: ['1', 2, 3, 4] } }),
        'options.pads[0]',
      );
      assertInvalid(await send('POST', '/v2/generate', { ...base, model: 5 }), 'model');
    });

    test('query strings are still coerced from text', async () => {
      const gens = await send('GET', '/v2/generations?limit=10');
      assert.equal(gens.statusCode, 200, gens.body);
      const assets = await send('GET', '/v2/assets?limit=1&types=AUDIO');
      assert.equal(assets.statusCode, 200, assets.body);
      assert.equal(assets.json().items.length, 1);
      assertInvalid(await send('GET', '/v2/generations?limit=ten'), 'limit');
    });

    test('options.temperature null means the default, in JSON and in a multipart form', async () => {
      const json = await send('POST', '/v2/generate', {
        model: 'lipsync-2',
        input: inputs(),
        options: { temperature: null, sync_mode: null, fps: null },
      });
      assert.equal(json.statusCode, 201, json.body);
      assert.equal(json.json().options.temperature, 0.5);
      assert.equal(json.json().options.sync_mode, 'cut_off');

      const form = await sendForm('/v2/generate', [
        { name: 'model', value: 'lipsync-2' },
        { name: 'input', value: JSON.stringify(inputs()) },
        { name: 'options', value: JSON.stringify({ temperature: null, output_format: 'mov' }) },
      ]);
      assert.equal(form.statusCode, 201, form.body);
      assert.equal(form.json().options.temperature, 0.5);
      assert.equal(form.json().options.output_format, 'mov');

      // A multipart form is validated like JSON: its JSON fields keep their types.
      assertInvalid(
        await sendForm('/v2/generate', [
          { name: 'model', value: 'lipsync-2' },
          { name: 'input', value: JSON.stringify(inputs()) },
          { name: 'options', value: JSON.stringify({ temperature: '0.7' }) },
        ]),
        'options.temperature',
      );
    });
  });

  test('estimates refuse names of Object.prototype as models', async () => {
    for (const url of ['/v2/generations/estimate', '/v2/generate/estimate-cost']) {
      for (const model of ['constructor', '__proto__', 'toString', 'hasOwnProperty', 'valueOf', 'nope']) {
        assertInvalid(await send('POST', url, { model, duration: 5 }), 'model', 'unsupported_model');
      }
    }
  });
});
