// Issue 9 hardening of POST /v2/generate and DELETE /v2/generations/{id}, on a real database with real
// ffprobe and a local media server: the plan's work budget refuses before anything is fetched (frame
// size) or leaves nothing behind (pixel-frames); requests refused after their inputs were fetched or
// uploaded leave no blob and no asset; deleting a generation removes its outputs, its attempt files and
// the inputs it fetched; private webhook URLs are refused at submit; and no internal detail (paths,
// ffprobe, stack text) reaches a client, neither in a 422 nor in a failed job's message.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { promisify } from 'node:util';
import { createOrgWithKey, createTestServices, type TestOrg, type TestServices } from '../helpers/index.js';
import { startBackground, type Background } from '../../src/app/runtime.js';
import type { ResolvedMedia } from '../../src/pipeline/resolved-media.js';
import {
  fetchSigned,
  makeTestMedia,
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
const HD = 1920 * 1080;
const run = promisify(execFile);

describe(`generation hardening (${DB})`, { timeout: 300_000 }, () => {
  let t: TestServices;
  /** Same database and data folder, LIPSYNC_ALLOW_PRIVATE_URLS off (the default). */
  let guarded: TestServices;
  let m: TestMedia;
  let srv: MediaServer;
  let bg: Background | null = null;
  /** 40 s of tone: under the free plan's 60 s, over its pixel-frames at 1920x1080 and 60 fps. */
  let audio40: string;

  before(async () => {
    [t, m, srv] = await Promise.all([
      createTestServices({
        env: {
          ...LIFECYCLE_ENGINE_ENV,
          LIPSYNC_RATE_LIMIT_ENABLED: 'false',
          LIPSYNC_ALLOW_PRIVATE_URLS: 'true',
        },
      }),
      makeTestMedia(),
      startMediaServer(),
    ]);
    guarded = await createTestServices({
      shareDatabaseWith: t,
      env: {
        ...LIFECYCLE_ENGINE_ENV,
        LIPSYNC_RATE_LIMIT_ENABLED: 'false',
        LIPSYNC_ALLOW_PRIVATE_URLS: 'false',
      },
    });
    audio40 = join(m.dir, 'tone40.wav');
    await run('ffmpeg', [
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      'sine=frequency=330:sample_rate=8000',
      '-t',
      '40',
      '-ac',
      '1',
      audio40,
    ]);
  });
  after(async () => {
    await bg?.stop();
    await guarded?.cleanup();
    await t?.cleanup();
    await srv?.close();
    await m?.cleanup();
  });

  /** A route of its own for each use, so that its hit count belongs to one test. */
  const serve = (file: string, name: string) => {
    const path = `/${randomUUID()}/${name}`;
    return { path, url: srv.route(path, { file }) };
  };
  const inputBlobs = (orgId: string) => t.services.blobs.list(`inputs/${orgId}/`);
  const assetBlobs = (orgId: string) => t.services.blobs.list(`assets/${orgId}/`);
  const count = async (table: 'generations' | 'assets', orgId: string) =>
    Number(
      (
        await t.services.store.db.kysely
          .selectFrom(table)
          .select((eb) => eb.fn.countAll().as('n'))
          .where('organization_id', '=', orgId)
          .executeTakeFirstOrThrow()
      ).n,
    );
  const listAssets = async (who: TestOrg) => {
    const res = await t.app.inject({ method: 'GET', url: '/v2/assets', headers: who.owner.headers });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as { items: unknown[]; totalCount: number };
  };

  function assertError(
    res: { statusCode: number; body: string },
    status: number,
    errorCode: string,
    field?: string,
  ): Record<string, unknown> {
    assert.equal(res.statusCode, status, res.body);
    const b = JSON.parse(res.body) as Record<string, unknown>;
    assert.equal(b.statusCode, status);
    assert.equal(b.errorCode, errorCode, res.body);
    assert.equal(typeof b.message, 'string');
    if (field !== undefined) assert.equal(b.field, field, res.body);
    return b;
  }

  /** Nothing a client sees may name a file, a tool or carry stack text. */
  function assertNoInternals(text: string, what: string): void {
    const forbidden = [
      t.dataDir,
      tmpdir(),
      t.services.config.tempDir,
      m.dir,
      '/tmp',
      'ffprobe',
      'ffmpeg',
      'Error:',
      'ENOENT',
      'EACCES',
      '    at ',
      'node:internal',
      'probe-',
      'fetch-',
    ];
    for (const f of forbidden) assert.ok(!text.includes(f), `${what} contains ${JSON.stringify(f)}: ${text}`);
  }

  describe('the plan work budget', () => {
    test('free plan, output_resolution 7680x7680 at 120 fps: 422 maxOutputPixels, and nothing is fetched', async () => {
      const free = await createOrgWithKey(t.services, { plan: 'free' });
      const video = serve(m.video, 'face.mp4');
      const audio = serve(m.audioShort, 'short.wav');
      const b = assertError(
        await postGenerate(t.app, free.owner.headers, {
          model: 'lipsync-2',
          input: [
            { type: 'video', url: video.url },
            { type: 'audio', url: audio.url },
          ],
          options: { output_resolution: [7680, 7680], fps: 120 },
        }),
        422,
        'generation_plan_work_exceeded',
        'options.output_resolution',
      );
      assert.equal(b.limit, 'maxOutputPixels');
      assert.equal(b.allowed, HD);
      assert.equal(b.requested, 7680 * 7680);
      assert.match(String(b.message), /free plan/);
      assert.equal(srv.hits.get(video.path), undefined, 'the video URL was fetched');
      assert.equal(srv.hits.get(audio.path), undefined, 'the audio URL was fetched');
      assert.equal(await count('generations', free.organization.id), 0);
      assert.deepEqual(await inputBlobs(free.organization.id), []);
    });

    test('a preview moment past the end: 400, and no fetched input is left behind', async () => {
      const free = await createOrgWithKey(t.services, { plan: 'free' });
      const video = serve(m.video, 'face.mp4');
      const audio = serve(m.audioShort, 'short.wav');
      assertError(
        await postGenerate(t.app, free.owner.headers, {
          model: 'lipsync-2',
          input: [
            { type: 'video', url: video.url },
            { type: 'audio', url: audio.url },
          ],
          options: { preview: { atMs: 3_600_000 } },
        }),
        400,
        'generation_preview_out_of_range',
      );
      assert.equal(srv.hits.get(video.path), 1);
      assert.equal(srv.hits.get(audio.path), 1);
      assert.equal(await count('generations', free.organization.id), 0);
      assert.deepEqual(await inputBlobs(free.organization.id), []);
    });

    test('free plan, 1920x1080 at 60 fps for 40 s: 422 maxPixelFrames, and no fetched input is left behind', async () => {
      const free = await createOrgWithKey(t.services, { plan: 'free' });
      const video = serve(m.video, 'face.mp4');
      const audio = serve(audio40, 'tone40.wav');
      const b = assertError(
        await postGenerate(t.app, free.owner.headers, {
          model: 'lipsync-2',
          input: [
            { type: 'video', url: video.url },
            { type: 'audio', url: audio.url },
          ],
          options: { sync_mode: 'loop', output_resolution: [1920, 1080], fps: 60 },
        }),
        422,
        'generation_plan_work_exceeded',
      );
      assert.equal(b.limit, 'maxPixelFrames');
      assert.equal(b.allowed, HD * 30 * 60);
      assert.ok(Number(b.requested) > HD * 30 * 60, JSON.stringify(b));
      // the inputs had to be probed to know the length: fetched once each, then removed again
      assert.equal(srv.hits.get(video.path), 1);
      assert.equal(srv.hits.get(audio.path), 1);
      assert.equal(await count('generations', free.organization.id), 0);
      assert.deepEqual(await inputBlobs(free.organization.id), []);
      // the same inputs within the budget (30 fps: HD x 30 x 40 s) are admitted
      const ok = await postGenerate(t.app, free.owner.headers, {
        model: 'lipsync-2',
        input: [
          { type: 'video', url: video.url },
          { type: 'audio', url: audio.url },
        ],
        options: { sync_mode: 'loop', output_resolution: [1920, 1080], fps: 30 },
      });
      assert.equal(ok.statusCode, 201, ok.body);
      assert.equal((await inputBlobs(free.organization.id)).length, 2);
      await t.services.generations.cancel(ok.json().id as string);
    });
  });

  describe('no orphaned inputs', () => {
    test('10 URL requests refused after fetching (output over 60 s) leave no blob and no asset', async () => {
      const free = await createOrgWithKey(t.services, { plan: 'free' });
      const video = serve(m.video, 'face.mp4');
      const audio = serve(m.audio61, 'tone61.wav');
      const results = await Promise.all(
        Array.from({ length: 10 }, () =>
          postGenerate(t.app, free.owner.headers, {
            model: 'lipsync-2',
            input: [
              { type: 'video', url: video.url },
              { type: 'audio', url: audio.url },
            ],
            options: { sync_mode: 'loop' },
          }),
        ),
      );
      for (const res of results) assertError(res, 422, 'generation_plan_duration_exceeded');
      assert.equal(srv.hits.get(video.path), 10, 'every request fetched its video');
      assert.equal(srv.hits.get(audio.path), 10, 'every request fetched its audio');
      assert.deepEqual(await inputBlobs(free.organization.id), []);
      assert.equal(await count('assets', free.organization.id), 0);
      assert.equal(await count('generations', free.organization.id), 0);
    });

    test('10 simultaneous URL requests on the free plan: one admitted, nine 429, only its inputs are kept', async () => {
      const free = await createOrgWithKey(t.services, { plan: 'free' });
      const video = serve(m.video, 'face.mp4');
      const audio = serve(m.audioShort, 'short.wav');
      const results = await Promise.all(
        Array.from({ length: 10 }, () =>
          postGenerate(t.app, free.owner.headers, {
            model: 'lipsync-2',
            input: [
              { type: 'video', url: video.url },
              { type: 'audio', url: audio.url },
            ],
          }),
        ),
      );
      const admitted = results.filter((r) => r.statusCode === 201);
      assert.equal(admitted.length, 1, results.map((r) => `${r.statusCode} ${r.body}`).join('\n'));
      for (const r of results.filter((x) => x.statusCode !== 201))
        assertError(r, 429, 'concurrency_limit_reached');
      const id = admitted[0].json().id as string;
      const g = await t.services.store.generations.findAny(id);
      assert.ok(g);
      const kept = Object.values(g.resolvedInput)
        .map((x) => (x as Partial<ResolvedMedia> | null)?.blobKey)
        .filter((k): k is string => typeof k === 'string')
        .sort();
      assert.equal(kept.length, 2);
      assert.deepEqual(await inputBlobs(free.organization.id), kept);
      assert.equal(await count('assets', free.organization.id), 0);
      await t.services.generations.cancel(id);
    });

    test('a refused multipart request leaves no asset and no blob', async () => {
      const free = await createOrgWithKey(t.services, { plan: 'free' });
      // refused after the files were saved: the output would last 61 s
      assertError(
        await postGenerateForm(t.app, free.owner.headers, [
          { name: 'model', value: 'lipsync-2' },
          { name: 'options', value: JSON.stringify({ sync_mode: 'loop' }) },
          { name: 'video', file: m.video },
          { name: 'audio', file: m.audio61 },
        ]),
        422,
        'generation_plan_duration_exceeded',
      );
      // refused after the video file was saved: the audio URL cannot be fetched
      const failing = srv.route(`/${randomUUID()}/boom.wav`, { status: 500 });
      assertError(
        await postGenerateForm(t.app, free.owner.headers, [
          { name: 'model', value: 'lipsync-2' },
          { name: 'input', value: JSON.stringify([{ type: 'audio', url: failing }]) },
          { name: 'video', file: m.video },
        ]),
        422,
        'generation_input_video_inaccessible',
        'input[0].url', // the index in the input list the client sent
      );
      const page = await listAssets(free);
      assert.deepEqual(page.items, []);
      assert.equal(page.totalCount, 0);
      assert.equal(await count('assets', free.organization.id), 0);
      assert.deepEqual(await assetBlobs(free.organization.id), []);
      assert.deepEqual(await inputBlobs(free.organization.id), []);
      assert.equal(await count('generations', free.organization.id), 0);
    });
  });

  describe('private webhook URLs', () => {
    let org: TestOrg;
    let video: string;
    let audio: string;
    before(async () => {
      org = await createOrgWithKey(t.services, { plan: 'enterprise' });
      video = await uploadAsset(t.app, org.owner.headers, m.video);
      audio = await uploadAsset(t.app, org.owner.headers, m.audioShort);
    });
    const body = (webhookUrl: string) => ({
      model: 'lipsync-2',
      input: [
        { type: 'video', assetId: video },
        { type: 'audio', assetId: audio },
      ],
      webhookUrl,
    });

    test('without LIPSYNC_ALLOW_PRIVATE_URLS a loopback, private or metadata webhookUrl is 422 at submit', async () => {
      const before = await count('generations', org.organization.id);
      for (const url of [
        'http://127.0.0.1:9/hook',
        'http://127.0.0.1:8080/hook',
        'http://[::1]/x',
        'http://169.254.169.254/',
        'http://10.1.2.3/hook',
        'http://192.168.0.10/hook',
        'http://[::ffff:127.0.0.1]/hook',
      ]) {
        const b = assertError(
          await postGenerate(guarded.app, org.owner.headers, body(url)),
          422,
          'invalid_request',
          'webhookUrl',
        );
        assertNoInternals(JSON.stringify(b), `the answer for ${url}`);
        // The setting that allows it is named, except where it would not help (metadata; port 9 is
        // refused on every address).
        if (url.includes('169.254.169.254') || url.includes(':9/'))
          assert.doesNotMatch(String(b.suggestion), /LIPSYNC_ALLOW_PRIVATE_URLS/);
        else assert.match(String(b.suggestion), /LIPSYNC_ALLOW_PRIVATE_URLS=true/, url);
      }
      assert.equal(await count('generations', org.organization.id), before);
    });

    test('the cloud metadata address is refused even with LIPSYNC_ALLOW_PRIVATE_URLS', async () => {
      const before = await count('generations', org.organization.id);
      const b = assertError(
        await postGenerate(t.app, org.owner.headers, body('http://169.254.169.254/latest/meta-data/')),
        422,
        'invalid_request',
        'webhookUrl',
      );
      assert.doesNotMatch(String(b.suggestion), /LIPSYNC_ALLOW_PRIVATE_URLS/);
      assert.equal(await count('generations', org.organization.id), before);
    });

    test('a public-looking host that does not resolve now is accepted (its deliveries are retried)', async () => {
      const res = await postGenerate(guarded.app, org.owner.headers, body('https://hooks.example.invalid/x'));
      assert.equal(res.statusCode, 201, res.body);
      assert.equal(res.json().webhookUrl, 'https://hooks.example.invalid/x');
      await t.services.generations.cancel(res.json().id as string);
    });

    test("a webhook URL's credentials and query values are masked in every response", async () => {
      const url = 'https://hook-user:hook-pass@hooks.example.invalid/in?token=tok-secret';
      const shown = 'https://***:***@hooks.example.invalid/in?token=***';
      const res = await postGenerate(guarded.app, org.owner.headers, body(url));
      assert.equal(res.statusCode, 201, res.body);
      const id = res.json().id as string;
      assert.equal(res.json().webhookUrl, shown);
      const read = await guarded.app.inject({
        method: 'GET',
        url: `/v2/generate/${id}`,
        headers: org.owner.headers,
      });
      assert.equal(read.json().webhookUrl, shown);
      // Deliveries still go to the stored URL.
      assert.equal((await t.services.store.generations.findAny(id))!.webhookUrl, url);
      await t.services.generations.cancel(id);
      const log = await guarded.app.inject({
        method: 'GET',
        url: `/v2/generations/${id}/webhook-deliveries`,
        headers: org.owner.headers,
      });
      assert.equal(log.statusCode, 200, log.body);
      assert.ok(log.json().length >= 1, log.body);
      for (const d of log.json()) assert.equal(d.url, shown);
      assert.doesNotMatch(read.body + log.body, /hook-pass|tok-secret|hook-user/);
    });
  });

  describe('no internal detail reaches a client', () => {
    test('a URL that serves text instead of media: 422 without paths, ffprobe or stack text', async () => {
      const org = await createOrgWithKey(t.services, { plan: 'enterprise' });
      const audio = await uploadAsset(t.app, org.owner.headers, m.audioShort);
      const text = serve(new URL(import.meta.url).pathname, 'clip.mp4');
      const b = assertError(
        await postGenerate(t.app, org.owner.headers, {
          model: 'lipsync-2',
          input: [
            { type: 'video', url: text.url },
            { type: 'audio', assetId: audio },
          ],
        }),
        422,
        'generation_input_video_inaccessible',
        'input[0].url',
      );
      assert.equal(srv.hits.get(text.path), 1);
      assertNoInternals(JSON.stringify(b), 'the 422');
      // the same text as the audio input
      const textAudio = serve(new URL(import.meta.url).pathname, 'speech.wav');
      const video = await uploadAsset(t.app, org.owner.headers, m.video);
      const b2 = assertError(
        await postGenerate(t.app, org.owner.headers, {
          model: 'lipsync-2',
          input: [
            { type: 'video', assetId: video },
            { type: 'audio', url: textAudio.url },
          ],
        }),
        422,
        'generation_input_video_inaccessible',
        'input[1].url',
      );
      assertNoInternals(JSON.stringify(b2), 'the 422');
      assert.deepEqual(await inputBlobs(org.organization.id), []);
    });

    test('an asset whose file vanished from the store: 422 without internal paths', async () => {
      const org = await createOrgWithKey(t.services, { plan: 'enterprise' });
      const video = await uploadAsset(t.app, org.owner.headers, m.video);
      const audio = await uploadAsset(t.app, org.owner.headers, m.audioShort);
      const asset = await t.services.store.assets.find(org.organization.id, video);
      assert.ok(asset);
      await t.services.blobs.delete(asset.storageKey);
      const res = await postGenerate(t.app, org.owner.headers, {
        model: 'lipsync-2',
        input: [
          { type: 'video', assetId: video },
          { type: 'audio', assetId: audio },
        ],
      });
      assert.equal(res.statusCode, 422, res.body);
      const b = res.json() as Record<string, unknown>;
      assert.equal(typeof b.errorCode, 'string');
      assert.match(String(b.field), /^input\[0\]/);
      assertNoInternals(res.body, 'the 422');
      assert.equal(await count('generations', org.organization.id), 0);
    });
  });

  describe('with workers', () => {
    test('a job whose input vanished after admission FAILS with a message for users', async () => {
      const org = await createOrgWithKey(t.services, { plan: 'enterprise' });
      const video = await uploadAsset(t.app, org.owner.headers, m.video);
      const audio = await uploadAsset(t.app, org.owner.headers, m.audioShort);
      // admitted while no worker runs, then its input is removed behind the service's back
      const res = await postGenerate(t.app, org.owner.headers, {
        model: 'lipsync-2',
        input: [
          { type: 'video', assetId: video },
          { type: 'audio', assetId: audio },
        ],
      });
      assert.equal(res.statusCode, 201, res.body);
      const asset = await t.services.store.assets.find(org.organization.id, video);
      assert.ok(asset);
      await t.services.blobs.delete(asset.storageKey);
      bg = startBackground(t.services);
      const done = await waitTerminal(t.app, org.owner.headers, res.json().id as string, 120_000);
      assert.equal(done.status, 'FAILED', JSON.stringify(done));
      assert.equal(typeof done.error, 'string');
      assert.equal(typeof done.errorCode, 'string');
      assertNoInternals(JSON.stringify(done), 'the failed generation');
    });

    test('DELETE of a completed generation removes its outputs, attempt files and fetched inputs', async () => {
      bg ??= startBackground(t.services);
      const free = await createOrgWithKey(t.services, { plan: 'free' });
      const video = serve(m.video, 'face.mp4');
      const audio = serve(m.audioShort, 'short.wav');
      const res = await postGenerate(t.app, free.owner.headers, {
        model: 'lipsync-2',
        input: [
          { type: 'video', url: video.url },
          { type: 'audio', url: audio.url },
        ],
      });
      assert.equal(res.statusCode, 201, res.body);
      const id = res.json().id as string;
      const done = await waitTerminal(t.app, free.owner.headers, id, 120_000);
      assert.equal(done.status, 'COMPLETED', JSON.stringify(done));
      assert.equal(typeof done.outputUrl, 'string');

      const g = await t.services.store.generations.findAny(id);
      assert.ok(g?.outputKey);
      assert.ok(g.watermarkedKey, 'the free plan gets a watermarked derivative');
      const job = await t.services.store.jobs.findBySubject('generation', id);
      assert.ok(job);
      const jobFiles = await t.services.blobs.list(`jobs/${job.id}/`);
      assert.ok(jobFiles.includes(g.outputKey), JSON.stringify(jobFiles));
      assert.ok(jobFiles.includes(g.watermarkedKey), JSON.stringify(jobFiles));
      const fetched = Object.values(g.resolvedInput)
        .map((x) => x as Partial<ResolvedMedia> | null)
        .filter((x) => x?.source === 'url' && typeof x.blobKey === 'string')
        .map((x) => x?.blobKey as string);
      assert.equal(fetched.length, 2);
      for (const k of fetched) assert.equal(await t.services.blobs.exists(k), true);
      // what an earlier attempt of the job may have left (a worker killed mid-upload): its files too
      const stray = `jobs/${job.id}/${randomUUID()}/output.mp4`;
      await t.services.blobs.put(stray, Readable.from([Buffer.from('partial upload')]), {
        contentType: 'video/mp4',
      });

      // the URL the client got, and a signed URL of the clean output, both serve the file now
      const cleanUrl = await t.services.blobs.signedUrl(g.outputKey, { fileName: 'clean.mp4' });
      const served = await fetchSigned(t.app, done.outputUrl as string);
      assert.equal(served.statusCode, 200);
      assert.ok(served.rawPayload.length > 0);
      assert.equal((await fetchSigned(t.app, cleanUrl)).statusCode, 200);

      const del = await t.app.inject({
        method: 'DELETE',
        url: `/v2/generations/${id}`,
        headers: free.owner.headers,
      });
      assert.equal(del.statusCode, 200, del.body);

      assertError(await fetchSigned(t.app, done.outputUrl as string), 404, 'file_not_found');
      assertError(await fetchSigned(t.app, cleanUrl), 404, 'file_not_found');
      assert.deepEqual(await t.services.blobs.list(`jobs/${job.id}/`), []);
      for (const k of fetched) assert.equal(await t.services.blobs.exists(k), false, k);
      assert.deepEqual(await inputBlobs(free.organization.id), []);
    });
  });
});
