// The remote worker protocol through inject (/v2/workers/...): worker tokens on every call, one job token
// per claim that opens that job only, the long-polled claim woken by new work, signed input URLs,
// uploads of outputs, completion checked (uploaded, this attempt's, readable media) before it is
// accepted, failures, hand-backs, and a revoked token refused at once. Then what the server does not
// take on trust: uploads bounded by the plan's file size, the kind's number of outputs and the
// operator's cap (refused while streaming), and the result's figures measured from the output.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import {
  createOrgWithKey,
  createTestServices,
  freePort,
  type TestOrg,
  type TestServices,
} from '../helpers/index.js';
import {
  LIFECYCLE_ENGINE_ENV,
  fetchSigned,
  makeTestMedia,
  postGenerate,
  probeFile,
  uploadAsset,
  type TestMedia,
} from './generations-support.js';
import { WorkerTokenService } from '../../src/services/worker-tokens.js';
import { HttpWorkerPort } from '../../src/jobs/http-worker-port.js';
import { JobFailure } from '../../src/jobs/handler.js';
import { watermarkVideo } from '../../src/media/watermark.js';

const MiB = 1024 * 1024;
/** The operator's cap on one attempt's uploads in this suite (LIPSYNC_WORKER_UPLOAD_MAX_BYTES). */
const UPLOAD_CAP = 120 * MiB;

/** A body of `size` zero bytes, generated as it is read; `progress.pulled` counts what was read. */
function streamedBody(size: number) {
  const chunk = Buffer.alloc(MiB);
  const progress = { pulled: 0, total: size };
  async function* body() {
    let left = size;
    while (left > 0) {
      const n = Math.min(left, chunk.length);
      yield n === chunk.length ? chunk : chunk.subarray(0, n);
      progress.pulled += n;
      left -= n;
    }
  }
  return { payload: Readable.from(body(), { objectMode: false }), progress };
}

const DB = process.env.TEST_DATABASE ?? 'sqlite';

interface Claim {
  job: { id: string; kind: string; subjectId: string; attempts: number; payload: unknown };
  jobToken: string;
  leaseMs: number;
  input: { visual: { blobKey: string }; audio: { blobKey: string } };
  inputs: Record<string, string>;
  uploadUrl: string;
}

/** The real setTimeout, for a guard while a test holds timers still (mock.timers). */
const realSetTimeout = globalThis.setTimeout;

describe(`remote worker protocol (${DB})`, { timeout: 180_000 }, () => {
  let t: TestServices;
  let m: TestMedia;
  let org: TestOrg;
  let video: string;
  let audio: string;
  let tokenA: string;
  let tokenB: string;
  let tokens: WorkerTokenService;

  let httpPort: number;

  before(async () => {
    // The public URL names the port the suite listens on when a test needs real HTTP.
    httpPort = await freePort();
    [t, m] = await Promise.all([
      createTestServices({
        env: {
          ...LIFECYCLE_ENGINE_ENV,
          LIPSYNC_PUBLIC_URL: `http://127.0.0.1:${httpPort}`,
          LIPSYNC_RATE_LIMIT_ENABLED: 'false',
          LIPSYNC_WORKER_UPLOAD_MAX_BYTES: String(UPLOAD_CAP),
        },
      }),
      makeTestMedia(),
    ]);
    org = await createOrgWithKey(t.services, { plan: 'scale' });
    [video, audio] = await Promise.all([
      uploadAsset(t.app, org.owner.headers, m.video),
      uploadAsset(t.app, org.owner.headers, m.audioShort),
    ]);
    tokens = new WorkerTokenService(t.services.store.db.kysely);
    tokenA = (await tokens.create('a')).token;
    tokenB = (await tokens.create('b')).token;
  });
  after(async () => {
    await t?.cleanup();
    await m?.cleanup();
  });

  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  const generate = async (): Promise<string> => {
    const res = await postGenerate(t.app, org.owner.headers, {
      model: 'lipsync-2',
      input: [
        { type: 'video', assetId: video },
        { type: 'audio', assetId: audio },
      ],
    });
    assert.equal(res.statusCode, 201, res.body);
    return (res.json() as { id: string }).id;
  };
  const claim = (token: string, body: Record<string, unknown> = { kinds: ['generation'], waitSeconds: 0 }) =>
    t.app.inject({ method: 'POST', url: '/v2/workers/claim', headers: bearer(token), payload: body });
  const claimed = async (token: string, waitSeconds = 0): Promise<Claim> => {
    const res = await claim(token, { kinds: ['generation'], waitSeconds, name: 'test' });
    assert.equal(res.statusCode, 200, res.body);
    return res.json() as Claim;
  };
  const call = (
    token: string,
    c: { job: { id: string }; jobToken: string },
    what: string,
    payload: unknown = {},
    method: 'POST' | 'GET' = 'POST',
  ) =>
    t.app.inject({
      method,
      url: `/v2/workers/jobs/${c.job.id}/${what}`,
      headers: { ...bearer(token), 'x-job-token': c.jobToken },
      ...(method === 'POST' ? { payload: payload as object } : {}),
    });
  const put = (token: string, c: Claim, name: string, body: Buffer, type = 'video/mp4') =>
    t.app.inject({
      method: 'PUT',
      url: `/v2/workers/jobs/${c.job.id}/outputs/${name}`,
      headers: { ...bearer(token), 'x-job-token': c.jobToken, 'content-type': type },
      payload: body,
    });
  const generation = async (id: string) =>
    (
      await t.app.inject({ method: 'GET', url: `/v2/generate/${id}`, headers: org.owner.headers })
    ).json() as Record<string, any>;

  test('claims need a valid worker token and kinds that may run remotely', async () => {
    assert.equal(
      (await t.app.inject({ method: 'POST', url: '/v2/workers/claim', payload: { kinds: ['generation'] } }))
        .statusCode,
      401,
    );
    assert.equal((await claim('lwt_' + 'x'.repeat(43))).statusCode, 401);
    assert.equal((await claim(org.owner.key)).statusCode, 401, 'an API key is no worker token');
    for (const kinds of [['batch'], ['tts'], ['generation', 'nope']]) {
      const res = await claim(tokenA, { kinds, waitSeconds: 0 });
      assert.equal(res.statusCode, 400, res.body);
      assert.match(res.json().message, /cannot run on a remote worker/);
    }
    const me = await t.app.inject({ method: 'GET', url: '/v2/workers/me', headers: bearer(tokenA) });
    assert.equal(me.statusCode, 200, me.body);
    assert.equal(me.json().name, 'a');
    assert.equal(me.json().leaseMs, t.services.config.jobLeaseMs);
    assert.deepEqual(me.json().kinds.sort(), ['dialogue_edit', 'generation', 'transcription']);
    assert.equal((await t.app.inject({ method: 'GET', url: '/v2/workers/me' })).statusCode, 401);
    const none = await claim(tokenA);
    assert.equal(none.statusCode, 204, 'nothing queued: no content');
    const doc = (await t.app.inject({ method: 'GET', url: '/v2/openapi.json' })).json();
    assert.ok(doc.paths['/v2/workers/claim'].post);
    assert.ok(doc.paths['/v2/workers/jobs/{id}/outputs/{name}'].put);
    assert.deepEqual(doc.components.securitySchemes.workerToken, { type: 'http', scheme: 'bearer' });
  });

  test('a claim gives signed input URLs, a job token for that job only, and completes after its checks', async () => {
    const g1 = await generate();
    const g2 = await generate();
    const a = await claimed(tokenA);
    const b = await claimed(tokenB);
    assert.deepEqual(new Set([a.job.subjectId, b.job.subjectId]), new Set([g1, g2]));
    assert.equal(a.job.payload, null);
    assert.notEqual(a.jobToken, b.jobToken);
    assert.equal((await generation(a.job.subjectId)).status, 'PROCESSING');

    // Every blob key the run reads comes with a signed URL that downloads it.
    assert.deepEqual(Object.keys(a.inputs).sort(), [a.input.visual.blobKey, a.input.audio.blobKey].sort());
    const videoUrl = a.inputs[a.input.visual.blobKey]!;
    const dl = await fetchSigned(t.app, videoUrl);
    assert.equal(dl.statusCode, 200);
    assert.deepEqual(dl.rawPayload, await readFile(m.video));

    // Job B's token opens nothing of job A, and worker B's token nothing of worker A's job.
    assert.equal(
      (await call(tokenB, { job: a.job, jobToken: b.jobToken }, 'input', {}, 'GET')).statusCode,
      403,
    );
    assert.equal(
      (await call(tokenA, { job: a.job, jobToken: b.jobToken }, 'input', {}, 'GET')).statusCode,
      403,
    );
    assert.equal((await call(tokenB, a, 'input', {}, 'GET')).statusCode, 403, 'another worker token');
    assert.equal(
      (await put(tokenB, { ...a, jobToken: b.jobToken }, 'output.mp4', Buffer.from('x'))).statusCode,
      403,
    );
    const stolen = await call(tokenB, { job: a.job, jobToken: b.jobToken }, 'heartbeat', { progress: 50 });
    assert.deepEqual(stolen.json(), { answer: 'lost' });
    assert.deepEqual(
      (await call(tokenB, { job: a.job, jobToken: b.jobToken }, 'complete', { result: {} })).json(),
      {
        outcome: 'lost',
      },
    );
    // The job's own token gets its input again, with fresh URLs.
    const again = await call(tokenA, a, 'input', {}, 'GET');
    assert.equal(again.statusCode, 200, again.body);
    assert.deepEqual(Object.keys(again.json().inputs).sort(), Object.keys(a.inputs).sort());

    // Heartbeat with progress.
    const beat = await call(tokenA, a, 'heartbeat', { progress: 40 });
    assert.deepEqual(beat.json(), { answer: 'ok' });
    assert.equal((await t.services.store.jobs.find(a.job.id))?.progress, 40);

    // B uploads something that is not media: its completion is refused and the attempt fails (retry).
    const junk = await put(tokenB, b, 'output.mp4', Buffer.from('not a video'));
    assert.equal(junk.statusCode, 201, junk.body);
    const junkKey = junk.json().key as string;
    assert.ok(junkKey.startsWith(`jobs/${b.job.id}/${b.jobToken}/`), junkKey);
    const refused = await call(tokenB, b, 'complete', {
      result: { outputKey: junkKey, watermarkedKey: null, outputDuration: 2, fps: 25, quality: {} },
    });
    assert.equal(refused.json().outcome, 'rejected', refused.body);
    assert.match(refused.json().reason, /not readable media/);
    assert.equal(refused.json().result, 'retrying');
    assert.equal(await t.services.blobs.exists(junkKey), false, 'the refused attempt left no file');
    assert.equal((await generation(b.job.subjectId)).status, 'PENDING');

    // A result that points at a file it did not upload (someone's asset) is refused too.
    const bad = await put(tokenA, a, '../x', Buffer.from('x'));
    assert.notEqual(bad.statusCode, 201);
    const upload = await put(tokenA, a, 'output.mp4', await readFile(m.video));
    assert.equal(upload.statusCode, 201, upload.body);
    const outputKey = upload.json().key as string;

    // Completion with the real output.
    const done = await call(tokenA, a, 'complete', {
      result: { outputKey, watermarkedKey: null, outputDuration: 2, fps: 25, quality: {} },
    });
    assert.deepEqual(done.json(), { outcome: 'completed' }, done.body);
    const g = await generation(a.job.subjectId);
    assert.equal(g.status, 'COMPLETED');
    const out = await fetchSigned(t.app, g.outputUrl as string);
    assert.equal(out.statusCode, 200);
    assert.deepEqual(out.rawPayload, await readFile(m.video));
    // The token ended with the claim.
    assert.deepEqual((await call(tokenA, a, 'heartbeat', {})).json(), { answer: 'lost' });
    assert.equal((await call(tokenA, a, 'input', {}, 'GET')).statusCode, 403);

    // The refused job comes back after its backoff: a long-polled claim waits for it.
    const retry = await claimed(tokenB, 20);
    assert.equal(retry.job.id, b.job.id);
    assert.equal(retry.job.attempts, 2);
    const fake = await call(tokenB, retry, 'complete', {
      result: {
        outputKey: a.input.visual.blobKey,
        watermarkedKey: null,
        outputDuration: 2,
        fps: 25,
        quality: {},
      },
    });
    assert.equal(fake.json().outcome, 'rejected');
    assert.match(fake.json().reason, /not an upload of this attempt/);
    assert.ok(await t.services.blobs.exists(a.input.visual.blobKey), 'the input is untouched');
  });

  test('a long-polled claim answers as soon as work is queued', async (tt) => {
    // The claim re-checks on a timer (at most every 5 s); timers are held still here, so only the
    // work announcement can wake it. A claim that missed it would hang until the guard below.
    const bus = t.services.bus;
    const onWork = bus.onWork;
    let listening!: () => void;
    const subscribed = new Promise<void>((resolve) => (listening = resolve));
    bus.onWork = (listener) => {
      const off = onWork.call(bus, listener);
      listening();
      return off;
    };
    tt.mock.timers.enable({ apis: ['setTimeout'] });
    let res;
    let id: string;
    try {
      const pending = claim(tokenB, { kinds: ['generation'], waitSeconds: 20 });
      await subscribed;
      id = await generate();
      // A guard against a hang only, on a timer taken before they were held.
      let guardTimer: NodeJS.Timeout | undefined;
      const guard = new Promise<never>((_, reject) => {
        guardTimer = realSetTimeout(
          () => reject(new Error('the claim was not woken by the work announcement')),
          60_000,
        );
      });
      res = await Promise.race([pending, guard]).finally(() => clearTimeout(guardTimer));
      assert.equal(res.statusCode, 200, res.body);
      assert.equal((res.json() as Claim).job.subjectId, id);
    } finally {
      tt.mock.timers.reset();
      bus.onWork = onWork;
    }
    // Fail it for good: the generation fails with the worker's error.
    const c = res.json() as Claim;
    const failed = await call(tokenB, c, 'fail', {
      error: { code: 'generation_no_face_detected', message: 'No face was found.' },
      failureKind: 'permanent',
    });
    assert.deepEqual(failed.json(), { outcome: 'failed' });
    const g = await generation(id);
    assert.equal(g.status, 'FAILED');
    assert.equal(g.error_code, 'generation_no_face_detected');
  });

  test('a released job is queued again without counting the attempt; a revoked token is refused at once', async () => {
    const id = await generate();
    const c = await claimed(tokenA);
    assert.equal(c.job.subjectId, id);
    assert.deepEqual((await call(tokenA, c, 'release')).json(), { outcome: 'released' });
    const job = await t.services.store.jobs.findBySubject('generation', id);
    assert.equal(job?.status, 'queued');
    assert.equal(job?.attempts, 0);

    const c2 = await claimed(tokenA);
    assert.equal(c2.job.subjectId, id);
    const list = await tokens.list();
    await tokens.revoke(list.find((x) => x.name === 'a')!.id);
    assert.equal((await call(tokenA, c2, 'heartbeat', { progress: 10 })).statusCode, 401);
    assert.equal((await claim(tokenA)).statusCode, 401);
    // Its lease is left to expire (the watchdog requeues it); nothing else changed.
    assert.equal((await t.services.store.jobs.findBySubject('generation', id))?.status, 'running');
  });

  /** Claims until this generation's job comes; jobs left queued by earlier tests are failed for good. */
  const claimOwn = async (token: string, generationId: string): Promise<Claim> => {
    for (;;) {
      const c = await claimed(token, 20);
      if (c.job.subjectId === generationId) return c;
      const failed = await call(token, c, 'fail', {
        error: { code: 'generation_processing_failed', message: 'left over by an earlier test' },
        failureKind: 'permanent',
      });
      assert.equal(failed.statusCode, 200, failed.body);
    }
  };
  const generateFor = async (who: TestOrg, v: string, a: string): Promise<string> => {
    const res = await postGenerate(t.app, who.owner.headers, {
      model: 'lipsync-2',
      input: [
        { type: 'video', assetId: v },
        { type: 'audio', assetId: a },
      ],
    });
    assert.equal(res.statusCode, 201, res.body);
    return (res.json() as { id: string }).id;
  };
  const putStream = (token: string, c: Claim, name: string, size: number, declareLength = false) => {
    const body = streamedBody(size);
    const res = t.app.inject({
      method: 'PUT',
      url: `/v2/workers/jobs/${c.job.id}/outputs/${name}`,
      headers: {
        ...bearer(token),
        'x-job-token': c.jobToken,
        'content-type': 'video/mp4',
        ...(declareLength ? { 'content-length': String(size) } : {}),
      },
      payload: body.payload,
    });
    return { res, progress: body.progress };
  };
  const uploadLeftovers = async () =>
    (await readdir(t.services.config.tempDir).catch(() => [] as string[])).filter((n) =>
      n.startsWith('remote-upload-'),
    );
  const assertTooLarge = (res: { statusCode: number; body: string; headers: Record<string, unknown> }) => {
    assert.equal(res.statusCode, 413, res.body);
    assert.equal(JSON.parse(res.body).errorCode, 'payload_too_large', res.body);
  };

  test("uploads are held to the plan's file size while they stream: 413, the rest unread, nothing kept", async () => {
    const free = await createOrgWithKey(t.services, { plan: 'free' });
    const [v, a] = await Promise.all([
      uploadAsset(t.app, free.owner.headers, m.video),
      uploadAsset(t.app, free.owner.headers, m.audioShort),
    ]);
    const tokenC = (await tokens.create('c')).token;
    const id = await generateFor(free, v, a);
    const c = await claimOwn(tokenC, id);
    const key = `jobs/${c.job.id}/${c.jobToken}/output.mp4`;

    // free: 100 MiB a file (under the operator's cap of 120 MiB). A chunked body is cut off at the limit.
    const big = putStream(tokenC, c, 'output.mp4', 110 * MiB);
    const res = await big.res;
    assertTooLarge(res);
    assert.match(res.json().message, /104857600 bytes/);
    assert.equal(res.headers.connection, 'close');
    assert.ok(
      big.progress.pulled < big.progress.total,
      `${big.progress.pulled} of ${big.progress.total} read`,
    );
    assert.equal(await t.services.blobs.exists(key), false, 'no partial output is stored');
    assert.deepEqual(await uploadLeftovers(), [], 'the partial temp file is removed');

    // A Content-Length over the limit is refused before the body is read.
    const declared = putStream(tokenC, c, 'output.mp4', 101 * MiB, true);
    assertTooLarge(await declared.res);
    assert.equal(declared.progress.pulled, 0);
    assert.deepEqual(await uploadLeftovers(), []);

    // Within the limit: stored. The attempt may still end normally.
    const ok = await put(tokenC, c, 'output.mp4', await readFile(m.video));
    assert.equal(ok.statusCode, 201, ok.body);
    const failed = await call(tokenC, c, 'fail', {
      error: { code: 'generation_processing_failed', message: 'end of test' },
      failureKind: 'permanent',
    });
    assert.deepEqual(failed.json(), { outcome: 'failed' });
  });

  test("an attempt's uploads are bounded in total and in number; the worker's adapter fails such a run for good", async () => {
    const tokenD = (await tokens.create('d')).token;
    const id = await generate();
    const c = await claimOwn(tokenD, id);
    const prefix = `jobs/${c.job.id}/${c.jobToken}/`;
    // scale: 5 GiB a file, but the operator's cap bounds the attempt's total at 120 MiB.
    const first = putStream(tokenD, c, 'output.mp4', 70 * MiB);
    assert.equal((await first.res).statusCode, 201, (await first.res).body);
    const second = putStream(tokenD, c, 'preview.mp4', 60 * MiB);
    const refused = await second.res;
    assertTooLarge(refused);
    assert.match(refused.json().message, /52428800 bytes this attempt may still upload/);
    assert.ok(second.progress.pulled < second.progress.total);
    assert.equal(await t.services.blobs.exists(`${prefix}preview.mp4`), false);
    assert.deepEqual(await uploadLeftovers(), []);
    // Replacing an output frees what it held.
    const video = await readFile(m.video);
    assert.equal((await put(tokenD, c, 'output.mp4', video)).statusCode, 201);
    assert.equal((await put(tokenD, c, 'preview.mp4', video)).statusCode, 201);
    assert.equal((await t.services.blobs.stat(`${prefix}output.mp4`))?.size, video.length);
    // A generation has three outputs (the video, its watermarked preview, a dub's soundtrack): a fourth
    // name is refused whatever its size.
    assert.equal((await put(tokenD, c, 'dub.wav', Buffer.from('x'))).statusCode, 201);
    const fourth = await put(tokenD, c, 'extra.mp4', Buffer.from('x'));
    assertTooLarge(fourth);
    assert.match(fourth.json().message, /uploaded its 3 outputs already/);
    assert.equal(await t.services.blobs.exists(`${prefix}extra.mp4`), false);

    // The same refusal through the worker's HTTP adapter, over real HTTP: a permanent JobFailure.
    await t.app.listen({ port: httpPort, host: '127.0.0.1' });
    const port = new HttpWorkerPort({
      server: t.services.config.publicUrl,
      token: tokenD,
      logger: t.services.logger,
    });
    // The adapter learns the claim (upload URL) from its own claim: hand this one back and take it again.
    assert.deepEqual((await call(tokenD, c, 'release')).json(), { outcome: 'released' });
    let held = await port.claim(['generation'], 'adapter');
    while (held && held.job.subjectId !== id) held = await port.claim(['generation'], 'adapter');
    assert.ok(held, 'the released job is claimed again');
    const files = port.files(held);
    await files.upload('output.mp4', m.video, 'video/mp4');
    await files.upload('preview.mp4', m.video, 'video/mp4');
    await files.upload('dub.wav', m.video, 'audio/wav');
    await assert.rejects(files.upload('extra.mp4', m.video, 'video/mp4'), (err: unknown) => {
      assert.ok(err instanceof JobFailure, String(err));
      assert.equal(err.failureKind, 'permanent');
      assert.match(String(err.detail), /uploaded its 3 outputs already/);
      return true;
    });
    assert.equal(
      await port.fail(held, new JobFailure({ code: 'job_failed', message: 'x' }, 'permanent')),
      'failed',
    );
  });

  test("a result's figures are measured from its output: false figures are neither stored nor billed", async () => {
    const tokenE = (await tokens.create('e')).token;
    const id = await generate();
    const c = await claimOwn(tokenE, id);
    const upload = await put(tokenE, c, 'output.mp4', await readFile(m.video));
    assert.equal(upload.statusCode, 201, upload.body);
    const outputKey = upload.json().key as string;
    const audioUpload = await put(tokenE, c, 'preview.mp4', await readFile(m.audioShort), 'audio/wav');
    assert.equal(audioUpload.statusCode, 201, audioUpload.body);

    // An output without video cannot be a generation's.
    const noVideo = await call(tokenE, c, 'complete', {
      result: {
        outputKey: audioUpload.json().key,
        watermarkedKey: null,
        outputDuration: 1.5,
        fps: 25,
        quality: {},
      },
    });
    assert.equal(noVideo.json().outcome, 'rejected', noVideo.body);
    assert.match(noVideo.json().reason, /holds no video/);

    const again = await claimOwn(tokenE, id);
    const real = await put(tokenE, again, 'output.mp4', await readFile(m.video));
    assert.equal(real.statusCode, 201, real.body);
    const done = await call(tokenE, again, 'complete', {
      result: {
        outputKey: real.json().key,
        watermarkedKey: null,
        outputDuration: 9999,
        fps: 999,
        quality: { width: 1, height: 1, fps: 999, engine: 'remote' },
      },
    });
    assert.deepEqual(done.json(), { outcome: 'completed' }, done.body);
    assert.notEqual(real.json().key, outputKey);

    const facts = await probeFile(m.video);
    const g = await generation(id);
    assert.equal(g.status, 'COMPLETED');
    assert.ok(
      Math.abs(g.outputDuration - facts.duration) < 0.01,
      `stored ${g.outputDuration}, file ${facts.duration}`,
    );
    const row = await t.services.store.generations.findAny(id);
    assert.deepEqual(
      {
        width: row?.quality?.width,
        height: row?.quality?.height,
        fps: row?.quality?.fps,
        engine: row?.quality?.engine,
      },
      { width: 256, height: 256, fps: 25, engine: 'remote' },
    );
    const usage = await t.services.store.db.kysely
      .selectFrom('usage_records')
      .selectAll()
      .where('generation_id', '=', id)
      .execute();
    assert.equal(usage.length, 1);
    assert.ok(Math.abs(Number(usage[0]!.seconds) - facts.duration) < 0.01, `billed ${usage[0]!.seconds} s`);
    assert.equal(Number(usage[0]!.frames), Math.ceil(facts.duration * 25 - 1e-9));
    assert.ok(Number(usage[0]!.cost) > 0, 'priced at the measured figures (false ones priced it at nothing)');
  });
  test("a free plan's watermark is the server's rule: a result without a watermarked output is refused", async () => {
    const free = await createOrgWithKey(t.services, { plan: 'free' });
    const [v, a] = await Promise.all([
      uploadAsset(t.app, free.owner.headers, m.video),
      uploadAsset(t.app, free.owner.headers, m.audioShort),
    ]);
    const tokenW = (await tokens.create('w')).token;
    const clean = await readFile(m.video);
    const dir = await mkdtemp(join(tmpdir(), 'wm-test-'));
    try {
      const markedPath = join(dir, 'marked.mp4');
      await watermarkVideo(m.video, markedPath, { format: 'mp4' });
      const marked = await readFile(markedPath);
      const complete = (c: Claim, outputKey: string, watermarkedKey: string | null) =>
        call(tokenW, c, 'complete', {
          result: { outputKey, watermarkedKey, outputDuration: 2, fps: 25, quality: {} },
        });

      // Three attempts of one generation (the free plan runs one at a time). The watermark skipped:
      // only the clean output.
      const id = await generateFor(free, v, a);
      const skipped = await claimOwn(tokenW, id);
      const out1 = (await put(tokenW, skipped, 'output.mp4', clean)).json().key as string;
      const r1 = await complete(skipped, out1, null);
      assert.equal(r1.json().outcome, 'rejected', r1.body);
      assert.match(r1.json().reason, /no watermarked output/);

      // The clean bytes under the watermarked name; then a real derivative.
      const faked = await claimOwn(tokenW, id);
      const out2 = (await put(tokenW, faked, 'output.mp4', clean)).json().key as string;
      const copy = (await put(tokenW, faked, 'preview.mp4', clean)).json().key as string;
      const r2 = await complete(faked, out2, copy);
      assert.equal(r2.json().outcome, 'rejected', r2.body);
      assert.match(r2.json().reason, /is the clean output/);

      const honest = await claimOwn(tokenW, id);
      const out3 = (await put(tokenW, honest, 'output.mp4', clean)).json().key as string;
      const wm = (await put(tokenW, honest, 'preview.mp4', marked)).json().key as string;
      const r3 = await complete(honest, out3, wm);
      assert.deepEqual(r3.json(), { outcome: 'completed' }, r3.body);
      const row = await t.services.store.generations.findAny(id);
      assert.equal(row?.watermarkedKey, wm);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
