// Admission and the job machinery on a real database: plan concurrency (429), the admission switch,
// cancel (service and the real CLI), and the watchdog: expired leases are requeued and complete,
// exhausted attempts fail with generation_worker_lost, deadlines give TIMED_OUT.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createOrgWithKey, createTestServices, runCliJson, type TestServices } from '../helpers/index.js';
import { startBackground, type Background } from '../../src/app/runtime.js';
import { Watchdog } from '../../src/jobs/watchdog.js';
import {
  makeTestMedia,
  postGenerate,
  uploadAsset,
  waitTerminal,
  type TestMedia,
  LIFECYCLE_ENGINE_ENV,
} from './generations-support.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';

describe(`admission, cancel and the watchdog (${DB})`, { timeout: 240_000 }, () => {
  let t: TestServices;
  let m: TestMedia;

  before(async () => {
    [t, m] = await Promise.all([
      createTestServices({
        env: {
          ...LIFECYCLE_ENGINE_ENV,
          LIPSYNC_RATE_LIMIT_ENABLED: 'false',
          LIPSYNC_JOB_LEASE_SECONDS: '2',
          LIPSYNC_JOB_MAX_ATTEMPTS: '2',
        },
      }),
      makeTestMedia(),
    ]);
  });
  after(async () => {
    await t?.cleanup();
    await m?.cleanup();
  });

  async function orgWithAssets(plan: string, audioFile?: string) {
    const o = await createOrgWithKey(t.services, { plan });
    return {
      org: o,
      video: await uploadAsset(t.app, o.owner.headers, m.video),
      audio: await uploadAsset(t.app, o.owner.headers, audioFile ?? m.audioShort),
    };
  }
  type OrgAssets = Awaited<ReturnType<typeof orgWithAssets>>;
  const create = (o: OrgAssets, options: Record<string, unknown> = {}) =>
    postGenerate(t.app, o.org.owner.headers, {
      model: 'lipsync-2',
      input: [
        { type: 'video', assetId: o.video },
        { type: 'audio', assetId: o.audio },
      ],
      options,
    });
  const created = async (o: OrgAssets, options: Record<string, unknown> = {}) => {
    const res = await create(o, options);
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id as string;
  };
  const row = async (id: string) => (await t.services.store.generations.findAny(id))!;
  const usageRows = async (id: string) =>
    (
      await t.services.store.db.kysely
        .selectFrom('usage_records')
        .selectAll()
        .where('generation_id', '=', id)
        .execute()
    ).length;
  /** Cancels whatever earlier tests left PENDING, so that the queue holds only what a test creates. */
  async function clearQueue() {
    const active = await t.services.store.db.kysely
      .selectFrom('generations')
      .select('id')
      .where('status', 'in', ['PENDING', 'PROCESSING'])
      .execute();
    for (const a of active) await t.services.generations.cancel(a.id);
    for (const a of active) {
      for (
        let i = 0;
        i < 100 && !['CANCELED', 'COMPLETED', 'FAILED'].includes((await row(a.id)).status);
        i++
      ) {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }
  const quietWatchdog = () => new Watchdog(t.services.store, t.services.queue, t.services.logger, 60_000);
  const job = async (id: string) => (await t.services.store.jobs.findBySubject('generation', id))!;
  /** A worker that claims the next job and then does nothing (it died, or stalls). */
  const ghostClaim = (owner: string, leaseMs: number) =>
    t.services.queue.claim(['generation'], owner, leaseMs);
  /** Lets the job's lease run out now (database time), as if its worker had died long ago. */
  const expireLease = (id: string) =>
    t.services.store.db.kysely
      .updateTable('jobs')
      .set({ lease_expires_at: 0 })
      .where('subject_id', '=', id)
      .execute();
  /** Makes a job queued for a later retry due now. */
  const dueNow = (id: string) =>
    t.services.store.db.kysely.updateTable('jobs').set({ run_at: 0 }).where('subject_id', '=', id).execute();

  test('free plan: a second active generation gets 429 concurrency_limit_reached with retry fields', async () => {
    const free = await orgWithAssets('free');
    const first = await created(free);
    const res = await create(free);
    assert.equal(res.statusCode, 429, res.body);
    const b = res.json();
    assert.equal(b.statusCode, 429);
    assert.equal(b.errorCode, 'concurrency_limit_reached');
    assert.equal(typeof b.message, 'string');
    assert.ok(b.retryAfter > 0);
    assert.equal(res.headers['retry-after'], String(b.retryAfter));
    assert.equal(b.concurrencyLimit, 1);
    assert.equal(b.activeGenerations, 1);
    // a keyed request refused for concurrency releases its key
    const keyed = await postGenerate(
      t.app,
      free.org.owner.headers,
      {
        model: 'lipsync-2',
        input: [
          { type: 'video', assetId: free.video },
          { type: 'audio', assetId: free.audio },
        ],
      },
      { 'idempotency-key': 'after-the-slot-frees' },
    );
    assert.equal(keyed.statusCode, 429);
    // a terminal generation frees the slot
    await t.services.generations.cancel(first);
    const again = await postGenerate(
      t.app,
      free.org.owner.headers,
      {
        model: 'lipsync-2',
        input: [
          { type: 'video', assetId: free.video },
          { type: 'audio', assetId: free.audio },
        ],
      },
      { 'idempotency-key': 'after-the-slot-frees' },
    );
    assert.equal(again.statusCode, 201, again.body);
  });

  test('creator plan (3): parallel requests never overshoot the limit', async () => {
    const creator = await orgWithAssets('creator');
    const results = await Promise.all(Array.from({ length: 8 }, () => create(creator)));
    const codes = results.map((r) => r.statusCode).sort();
    assert.deepEqual(codes, [201, 201, 201, 429, 429, 429, 429, 429], codes.join(','));
    assert.equal(await t.services.store.generations.countActive(creator.org.organization.id), 3);
    // enterprise with a contracted value
    const ent = await createOrgWithKey(t.services, { plan: 'enterprise', concurrency: 2 });
    const e = {
      org: ent,
      video: await uploadAsset(t.app, ent.owner.headers, m.video),
      audio: await uploadAsset(t.app, ent.owner.headers, m.audioShort),
    };
    await created(e);
    await created(e);
    const third = await create(e);
    assert.equal(third.statusCode, 429);
    assert.equal(third.json().concurrencyLimit, 2);
  });

  test('admission pause: 503 generation_admission_paused with Retry-After; resume: 201', async () => {
    const o = await orgWithAssets('enterprise');
    const env = { ...t.env, LOG_LEVEL: 'silent' };
    const paused = await runCliJson(['admission', 'pause', '--reason', 'maintenance'], { env });
    assert.equal(paused.paused, true);
    try {
      const res = await create(o);
      assert.equal(res.statusCode, 503, res.body);
      assert.equal(res.json().errorCode, 'generation_admission_paused');
      assert.ok(Number(res.headers['retry-after']) > 0);
      const keyed = await postGenerate(
        t.app,
        o.org.owner.headers,
        {
          model: 'lipsync-2',
          input: [
            { type: 'video', assetId: o.video },
            { type: 'audio', assetId: o.audio },
          ],
        },
        { 'idempotency-key': 'during-pause' },
      );
      assert.equal(keyed.statusCode, 503);
      assert.equal(keyed.json().errorCode, 'generation_admission_paused');
    } finally {
      const resumed = await runCliJson(['admission', 'resume'], { env });
      assert.equal(resumed.paused, false);
    }
    assert.equal((await create(o)).statusCode, 201);
    // the key refused during the pause can be used now
    const keyed = await postGenerate(
      t.app,
      o.org.owner.headers,
      {
        model: 'lipsync-2',
        input: [
          { type: 'video', assetId: o.video },
          { type: 'audio', assetId: o.audio },
        ],
      },
      { 'idempotency-key': 'during-pause' },
    );
    assert.equal(keyed.statusCode, 201, keyed.body);
  });

  test('cancel a PENDING generation with `lipsync generation cancel`: CANCELED, no usage', async () => {
    const o = await orgWithAssets('enterprise');
    const id = await created(o);
    const out = await runCliJson(['generation', 'cancel', id], { env: { ...t.env, LOG_LEVEL: 'silent' } });
    assert.equal(out.id, id);
    assert.equal(out.status, 'CANCELED');
    const g = await t.app.inject({ method: 'GET', url: `/v2/generate/${id}`, headers: o.org.owner.headers });
    assert.equal(g.json().status, 'CANCELED');
    assert.equal(g.json().errorCode, 'generation_canceled');
    assert.equal(g.json().outputUrl, null);
    assert.equal(await usageRows(id), 0);
    // canceling again is harmless
    assert.equal((await t.services.generations.cancel(id)).status, 'CANCELED');
  });

  describe('with workers', () => {
    let bg: Background | null = null;
    after(async () => {
      await bg?.stop();
    });

    test('cancel a PROCESSING generation: the worker stops and it becomes CANCELED', async () => {
      await clearQueue();
      const o = await orgWithAssets('enterprise', m.audio61);
      // 61 s of output: long enough to still be running when the cancel arrives
      const id = await created(o, { sync_mode: 'loop' });
      bg = startBackground(t.services);
      for (let i = 0; i < 200 && (await row(id)).status !== 'PROCESSING'; i++)
        await new Promise((r) => setTimeout(r, 50));
      assert.equal((await row(id)).status, 'PROCESSING');
      const c = await t.services.generations.cancel(id);
      assert.equal(c.id, id);
      const done = await waitTerminal(t.app, o.org.owner.headers, id);
      assert.equal(done.status, 'CANCELED', JSON.stringify(done));
      assert.equal(done.errorCode, 'generation_canceled');
      assert.equal(await usageRows(id), 0);
      await bg.stop();
      bg = null;
    });

    test('an expired lease is requeued by the watchdog and the job then completes once', async () => {
      await clearQueue();
      const o = await orgWithAssets('enterprise');
      const id = await created(o);
      // A worker that claims the job and dies: its lease is never renewed.
      const ghost = await ghostClaim('ghost-worker', 60_000);
      assert.equal(ghost?.subjectId, id);
      assert.equal((await row(id)).status, 'PROCESSING');
      assert.equal((await job(id)).attempts, 1);
      await expireLease(id);
      await quietWatchdog().tick();
      assert.equal((await row(id)).status, 'PENDING');
      await dueNow(id);
      bg = startBackground(t.services);
      const done = await waitTerminal(t.app, o.org.owner.headers, id);
      assert.equal(done.status, 'COMPLETED', JSON.stringify(done));
      const j = await job(id);
      assert.equal(j.attempts, 2);
      assert.equal(j.leaseToken, null);
      assert.equal(j.status, 'completed');
      assert.equal(await usageRows(id), 1);
      // the dead worker's late finish (its token) cannot settle it a second time
      const late = await t.services.queue.settle(
        ghost!,
        { token: ghost!.leaseToken!, statuses: ['running'] },
        { status: 'failed', error: { code: 'late', message: 'late' } },
      );
      assert.equal(late, null);
      assert.equal((await row(id)).status, 'COMPLETED');
      await bg.stop();
      bg = null;
    });
  });

  test('attempts exhausted: FAILED with generation_worker_lost', async () => {
    await clearQueue();
    const o = await orgWithAssets('enterprise');
    const id = await created(o);
    assert.equal((await job(id)).maxAttempts, 2);
    const watchdog = quietWatchdog();
    for (let attempt = 1; attempt <= 2; attempt++) {
      await dueNow(id);
      const claimed = await ghostClaim(`ghost-${attempt}`, 60_000);
      assert.equal(claimed?.subjectId, id);
      assert.equal(claimed?.attempts, attempt);
      await expireLease(id);
      await watchdog.tick();
    }
    const g = await t.app.inject({ method: 'GET', url: `/v2/generate/${id}`, headers: o.org.owner.headers });
    assert.equal(g.json().status, 'FAILED', g.body);
    assert.equal(g.json().errorCode, 'generation_worker_lost');
    assert.equal(g.json().error_code, 'generation_worker_lost');
    assert.match(g.json().error, /2 times/);
    assert.equal(await usageRows(id), 0);
    const dl = await t.app.inject({
      method: 'GET',
      url: `/v2/generations/${id}/download`,
      headers: o.org.owner.headers,
    });
    assert.equal(dl.statusCode, 422);
    assert.equal(dl.json().errorCode, 'generation_not_downloadable');
  });

  test('canceled while its worker is gone: the watchdog cancels it instead of running it again', async () => {
    await clearQueue();
    const o = await orgWithAssets('enterprise');
    const id = await created(o);
    assert.equal((await ghostClaim('ghost-worker', 60_000))?.subjectId, id);
    // the cancel arrives while the row is PROCESSING under the dead worker's lease
    const c = await t.services.generations.cancel(id);
    assert.equal(c.status, 'PROCESSING');
    await expireLease(id);
    await quietWatchdog().tick();
    const g = await t.app.inject({ method: 'GET', url: `/v2/generate/${id}`, headers: o.org.owner.headers });
    assert.equal(g.json().status, 'CANCELED', g.body);
    assert.equal(g.json().errorCode, 'generation_canceled');
    // nothing is left for a worker to pick up, and nothing was billed
    assert.equal((await job(id)).status, 'canceled');
    assert.equal(await ghostClaim('another-worker', 30_000), null);
    assert.equal(await usageRows(id), 0);
  });

  test('a run past its deadline is TIMED_OUT; a job waiting in the queue is never timed out', async () => {
    await clearQueue();
    const o = await orgWithAssets('enterprise');
    const processing = await created(o);
    const pending = await created(o);
    // a live worker holds the first one (a long lease); the second waits in the queue
    const claimed = await ghostClaim('slow-worker', 60_000);
    assert.equal(claimed?.subjectId, processing);
    assert.equal((await row(processing)).status, 'PROCESSING');
    assert.equal((await row(pending)).status, 'PENDING');
    // the deadline is set when the run starts (start + job timeout), not at submission
    const j = await job(processing);
    assert.ok(j.deadlineAt !== null && j.startedAt !== null);
    assert.equal(j.deadlineAt - j.startedAt, j.timeoutMs);
    assert.equal((await job(pending)).deadlineAt, null);
    // the run outlasts LIPSYNC_JOB_TIMEOUT_SECONDS
    await t.services.store.db.kysely
      .updateTable('jobs')
      .set({ deadline_at: 1 })
      .where('subject_id', '=', processing)
      .execute();
    await quietWatchdog().tick();
    const g = await t.app.inject({
      method: 'GET',
      url: `/v2/generate/${processing}`,
      headers: o.org.owner.headers,
    });
    assert.equal(g.json().status, 'TIMED_OUT', g.body);
    assert.equal(g.json().errorCode, 'generation_timed_out');
    assert.equal((await row(pending)).status, 'PENDING', 'a backlog never times a job out');
    // the slow worker's heartbeat now answers 'lost': it must stop
    assert.equal(await t.services.queue.heartbeat(claimed!, claimed!.leaseToken!, 60_000), 'lost');
    // a timed-out generation frees its slot and can be deleted
    const del = await t.app.inject({
      method: 'DELETE',
      url: `/v2/generations/${processing}`,
      headers: o.org.owner.headers,
    });
    assert.equal(del.statusCode, 200);
    await t.services.generations.cancel(pending);
  });
});
