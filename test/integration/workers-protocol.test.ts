// The remote worker protocol through inject (/v2/workers/...): worker tokens on every call, one job token
// per claim that opens that job only, the long-polled claim woken by new work, signed input URLs,
// uploads of outputs, completion checked (uploaded, this attempt's, readable media) before it is
// accepted, failures, hand-backs, and a revoked token refused at once.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { createOrgWithKey, createTestServices, type TestOrg, type TestServices } from '../helpers/index.js';
import {
  LIFECYCLE_ENGINE_ENV,
  fetchSigned,
  makeTestMedia,
  postGenerate,
  uploadAsset,
  type TestMedia,
} from './generations-support.js';
import { WorkerTokenService } from '../../src/services/worker-tokens.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';

interface Claim {
  job: { id: string; kind: string; subjectId: string; attempts: number; payload: unknown };
  jobToken: string;
  leaseMs: number;
  input: { visual: { blobKey: string }; audio: { blobKey: string } };
  inputs: Record<string, string>;
  uploadUrl: string;
}

describe(`remote worker protocol (${DB})`, { timeout: 180_000 }, () => {
  let t: TestServices;
  let m: TestMedia;
  let org: TestOrg;
  let video: string;
  let audio: string;
  let tokenA: string;
  let tokenB: string;
  let tokens: WorkerTokenService;

  before(async () => {
    [t, m] = await Promise.all([
      createTestServices({ env: { ...LIFECYCLE_ENGINE_ENV, LIPSYNC_RATE_LIMIT_ENABLED: 'false' } }),
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

  test('a long-polled claim answers as soon as work is queued', async () => {
    const started = Date.now();
    const pending = claim(tokenB, { kinds: ['generation'], waitSeconds: 20 });
    await new Promise((r) => setTimeout(r, 300));
    const id = await generate();
    const res = await pending;
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((res.json() as Claim).job.subjectId, id);
    // Without the announcement the claim would sleep up to its 5 s safety net.
    assert.ok(Date.now() - started < 4_500, `answered after ${Date.now() - started} ms`);
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
});
