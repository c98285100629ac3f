// POST /v2/generate through inject on a real database, real ffprobe and a real local media server:
// JSON with asset ids and with URLs, multipart files, 400s with `field`, and the submit-time 422s.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createOrgWithKey, createTestServices, type TestOrg, type TestServices } from '../helpers/index.js';
import { startBackground, type Background } from '../../src/app/runtime.js';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  AUDIO_SHORT_SECONDS,
  VIDEO_SECONDS,
  fetchSigned,
  makeTestMedia,
  probeFile,
  postGenerate,
  postGenerateForm,
  startMediaServer,
  uploadAsset,
  waitTerminal,
  type MediaServer,
  type TestMedia,
  LIFECYCLE_ENGINE_ENV,
} from './generations-support.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';

describe(`create generation (${DB})`, { timeout: 240_000 }, () => {
  let t: TestServices;
  /** Same database, but LIPSYNC_ALLOW_PRIVATE_URLS off (the default). */
  let guarded: TestServices;
  let bg: Background;
  let m: TestMedia;
  let srv: MediaServer;
  let org: TestOrg;
  let other: TestOrg;
  let videoAsset: string;
  let audioAsset: string;

  before(async () => {
    [t, m, srv] = await Promise.all([
      createTestServices({
        env: {
          ...LIFECYCLE_ENGINE_ENV,
          LIPSYNC_RATE_LIMIT_ENABLED: 'false',
          LIPSYNC_ALLOW_PRIVATE_URLS: '1',
        },
      }),
      makeTestMedia(),
      startMediaServer(),
    ]);
    guarded = await createTestServices({
      shareDatabaseWith: t,
      env: { ...LIFECYCLE_ENGINE_ENV, LIPSYNC_RATE_LIMIT_ENABLED: 'false', LIPSYNC_ALLOW_PRIVATE_URLS: '0' },
    });
    org = await createOrgWithKey(t.services, { plan: 'enterprise' });
    other = await createOrgWithKey(t.services, { plan: 'enterprise' });
    videoAsset = await uploadAsset(t.app, org.owner.headers, m.video);
    audioAsset = await uploadAsset(t.app, org.owner.headers, m.audioShort);
    bg = startBackground(t.services);
  });
  after(async () => {
    await bg?.stop();
    await guarded?.cleanup();
    await t?.cleanup();
    await srv?.close();
    await m?.cleanup();
  });

  const countGenerations = async (organizationId: string) =>
    Number(
      (
        await t.services.store.db.kysely
          .selectFrom('generations')
          .select((eb) => eb.fn.countAll().as('n'))
          .where('organization_id', '=', organizationId)
          .executeTakeFirstOrThrow()
      ).n,
    );

  function assertError(
    res: { statusCode: number; body: string },
    status: number,
    errorCode: string,
    field?: string,
  ) {
    assert.equal(res.statusCode, status, res.body);
    const b = JSON.parse(res.body) as Record<string, unknown>;
    assert.equal(b.statusCode, status);
    assert.equal(b.errorCode, errorCode, res.body);
    assert.equal(typeof b.message, 'string');
    if (field !== undefined) assert.equal(b.field, field, res.body);
    return b;
  }

  test('JSON with asset ids: 201 PENDING, then the worker completes it', async () => {
    const res = await postGenerate(t.app, org.owner.headers, {
      model: 'lipsync-2',
      input: [
        { type: 'video', assetId: videoAsset },
        { type: 'audio', assetId: audioAsset },
      ],
      options: { sync_mode: 'cut_off' },
      outputFileName: 'hello clip',
    });
    assert.equal(res.statusCode, 201, res.body);
    const g = res.json();
    assert.match(g.id, /^[0-9a-f-]{36}$/);
    assert.equal(g.status, 'PENDING');
    assert.equal(g.model, 'lipsync-2');
    assert.deepEqual(g.input, [
      { type: 'video', assetId: videoAsset },
      { type: 'audio', assetId: audioAsset },
    ]);
    assert.equal(g.options.sync_mode, 'cut_off');
    assert.equal(g.outputUrl, null);
    assert.equal(g.outputDuration, null);
    assert.equal(g.error, null);
    assert.equal(g.webhookUrl, null);
    assert.ok(!Number.isNaN(Date.parse(g.createdAt)));
    assert.equal(res.headers['idempotency-replayed'], undefined);

    const done = await waitTerminal(t.app, org.owner.headers, g.id);
    assert.equal(done.status, 'COMPLETED', JSON.stringify(done));
    // cut_off: the shorter of audio and video
    assert.ok(
      Math.abs(done.outputDuration - Math.min(AUDIO_SHORT_SECONDS, VIDEO_SECONDS)) < 0.1,
      String(done.outputDuration),
    );
    const file = await fetchSigned(t.app, done.outputUrl);
    assert.equal(file.statusCode, 200);
    assert.ok(file.rawPayload.length > 1000);
    assert.equal(file.rawPayload.subarray(4, 8).toString('latin1'), 'ftyp');
  });

  test('JSON with URL inputs: each URL is fetched once, at submit, and the job completes', async () => {
    const v = srv.route('/u1/face.mp4', { file: m.video });
    const a = srv.route('/u1/voice.wav', { file: m.audioLong });
    const res = await postGenerate(t.app, org.owner.headers, {
      model: 'lipsync-1.9.0-beta',
      input: [
        { type: 'video', url: v },
        { type: 'audio', url: a },
      ],
      options: { sync_mode: 'silence' },
    });
    assert.equal(res.statusCode, 201, res.body);
    const g = res.json();
    assert.deepEqual(g.input, [
      { type: 'video', url: v },
      { type: 'audio', url: a },
    ]);
    assert.equal(srv.hits.get('/u1/face.mp4'), 1);
    assert.equal(srv.hits.get('/u1/voice.wav'), 1);
    const done = await waitTerminal(t.app, org.owner.headers, g.id);
    assert.equal(done.status, 'COMPLETED', JSON.stringify(done));
    // silence: the video's length
    assert.ok(Math.abs(done.outputDuration - VIDEO_SECONDS) < 0.1, String(done.outputDuration));
    assert.equal(srv.hits.get('/u1/face.mp4'), 1, 'the job must not download the URL again');
    assert.equal(srv.hits.get('/u1/voice.wav'), 1);
  });

  test('without LIPSYNC_ALLOW_PRIVATE_URLS a 127.0.0.1 URL is 422 generation_input_video_inaccessible', async () => {
    const v = srv.route('/private/face.mp4', { file: m.video });
    const before = await countGenerations(org.organization.id);
    const res = await postGenerate(guarded.app, org.owner.headers, {
      model: 'lipsync-2',
      input: [
        { type: 'video', url: v },
        { type: 'audio', assetId: audioAsset },
      ],
    });
    const b = assertError(res, 422, 'generation_input_video_inaccessible', 'input[0].url');
    assert.match(String(b.message), /non-public|address/);
    assert.equal(srv.hits.get('/private/face.mp4'), undefined, 'the guard refuses before connecting');
    assert.equal(await countGenerations(org.organization.id), before);
  });

  test('an unreachable or non-media URL is 422 generation_input_video_inaccessible naming the input', async () => {
    const missing = `${srv.base}/nothing-here.mp4`;
    const notMedia = srv.route('/text.mp4', { file: new URL(import.meta.url).pathname });
    const failing = srv.route('/boom.wav', { status: 500 });
    for (const [input, field] of [
      [
        [
          { type: 'video', url: missing },
          { type: 'audio', assetId: audioAsset },
        ],
        'input[0].url',
      ],
      [
        [
          { type: 'video', url: notMedia },
          { type: 'audio', assetId: audioAsset },
        ],
        'input[0].url',
      ],
      [
        [
          { type: 'video', assetId: videoAsset },
          { type: 'audio', url: failing },
        ],
        'input[1].url',
      ],
    ] as const) {
      assertError(
        await postGenerate(t.app, org.owner.headers, { model: 'lipsync-2', input }),
        422,
        'generation_input_video_inaccessible',
        field,
      );
    }
    // an audio file where the video belongs
    assertError(
      await postGenerate(t.app, org.owner.headers, {
        model: 'lipsync-2',
        input: [
          { type: 'video', assetId: audioAsset },
          { type: 'audio', assetId: audioAsset },
        ],
      }),
      422,
      'generation_input_video_inaccessible',
      'input[0]',
    );
  });

  test('multipart: video and audio files become assets of the organization', async () => {
    const res = await postGenerateForm(t.app, org.owner.headers, [
      { name: 'model', value: 'lipsync-2' },
      { name: 'options', value: JSON.stringify({ sync_mode: 'loop' }) },
      { name: 'video', file: m.video, filename: 'my-face.mp4', type: 'video/mp4' },
      { name: 'audio', file: m.audioLong, filename: 'my-voice.wav', type: 'audio/wav' },
    ]);
    assert.equal(res.statusCode, 201, res.body);
    const g = res.json();
    assert.equal(g.input.length, 2);
    const [vi, ai] = g.input;
    assert.equal(vi.type, 'video');
    assert.equal(ai.type, 'audio');
    assert.equal(vi.url, undefined);
    for (const [item, name, type] of [
      [vi, 'my-face.mp4', 'VIDEO'],
      [ai, 'my-voice.wav', 'AUDIO'],
    ]) {
      const asset = await t.app.inject({
        method: 'GET',
        url: `/v2/assets/${item.assetId}`,
        headers: org.owner.headers,
      });
      assert.equal(asset.statusCode, 200, asset.body);
      assert.equal(asset.json().name, name);
      assert.equal(asset.json().type, type);
      assert.equal(asset.json().organizationId, org.organization.id);
      const foreign = await t.app.inject({
        method: 'GET',
        url: `/v2/assets/${item.assetId}`,
        headers: other.owner.headers,
      });
      assert.equal(foreign.statusCode, 404);
    }
    const done = await waitTerminal(t.app, org.owner.headers, g.id);
    assert.equal(done.status, 'COMPLETED', JSON.stringify(done));
    assert.ok(Math.abs(done.outputDuration - 3) < 0.1, String(done.outputDuration)); // loop: the audio's length
  });

  test('multipart: a file replaces the input item of its type; URL items of other types stay', async () => {
    const a = srv.route('/mixed/voice.wav', { file: m.audioShort });
    const res = await postGenerateForm(t.app, org.owner.headers, [
      { name: 'model', value: 'lipsync-2' },
      {
        name: 'input',
        value: JSON.stringify([
          { type: 'video', url: `${srv.base}/would-404.mp4` },
          { type: 'audio', url: a },
        ]),
      },
      { name: 'video', file: m.video },
    ]);
    assert.equal(res.statusCode, 201, res.body);
    const g = res.json();
    const video = g.input.find((i: { type: string }) => i.type === 'video');
    const audio = g.input.find((i: { type: string }) => i.type === 'audio');
    assert.equal(g.input.length, 2);
    assert.match(video.assetId, /^[0-9a-f-]{36}$/);
    assert.equal(video.url, undefined);
    assert.equal(audio.url, a);
    assert.equal(srv.hits.get('/would-404.mp4'), undefined, 'the replaced URL is never fetched');
    assert.equal((await waitTerminal(t.app, org.owner.headers, g.id)).status, 'COMPLETED');
  });

  test('multipart: sync-3 with an image file', async () => {
    const res = await postGenerateForm(t.app, org.owner.headers, [
      { name: 'model', value: 'sync-3' },
      { name: 'image', file: m.image },
      { name: 'audio', file: m.audioShort },
    ]);
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(
      res.json().input.map((i: { type: string }) => i.type),
      ['image', 'audio'],
    );
    const done = await waitTerminal(t.app, org.owner.headers, res.json().id);
    assert.equal(done.status, 'COMPLETED', JSON.stringify(done));
    assert.ok(Math.abs(done.outputDuration - AUDIO_SHORT_SECONDS) < 0.1);
  });

  test('400s name the field', async () => {
    const video = { type: 'video', assetId: videoAsset };
    const audio = { type: 'audio', assetId: audioAsset };
    const before = await countGenerations(org.organization.id);
    const cases: [unknown, string, string][] = [
      [{ input: [video, audio] }, 'invalid_request', 'model'],
      [{ model: 'lipsync-9', input: [video, audio] }, 'unsupported_model', 'model'],
      [
        { model: 'lipsync-2', input: [{ type: 'image', assetId: videoAsset }, audio] },
        'unsupported_model',
        'model',
      ],
      [{ model: 'lipsync-2', input: [video] }, 'invalid_request', 'input'],
      [
        { model: 'lipsync-2', input: [{ ...video, url: 'https://x.example/a.mp4' }, audio] },
        'invalid_request',
        'input[0]',
      ],
      [
        { model: 'lipsync-2', input: [video, { type: 'audio', url: 'ftp://x.example/a.wav' }] },
        'invalid_request',
        'input[1].url',
      ],
      [
        { model: 'lipsync-2', input: [video, audio], options: { speedup: 7 } },
        'invalid_request',
        'options.speedup',
      ],
      [
        { model: 'lipsync-2', input: [video, audio], options: { sync_mode: 'stretch' } },
        'invalid_request',
        'options.sync_mode',
      ],
      [
        { model: 'lipsync-2', input: [video, audio], options: { temperature: 2 } },
        'invalid_request',
        'options.temperature',
      ],
      [
        { model: 'lipsync-2', input: [video, audio], options: { output_format: 'avi' } },
        'invalid_request',
        'options.output_format',
      ],
      [
        { model: 'lipsync-2', input: [video, audio], options: { pads: [1, 2] } },
        'invalid_request',
        'options.pads',
      ],
      [
        { model: 'lipsync-2', input: [video, audio], options: { output_resolution: [5, 5] } },
        'invalid_request',
        'options.output_resolution[0]',
      ],
      [
        { model: 'lipsync-2', input: [video, audio], webhookUrl: 'mailto:x@example.com' },
        'invalid_request',
        'webhookUrl',
      ],
      [
        { model: 'lipsync-2', input: [video, audio], outputFileName: '../up.mp4' },
        'invalid_request',
        'outputFileName',
      ],
    ];
    for (const [body, code, field] of cases) {
      assertError(await postGenerate(t.app, org.owner.headers, body), 400, code, field);
    }
    // multipart: a nested field that is not JSON, and a second file of one kind
    assertError(
      await postGenerateForm(t.app, org.owner.headers, [
        { name: 'model', value: 'lipsync-2' },
        { name: 'options', value: '{sync_mode: loop' },
        { name: 'video', file: m.video },
        { name: 'audio', file: m.audioShort },
      ]),
      400,
      'invalid_request',
      'options',
    );
    assertError(
      await postGenerateForm(t.app, org.owner.headers, [
        { name: 'model', value: 'lipsync-2' },
        { name: 'video', file: m.video },
        { name: 'video', file: m.video },
        { name: 'audio', file: m.audioShort },
      ]),
      400,
      'invalid_request',
      'video',
    );
    assert.equal(await countGenerations(org.organization.id), before, 'no generation for a refused request');
  });

  test('4xxs: text input without a voice, segments out of range, project, assets', async () => {
    const video = { type: 'video', assetId: videoAsset };
    const audio = { type: 'audio', assetId: audioAsset };
    const before = await countGenerations(org.organization.id);
    assertError(
      await postGenerate(t.app, org.owner.headers, {
        model: 'lipsync-2',
        input: [video, { type: 'text', provider: { script: 'hi' } }],
      }),
      400,
      'invalid_request',
      'input[1].provider.voiceId',
    );
    // the video lasts 2 s: a segment ending at 5 s cannot be placed
    assertError(
      await postGenerate(t.app, org.owner.headers, {
        model: 'lipsync-2',
        input: [video, { ...audio, refId: 'a' }],
        segments: [{ startTime: 1, endTime: 5, audioInput: { refId: 'a' } }],
      }),
      422,
      'generation_segments_invalid',
    );
    for (const projectId of [randomUUID(), 'not-a-uuid']) {
      assertError(
        await postGenerate(t.app, org.owner.headers, {
          model: 'lipsync-2',
          input: [video, audio],
          projectId,
        }),
        422,
        'project_not_found',
        'projectId',
      );
    }
    // another organization's project is not found either
    const foreignProject = await t.app.inject({
      method: 'POST',
      url: '/v2/projects',
      headers: { ...other.owner.headers, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'theirs' }),
    });
    assert.equal(foreignProject.statusCode, 201, foreignProject.body);
    assertError(
      await postGenerate(t.app, org.owner.headers, {
        model: 'lipsync-2',
        input: [video, audio],
        projectId: foreignProject.json().id,
      }),
      422,
      'project_not_found',
      'projectId',
    );
    // unknown asset, and an asset of another organization
    const theirs = await uploadAsset(t.app, other.owner.headers, m.audioShort);
    for (const [input, field] of [
      [[{ type: 'video', assetId: randomUUID() }, audio], 'input[0].assetId'],
      [[video, { type: 'audio', assetId: theirs }], 'input[1].assetId'],
      [[video, { type: 'audio', assetId: 'nope' }], 'input[1].assetId'],
    ] as const) {
      const b = assertError(
        await postGenerate(t.app, org.owner.headers, { model: 'lipsync-2', input }),
        422,
        'asset_not_found',
        field,
      );
      assert.ok(!String(b.message).includes(other.organization.id));
    }
    assert.equal(await countGenerations(org.organization.id), before);
    // the project of the organization itself is fine
    const mine = await t.app.inject({
      method: 'POST',
      url: '/v2/projects',
      headers: { ...org.owner.headers, 'content-type': 'application/json' },
      payload: JSON.stringify({ name: 'mine' }),
    });
    const ok = await postGenerate(t.app, org.owner.headers, {
      model: 'lipsync-2',
      input: [video, audio],
      projectId: mine.json().id,
    });
    assert.equal(ok.statusCode, 201, ok.body);
    assert.equal(ok.json().projectId, mine.json().id);
    await waitTerminal(t.app, org.owner.headers, ok.json().id);
  });

  test('free plan: a URL whose server declares a file over 100 MiB is 422 file_size_exceeds_plan_limit', async () => {
    const free = await createOrgWithKey(t.services, { plan: 'free' });
    const freeAudio = await uploadAsset(t.app, free.owner.headers, m.audioShort);
    const huge = srv.route('/huge.mp4', { claimLength: 101 * 1024 * 1024 });
    // The server declares the size and never sends the body: an answer at all is one made on the
    // declared size alone.
    const res = await postGenerate(t.app, free.owner.headers, {
      model: 'lipsync-2',
      input: [
        { type: 'video', url: huge },
        { type: 'audio', assetId: freeAudio },
      ],
    });
    const b = assertError(res, 422, 'file_size_exceeds_plan_limit', 'input[0].url');
    assert.match(String(b.message), /free plan/);
    assert.equal(await countGenerations(free.organization.id), 0);
    assert.equal(srv.hits.get('/huge.mp4'), 1);
  });

  test('free plan: an output over 60 s is 422 generation_plan_duration_exceeded; cut_off of the same inputs is fine', async () => {
    const free = await createOrgWithKey(t.services, { plan: 'free' });
    const v = await uploadAsset(t.app, free.owner.headers, m.video);
    const a61 = await uploadAsset(t.app, free.owner.headers, m.audio61);
    const input = [
      { type: 'video', assetId: v },
      { type: 'audio', assetId: a61 },
    ];
    for (const mode of ['loop', 'bounce', 'remap']) {
      const b = assertError(
        await postGenerate(t.app, free.owner.headers, {
          model: 'lipsync-2',
          input,
          options: { sync_mode: mode },
        }),
        422,
        'generation_plan_duration_exceeded',
      );
      assert.match(String(b.message), /61\.0 s.*60 s/);
    }
    assert.equal(await countGenerations(free.organization.id), 0);
    // the same inputs on a plan that allows 300 s
    const hobby = await createOrgWithKey(t.services, { plan: 'hobbyist' });
    const hv = await uploadAsset(t.app, hobby.owner.headers, m.video);
    const ha = await uploadAsset(t.app, hobby.owner.headers, m.audio61);
    const okLong = await postGenerate(t.app, hobby.owner.headers, {
      model: 'lipsync-2',
      input: [
        { type: 'video', assetId: hv },
        { type: 'audio', assetId: ha },
      ],
      options: { sync_mode: 'loop' },
    });
    assert.equal(okLong.statusCode, 201, okLong.body);
    // cut_off: output = the 2 s video
    const ok = await postGenerate(t.app, free.owner.headers, {
      model: 'lipsync-2',
      input,
      options: { sync_mode: 'cut_off' },
    });
    assert.equal(ok.statusCode, 201, ok.body);
    const done = await waitTerminal(t.app, free.owner.headers, ok.json().id);
    assert.equal(done.status, 'COMPLETED');
    assert.ok(Math.abs(done.outputDuration - VIDEO_SECONDS) < 0.1);
    await waitTerminal(t.app, hobby.owner.headers, okLong.json().id);
  });

  test('a preview: one second from atMs as the clip and a JPEG still, limited, priced and billed as that second', async () => {
    const input = [
      { type: 'video', assetId: videoAsset },
      { type: 'audio', assetId: await uploadAsset(t.app, org.owner.headers, m.audioLong) },
    ];
    // cut_off of the 2 s video and the 3 s recording: a 2 s output; 2000 ms is past its last frame.
    const late = await postGenerate(t.app, org.owner.headers, {
      model: 'lipsync-2',
      input,
      options: { preview: { atMs: 2000 } },
    });
    assertError(late, 400, 'generation_preview_out_of_range', 'options.preview.atMs');
    assertError(
      await postGenerate(t.app, org.owner.headers, {
        model: 'lipsync-2',
        input,
        options: { preview: { atMs: -1 } },
      }),
      400,
      'invalid_request',
    );
    const quote = await t.app.inject({
      method: 'POST',
      url: '/v2/analyze/cost',
      headers: { ...org.owner.headers, 'content-type': 'application/json' },
      payload: JSON.stringify({ model: 'lipsync-2', input, options: { preview: { atMs: 500 } } }),
    });
    assert.equal(quote.statusCode, 200, quote.body);
    assert.equal(quote.json()[0].estimatedFrameCount, 25, quote.body);

    const res = await postGenerate(t.app, org.owner.headers, {
      model: 'lipsync-2',
      input,
      options: { preview: { atMs: 500 } },
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(res.json().preview, { atMs: 500, stillUrl: null });
    const done = await waitTerminal(t.app, org.owner.headers, res.json().id);
    assert.equal(done.status, 'COMPLETED', JSON.stringify(done));
    assert.equal(done.options.preview.atMs, 500);
    assert.ok(Math.abs(done.outputDuration - 1) < 0.1, String(done.outputDuration));
    const usage = await t.services.store.db.kysely
      .selectFrom('usage_records')
      .selectAll()
      .where('generation_id', '=', done.id)
      .executeTakeFirstOrThrow();
    assert.ok(Math.abs(Number(usage.seconds) - 1) < 0.1, `billed ${usage.seconds} s`);

    const dir = await mkdtemp(join(tmpdir(), 'preview-test-'));
    try {
      const clip = join(dir, 'clip.mp4');
      const still = join(dir, 'still.jpg');
      await writeFile(clip, (await fetchSigned(t.app, done.outputUrl)).rawPayload);
      const stillRes = await fetchSigned(t.app, done.preview.stillUrl);
      assert.equal(stillRes.statusCode, 200);
      await writeFile(still, stillRes.rawPayload);
      const c = await probeFile(clip);
      assert.ok(Math.abs(c.duration - 1) < 0.1, `clip of ${c.duration} s`);
      assert.deepEqual([c.video?.width, c.video?.height], [256, 256]);
      const s = await probeFile(still);
      assert.equal(s.video?.codec, 'mjpeg');
      assert.deepEqual([s.video?.width, s.video?.height], [256, 256]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }

    // The plan's length limit counts the whole output a preview is taken from: its job still prepares
    // the whole soundtrack and hears the whole recording.
    const free = await createOrgWithKey(t.services, { plan: 'free' });
    const long = [
      { type: 'video', assetId: await uploadAsset(t.app, free.owner.headers, m.video) },
      { type: 'audio', assetId: await uploadAsset(t.app, free.owner.headers, m.audio61) },
    ];
    for (const options of [{ sync_mode: 'loop' }, { sync_mode: 'loop', preview: { atMs: 59_500 } }]) {
      const refused = await postGenerate(t.app, free.owner.headers, {
        model: 'lipsync-2',
        input: long,
        options,
      });
      assertError(refused, 422, 'generation_plan_duration_exceeded');
    }
  });
});
