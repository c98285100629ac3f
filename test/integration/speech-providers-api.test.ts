// The HTTP voice providers (openai-compatible, ElevenLabs) through the API, against the protocol-level
// fakes of their services: POST /v2/tts and text inputs of POST /v2/generate with the server's keys,
// every provider failure mapped onto the error catalogue (timeouts, outages, quota, keys, voices),
// keyed generations whose provider hung, the organization's own provider keys, voice listing during
// an outage, ElevenLabs clones (with the provider's verification), and an asynchronous TTS job that
// fails on the provider. No key, file path or provider text ever reaches a client.
import { after, afterEach, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createKey,
  createOrgWithKey,
  createTestServices,
  fixture,
  type TestKey,
  type TestOrg,
  type TestServices,
} from '../helpers/index.js';
import { uploadAssetFile } from '../helpers/multipart.js';
import {
  FakeElevenLabsServer,
  FakeOpenAiServer,
  type FakeMode,
  type FakeSpeechServer,
} from '../helpers/fake-speech-servers.js';
import { ORG_KEY, SCRIPT, SERVER_KEY, scriptWords } from '../helpers/speech-results.js';
import { probeMedia } from '../../src/media/probe.js';
import { startBackground } from '../../src/app/runtime.js';

const ELEVEN_KEY = 'xi-server-3c9d0e2f6a1b7c48';
/** A key neither fake accepts. */
const REJECTED_KEY = 'xi-wrong-71a0c3e95b2d4f86';
const SECRETS = [SERVER_KEY, ELEVEN_KEY, ORG_KEY, REJECTED_KEY];
const RACHEL = '21m00Tcm4TlvDq8ikWAM';
const OPENAI_MODEL = 'tts-1-hd';
const ELEVEN_MODEL = 'eleven_turbo_v2_5';

/** What the fakes say in their error answers: none of it may reach a client. */
const PROVIDER_TEXT =
  /Incorrect API key|Invalid API key|quota of 10000|credits remaining|exceeded your current quota|Rate limit reached|Too many concurrent|Internal server error|server had an error|Service (Temporarily )?Unavailable|Maintenance|<html|was not found\.|not found\.'|Input is too long|field required|failed or incomplete payment|HTTP \d{3}|xi-api-key|Bearer|\[key\]/i;
const FILE_PATH = /\/tmp\/|\/work\/|\/var\/|\/home\/|\.answer\b|festival|ffmpeg|pocketsphinx|stderr/i;

// Failure modes of the fakes and the answer a client must get for each (server-wide keys).
const FAILURES: [FakeMode, number, string][] = [
  ['server_error', 503, 'provider_service_unavailable'],
  ['overloaded', 503, 'provider_service_unavailable'],
  ['garbage', 503, 'provider_service_unavailable'],
  ['rate_limited', 503, 'provider_service_unavailable'],
  ['quota', 402, 'provider_quota_exceeded'],
  ['payment_required', 402, 'provider_quota_exceeded'],
  // The operator's key: nothing the client can fix, so an outage for them.
  ['invalid_key', 503, 'provider_service_unavailable'],
  ['unknown_voice', 422, 'voice_not_found'],
  ['bad_request', 422, 'invalid_request'],
];

type Res = { statusCode: number; json(): any; body: string; headers: Record<string, unknown> };

function assertNoSecrets(body: string): void {
  for (const k of SECRETS) assert.ok(!body.includes(k), `a provider key is in a response: ${body}`);
}

function assertError(res: Res, status: number, code: string): any {
  assert.equal(res.statusCode, status, res.body);
  const b = res.json();
  assert.equal(b.statusCode, status);
  assert.equal(b.errorCode, code, res.body);
  assert.ok(b.message && b.suggestion);
  assert.doesNotMatch(res.body, PROVIDER_TEXT);
  assert.doesNotMatch(res.body, FILE_PATH);
  assertNoSecrets(res.body);
  if (code === 'provider_service_unavailable' || code === 'IDEMPOTENCY_OUTCOME_UNKNOWN')
    assert.match(String(res.headers['retry-after']), /^\d+$/, `Retry-After on ${code}`);
  return b;
}

const ttsRequests = (fake: FakeSpeechServer) =>
  fake.requests.filter((r) => r.method === 'POST' && /\/v1\/(audio\/speech|text-to-speech\/)/.test(r.path));
const jsonBody = (r: { body: Buffer }) => JSON.parse(r.body.toString('utf8')) as Record<string, unknown>;

describe(`speech providers through the API (${process.env.TEST_DATABASE ?? 'sqlite'})`, () => {
  let openai: FakeOpenAiServer;
  let eleven: FakeElevenLabsServer;
  /** Synthesis may take its time (festival in the fakes, alignment here). */
  let t: TestServices;
  /** The same database, a 1 s synthesis deadline: for providers that never answer. */
  let quick: TestServices;
  let org: TestOrg;
  let scratch: string;
  let video: { id: string };

  before(async () => {
    openai = await new FakeOpenAiServer({ keys: [SERVER_KEY, ORG_KEY] }).start();
    eleven = await new FakeElevenLabsServer({ keys: [ELEVEN_KEY, ORG_KEY] }).start();
    t = await createTestServices({
      env: {
        LIPSYNC_ALLOW_PRIVATE_URLS: '1',
        LIPSYNC_OPENAI_TTS_URL: openai.url,
        LIPSYNC_OPENAI_TTS_API_KEY: SERVER_KEY,
        LIPSYNC_OPENAI_TTS_MODEL: OPENAI_MODEL,
        LIPSYNC_ELEVENLABS_URL: eleven.url,
        LIPSYNC_ELEVENLABS_API_KEY: ELEVEN_KEY,
        LIPSYNC_ELEVENLABS_MODEL: ELEVEN_MODEL,
        LIPSYNC_TTS_TIMEOUT_SECONDS: '120',
        LIPSYNC_JOB_MAX_ATTEMPTS: '1',
      },
    });
    quick = await createTestServices({ shareDatabaseWith: t, env: { LIPSYNC_TTS_TIMEOUT_SECONDS: '1' } });
    org = await createOrgWithKey(t.services, { flags: ['tts_async'] });
    scratch = await mkdtemp(join(tmpdir(), 'speech-providers-api-'));
    video = await uploadAsset(org, fixture('media/face_1.mp4'));
  });
  after(async () => {
    await quick?.cleanup();
    await t?.cleanup();
    await openai?.close();
    await eleven?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
  });
  afterEach(() => {
    openai.reset();
    eleven.reset();
  });

  async function call(
    who: TestOrg | TestKey,
    method: string,
    url: string,
    payload?: unknown,
    headers: Record<string, string> = {},
    via: TestServices = t,
  ): Promise<Res> {
    const key = 'owner' in who ? who.owner : who;
    const res = await via.app.inject({
      method: method as 'GET',
      url,
      headers: { ...key.headers, ...headers },
      payload: payload as object,
    });
    assertNoSecrets(res.body);
    return res as unknown as Res;
  }

  const uploadAsset = (who: TestOrg, path: string): Promise<{ id: string; url: string }> =>
    uploadAssetFile(t.app, who.owner.headers, path);

  /** How many assets and generations (any state) the organization has. */
  async function counts(who: TestOrg): Promise<{ assets: number; generations: number }> {
    const a = await call(who, 'GET', '/v2/assets?limit=100');
    const g = await call(who, 'GET', '/v2/generations?limit=100');
    assert.equal(a.statusCode, 200, a.body);
    assert.equal(g.statusCode, 200, g.body);
    return { assets: a.json().totalCount, generations: g.json().length };
  }

  const textInput = (name: string, voiceId: string, script = SCRIPT, videoId = video.id) => ({
    model: 'lipsync-2',
    input: [
      { type: 'video', assetId: videoId },
      { type: 'text', provider: { name, voiceId, script } },
    ],
  });

  async function timelineWords(who: TestOrg, assetId: string): Promise<string> {
    const tl = await call(who, 'GET', `/v2/assets/${assetId}/timeline`);
    assert.equal(tl.statusCode, 200, tl.body);
    return scriptWords(
      tl
        .json()
        .words.map((w: any) => w.text)
        .join(' '),
    );
  }

  test('POST /v2/tts through openai and elevenlabs with the server keys: the words, the requests as sent', async () => {
    const o = await call(org, 'POST', '/v2/tts', {
      script: SCRIPT,
      voiceId: 'nova',
      provider: 'openai',
      speed: 1.1,
    });
    assert.equal(o.statusCode, 200, o.body);
    const asset = (await call(org, 'GET', `/v2/assets/${o.json().id}`)).json();
    assert.equal(asset.inputType, 'TTS');
    assert.equal(asset.type, 'AUDIO');
    assert.equal(await timelineWords(org, o.json().id), scriptWords(SCRIPT));
    const [os] = ttsRequests(openai);
    assert.equal(ttsRequests(openai).length, 1);
    assert.equal(os.headers.authorization, `Bearer ${SERVER_KEY}`);
    assert.deepEqual(jsonBody(os), {
      model: OPENAI_MODEL,
      input: SCRIPT,
      voice: 'nova',
      response_format: 'wav',
      speed: 1.1,
    });

    const e = await call(org, 'POST', '/v2/tts', {
      script: SCRIPT,
      voiceId: RACHEL,
      provider: 'elevenlabs',
      stability: 0.3,
    });
    assert.equal(e.statusCode, 200, e.body);
    assert.ok(e.json().duration > 1.5, `duration ${e.json().duration}`);
    assert.equal(await timelineWords(org, e.json().id), scriptWords(SCRIPT));
    const [es] = ttsRequests(eleven);
    assert.equal(ttsRequests(eleven).length, 1);
    assert.equal(es.path, `/v1/text-to-speech/${RACHEL}/with-timestamps`);
    assert.equal(es.headers['xi-api-key'], ELEVEN_KEY);
    assert.deepEqual(jsonBody(es), {
      text: SCRIPT,
      model_id: ELEVEN_MODEL,
      voice_settings: { stability: 0.3, similarity_boost: 0.75 },
    });
  });

  for (const provider of ['openai', 'elevenlabs'] as const) {
    const voiceId = provider === 'openai' ? 'nova' : RACHEL;

    test(`${provider} failures through POST /v2/tts and text inputs of POST /v2/generate; nothing left behind`, async () => {
      const fake = provider === 'openai' ? openai : eleven;
      const start = await counts(org);
      for (const [mode, status, code] of FAILURES) {
        fake.setMode(mode);
        const tts = await call(org, 'POST', '/v2/tts', { script: SCRIPT, voiceId, provider });
        const b = assertError(tts, status, code);
        if (code === 'voice_not_found') assert.equal(b.field, 'voiceId');
        const gen = await call(org, 'POST', '/v2/generate', textInput(provider, voiceId));
        const g = assertError(gen, status, code);
        if (code === 'voice_not_found') assert.equal(g.field, 'input[1].provider.voiceId');
        // Each refusal came from the provider: both requests reached it.
        assert.equal(ttsRequests(fake).length, 2, `${mode}: ${ttsRequests(fake).length} synthesis requests`);
        fake.reset();
      }
      assert.deepEqual(await counts(org), start);

      // The same input once the provider answers: one generation and one TTS asset more.
      const ok = await call(org, 'POST', '/v2/generate', textInput(provider, voiceId));
      assert.equal(ok.statusCode, 201, ok.body);
      const item = ok.json().input.find((i: any) => i.type === 'text');
      assert.match(item.assetId, /^[0-9a-f-]{36}$/);
      assert.equal(await timelineWords(org, item.assetId), scriptWords(SCRIPT));
      assert.deepEqual(await counts(org), { assets: start.assets + 1, generations: start.generations + 1 });
      await t.services.generations.cancel(ok.json().id);
    });

    test(`${provider} never answers: 504 provider_service_unavailable with Retry-After, nothing left behind`, async () => {
      const fake = provider === 'openai' ? openai : eleven;
      const start = await counts(org);
      fake.setMode('hang');
      const tts = await call(org, 'POST', '/v2/tts', { script: SCRIPT, voiceId, provider }, {}, quick);
      assertError(tts, 504, 'provider_service_unavailable');
      // Without an Idempotency-Key the client may simply retry: the provider's timeout as is.
      const gen = await call(org, 'POST', '/v2/generate', textInput(provider, voiceId), {}, quick);
      assertError(gen, 504, 'provider_service_unavailable');
      assert.equal(ttsRequests(fake).length, 2);
      assert.deepEqual(await counts(org), start);
    });
  }

  test('a keyed generation whose provider hung: 503 IDEMPOTENCY_OUTCOME_UNKNOWN, the key is released, then replayed', async () => {
    const start = await counts(org);
    const body = textInput('elevenlabs', RACHEL, 'The quick brown fox jumps over the lazy dog.');
    const key = { 'idempotency-key': 'speech-hang-1' };
    eleven.setMode('hang');
    const first = await call(org, 'POST', '/v2/generate', body, key, quick);
    assertError(first, 503, 'IDEMPOTENCY_OUTCOME_UNKNOWN');
    assert.equal(first.json().generationId ?? null, null);
    assert.deepEqual(await counts(org), start);

    eleven.reset();
    const retry = await call(org, 'POST', '/v2/generate', body, key);
    assert.equal(retry.statusCode, 201, retry.body);
    assert.equal(retry.headers['idempotency-replayed'], undefined);
    assert.equal(ttsRequests(eleven).length, 1);
    const replay = await call(org, 'POST', '/v2/generate', body, key);
    assert.equal(replay.statusCode, 200, replay.body);
    assert.equal(replay.headers['idempotency-replayed'], 'true');
    assert.equal(replay.json().id, retry.json().id);
    assert.equal(ttsRequests(eleven).length, 1, 'a replay synthesizes nothing');
    assert.deepEqual(await counts(org), { assets: start.assets + 1, generations: start.generations + 1 });
    await t.services.generations.cancel(retry.json().id);
  });

  test("provider keys: list, roles, a rejected key is not stored, the organization's key is used, disconnect", async () => {
    const byo = await createOrgWithKey(t.services);
    const member = await createKey(t.services, byo.organization.id, { role: 'member' });
    const list = async () => {
      const res = await call(byo, 'GET', '/v2/organizations/provider-keys');
      assert.equal(res.statusCode, 200, res.body);
      return Object.fromEntries(res.json().map((c: any) => [c.provider, c.connected]));
    };
    assert.deepEqual(await list(), { openai: false, elevenlabs: false });

    assertError(
      await call(member, 'PUT', '/v2/organizations/provider-keys/elevenlabs', { apiKey: ORG_KEY }),
      403,
      'forbidden',
    );
    assert.equal(eleven.requests.length, 0, 'a member key does not even reach the provider');

    // The key is tried with the provider first; the provider quotes it in its refusal.
    const rejected = await call(byo, 'PUT', '/v2/organizations/provider-keys/elevenlabs', {
      apiKey: REJECTED_KEY,
    });
    assertError(rejected, 422, 'provider_api_key_invalid');
    assert.equal(eleven.requests.at(-1)?.headers['xi-api-key'], REJECTED_KEY);
    assert.deepEqual(await list(), { openai: false, elevenlabs: false });
    assert.equal(await t.services.speech.ownKey(byo.organization, 'elevenlabs'), null);

    const put = await call(byo, 'PUT', '/v2/organizations/provider-keys/elevenlabs', { apiKey: ORG_KEY });
    assert.equal(put.statusCode, 200, put.body);
    assert.deepEqual(put.json(), { provider: 'elevenlabs', connected: true });
    assert.deepEqual(await list(), { openai: false, elevenlabs: true });

    eleven.reset();
    const tts = await call(byo, 'POST', '/v2/tts', {
      script: SCRIPT,
      voiceId: RACHEL,
      provider: 'elevenlabs',
    });
    assert.equal(tts.statusCode, 200, tts.body);
    assert.equal(ttsRequests(eleven)[0].headers['xi-api-key'], ORG_KEY);
    const voices = await call(byo, 'GET', '/v2/voices?provider=elevenlabs');
    assert.equal(voices.statusCode, 200, voices.body);
    assert.equal(eleven.requests.at(-1)?.headers['xi-api-key'], ORG_KEY);
    // Other organizations still use the server's key.
    eleven.reset();
    assert.equal(
      (
        await call(org, 'POST', '/v2/tts', {
          script: 'Hello again.',
          voiceId: RACHEL,
          provider: 'elevenlabs',
        })
      ).statusCode,
      200,
    );
    assert.equal(ttsRequests(eleven)[0].headers['xi-api-key'], ELEVEN_KEY);

    // The organization's own key is rejected later: theirs to fix (422), unlike the server's (503).
    eleven.reset();
    eleven.setMode('invalid_key');
    const before = await counts(byo);
    const own = await call(byo, 'POST', '/v2/tts', {
      script: SCRIPT,
      voiceId: RACHEL,
      provider: 'elevenlabs',
    });
    assertError(own, 422, 'provider_api_key_invalid');
    const byoVideo = await uploadAsset(byo, fixture('media/face_1.mp4'));
    const before2 = await counts(byo);
    const gen = await call(byo, 'POST', '/v2/generate', textInput('elevenlabs', RACHEL, SCRIPT, byoVideo.id));
    assertError(gen, 422, 'provider_api_key_invalid');
    assert.deepEqual(await counts(byo), before2);
    assert.equal(before.assets + 1, before2.assets);
    const server = await call(org, 'POST', '/v2/tts', {
      script: SCRIPT,
      voiceId: RACHEL,
      provider: 'elevenlabs',
    });
    assertError(server, 503, 'provider_service_unavailable');
    assert.deepEqual(
      eleven.requests.map((r) => r.headers['xi-api-key']),
      [ORG_KEY, ORG_KEY, ELEVEN_KEY],
    );
    eleven.reset();

    assertError(await call(member, 'DELETE', '/v2/organizations/provider-keys/elevenlabs'), 403, 'forbidden');
    const del = await call(byo, 'DELETE', '/v2/organizations/provider-keys/elevenlabs');
    assert.equal(del.statusCode, 200, del.body);
    assert.deepEqual(del.json(), { provider: 'elevenlabs', connected: false });
    assert.deepEqual(await list(), { openai: false, elevenlabs: false });
    const again = await call(byo, 'POST', '/v2/tts', {
      script: 'Hello again.',
      voiceId: RACHEL,
      provider: 'elevenlabs',
    });
    assert.equal(again.statusCode, 200, again.body);
    assert.equal(ttsRequests(eleven)[0].headers['xi-api-key'], ELEVEN_KEY);
  });

  test('GET /v2/voices: the ElevenLabs voices, the others during its outage, 503 when asked for it alone', async () => {
    const el = await call(org, 'GET', '/v2/voices?provider=elevenlabs');
    assert.equal(el.statusCode, 200, el.body);
    const rachel = el.json().find((v: any) => v.id === RACHEL);
    assert.deepEqual(
      { ...rachel, labels: undefined },
      {
        id: RACHEL,
        name: 'Rachel',
        provider: 'elevenlabs',
        voiceId: RACHEL,
        type: 'builtin',
        labels: undefined,
      },
    );
    assert.equal(rachel.labels.category, 'premade');
    assert.ok(el.json().every((v: any) => v.provider === 'elevenlabs'));
    assert.equal(eleven.requests.at(-1)?.path, '/v1/voices');
    assert.equal(eleven.requests.at(-1)?.headers['xi-api-key'], ELEVEN_KEY);

    eleven.setMode('overloaded');
    const all = await call(org, 'GET', '/v2/voices');
    assert.equal(all.statusCode, 200, all.body);
    const providers = new Set(all.json().map((v: any) => v.provider));
    assert.ok(all.json().some((v: any) => v.id === 'slt-hts' && v.provider === 'local'));
    assert.ok(providers.has('openai'));
    assert.ok(!providers.has('elevenlabs'));
    assert.ok(
      eleven.requests.some((r) => r.path === '/v1/voices'),
      'ElevenLabs was asked',
    );
    assertError(
      await call(org, 'GET', '/v2/voices?provider=elevenlabs'),
      503,
      'provider_service_unavailable',
    );
    eleven.setMode('server_error');
    assertError(
      await call(org, 'GET', '/v2/voices?provider=elevenlabs'),
      503,
      'provider_service_unavailable',
    );
  });

  test('ElevenLabs clone: the sample goes to ElevenLabs, speech in the clone, deleted there too; openai cannot clone', async () => {
    const sample = await uploadAsset(org, fixture('media/latentsync_demo1.wav'));
    const res = await call(org, 'POST', '/v2/voices', {
      name: 'Eleven demo',
      assetId: sample.id,
      provider: 'elevenlabs',
    });
    assert.equal(res.statusCode, 201, res.body);
    const voice = res.json();
    assert.equal(voice.provider, 'elevenlabs');
    assert.equal(voice.type, 'cloned');
    assert.equal(voice.restriction, undefined);
    assert.equal(eleven.clones.length, 1);
    const [made] = eleven.clones;
    assert.equal(made.name, 'Eleven demo');
    const add = eleven.requests.find((r) => r.path === '/v1/voices/add');
    assert.equal(add?.headers['xi-api-key'], ELEVEN_KEY);
    const providerVoiceId = eleven.voices.find((v) => v.category === 'cloned')?.voice_id;
    assert.ok(providerVoiceId);
    assert.equal(voice.voiceId, providerVoiceId);
    // The speech of the sample (9.6 s), as a WAV.
    const samplePath = join(scratch, 'received.wav');
    await writeFile(samplePath, made.sample);
    const probe = await probeMedia(samplePath);
    assert.equal(probe.format, 'wav');
    assert.ok(Math.abs((probe.durationSeconds ?? 0) - 9.6) < 0.1, `${probe.durationSeconds} s`);

    const listed = (await call(org, 'GET', '/v2/voices?provider=elevenlabs')).json();
    assert.ok(listed.some((v: any) => v.id === voice.id && v.type === 'cloned'));

    eleven.reset();
    const tts = await call(org, 'POST', '/v2/tts', { script: SCRIPT, voiceId: voice.id });
    assert.equal(tts.statusCode, 200, tts.body);
    assert.equal(ttsRequests(eleven).length, 1);
    assert.equal(ttsRequests(eleven)[0].path, `/v1/text-to-speech/${providerVoiceId}/with-timestamps`);
    assert.equal(await timelineWords(org, tts.json().id), scriptWords(SCRIPT));

    const del = await call(org, 'DELETE', `/v2/voices/${voice.id}`);
    assert.equal(del.statusCode, 200, del.body);
    assert.equal(del.json(), true);
    assert.ok(
      eleven.requests.some((r) => r.method === 'DELETE' && r.path === `/v1/voices/${providerVoiceId}`),
    );
    assert.ok(!eleven.voices.some((v) => v.voice_id === providerVoiceId));
    assertError(
      await call(org, 'POST', '/v2/tts', { script: SCRIPT, voiceId: voice.id }),
      422,
      'voice_not_found',
    );

    const before = eleven.requests.length;
    const oa = await call(org, 'POST', '/v2/voices', {
      name: 'Open demo',
      assetId: sample.id,
      provider: 'openai',
    });
    assert.equal(assertError(oa, 422, 'voice_clone_unsupported').field, 'provider');
    assert.equal(openai.requests.length, 0);
    assert.equal(eleven.requests.length, before);
  });

  test('an ElevenLabs clone that the provider wants verified is refused until the operator verifies it', async () => {
    const verifying = await new FakeElevenLabsServer({
      keys: [ELEVEN_KEY],
      requireVerification: true,
    }).start();
    const strict = await createTestServices({
      shareDatabaseWith: t,
      env: { LIPSYNC_ELEVENLABS_URL: verifying.url },
    });
    try {
      const sample = await uploadAsset(org, fixture('media/latentsync_demo1.wav'));
      const res = await call(
        org,
        'POST',
        '/v2/voices',
        { name: 'Needs consent', assetId: sample.id, provider: 'elevenlabs' },
        {},
        strict,
      );
      assert.equal(res.statusCode, 201, res.body);
      const voice = res.json();
      assert.equal(voice.restriction?.code, 'voice_verification_required');
      assert.equal(verifying.clones.length, 1);
      const listed = (await call(org, 'GET', '/v2/voices?provider=elevenlabs', undefined, {}, strict)).json();
      assert.equal(
        listed.find((v: any) => v.id === voice.id)?.restriction?.code,
        'voice_verification_required',
      );
      const refused = await call(org, 'POST', '/v2/tts', { script: SCRIPT, voiceId: voice.id }, {}, strict);
      assert.equal(assertError(refused, 422, 'voice_verification_required').field, 'voiceId');
      const gen = await call(org, 'POST', '/v2/generate', textInput('elevenlabs', voice.id), {}, strict);
      assertError(gen, 422, 'voice_verification_required');
      assert.equal(ttsRequests(verifying).length, 0);

      assert.equal(await strict.services.voices.verify(voice.id), true);
      const ok = await call(org, 'POST', '/v2/tts', { script: SCRIPT, voiceId: voice.id }, {}, strict);
      assert.equal(ok.statusCode, 200, ok.body);
      assert.equal(ttsRequests(verifying)[0].path, `/v1/text-to-speech/${voice.voiceId}/with-timestamps`);
      const view = (await call(org, 'GET', `/v2/voices/${voice.id}`, undefined, {}, strict)).json();
      assert.equal(view.restriction, undefined);
      assert.equal(
        (await call(org, 'DELETE', `/v2/voices/${voice.id}`, undefined, {}, strict)).statusCode,
        200,
      );
      assert.equal(verifying.voices.length, 1, 'only the premade voice is left');
    } finally {
      await strict.cleanup();
      await verifying.close();
    }
  });

  test('an asynchronous TTS job whose provider fails ends FAILED with provider_service_unavailable', async () => {
    const start = await counts(org);
    eleven.setMode('server_error');
    const created = await call(org, 'POST', '/v2/tts/jobs', {
      script: SCRIPT,
      voiceId: RACHEL,
      provider: 'elevenlabs',
    });
    assert.equal(created.statusCode, 202, created.body);
    const id = created.json().id;
    const bg = startBackground(t.services, { kinds: ['tts'] });
    let view: any;
    try {
      for (;;) {
        const res = await call(org, 'GET', `/v2/tts/jobs/${id}`);
        assert.equal(res.statusCode, 200, res.body);
        view = res.json();
        if (view.status === 'SUCCESS' || view.status === 'FAILED') break;
        await t.services.bus.waitForChange(id, 500);
      }
    } finally {
      await bg.stop();
    }
    assert.equal(view.status, 'FAILED', JSON.stringify(view));
    assert.equal(view.error.code, 'provider_service_unavailable');
    assert.doesNotMatch(JSON.stringify(view), PROVIDER_TEXT);
    assert.doesNotMatch(JSON.stringify(view), FILE_PATH);
    assert.equal(view.url, null);
    assert.equal(view.assetId, null);
    // LIPSYNC_JOB_MAX_ATTEMPTS=1: one try.
    assert.equal(ttsRequests(eleven).length, 1);
    assert.equal(ttsRequests(eleven)[0].headers['xi-api-key'], ELEVEN_KEY);
    assert.deepEqual(await counts(org), start);
  });
});
