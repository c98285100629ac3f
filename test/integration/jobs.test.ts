// The job system on a real database, with test-only kinds registered the way any new kind is: claims
// (fair share with one slot and with several, the race for a shared slot, racing pools), runs, the
// lease-lost path (nothing written), retries with backoff, permanent failures, a database error while
// finishing, graceful hand-back, the start-up check of stored kinds, and (PostgreSQL) the listener
// reconnecting after its backend is terminated.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { sql } from 'kysely';
import { createTestServices, type TestServices } from '../helpers/index.js';
import { startBackground, type Background } from '../../src/app/runtime.js';
import {
  JobFailure,
  JobYield,
  UnknownJobKindError,
  type JobHandler,
  type JobOutcome,
} from '../../src/jobs/handler.js';
import { PostgresEventBus } from '../../src/jobs/event-bus.js';
import type { JobRecord } from '../../src/store/jobs.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { createServices } from '../../src/app/container.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';

interface Step {
  /** What the run does: finish, throw a failure, or wait until released or aborted. */
  mode: 'ok' | 'transient' | 'permanent' | 'hold' | 'hold-ignoring-abort' | 'yield-once';
}

/** A test kind: its payload says what the run does; every run and settlement is recorded. */
function probeKind(kind: string) {
  const runs = new Map<string, number>();
  const settled = new Map<string, JobOutcome<unknown>[]>();
  const uploaded = new Map<string, string>();
  const gates = new Map<string, () => void>();
  const started = new Map<string, () => void>();
  let failSettleTimes = 0;
  const handler: JobHandler<Step, Step & { subjectId: string }, { key: string }> = {
    kind,
    payloadVersion: 1,
    parsePayload(raw) {
      return raw as Step;
    },
    async prepare(job, payload) {
      return { ...payload, subjectId: job.subjectId };
    },
    async run(input, ctx) {
      runs.set(input.subjectId, (runs.get(input.subjectId) ?? 0) + 1);
      ctx.progress(10);
      const file = join(ctx.tempRoot, `${randomUUID()}.txt`);
      await writeFile(file, `attempt ${ctx.attempt}`);
      const key = await ctx.files.upload('out.txt', file, 'text/plain');
      uploaded.set(input.subjectId, key);
      started.get(input.subjectId)?.();
      if (input.mode === 'transient') throw new Error('flaky dependency');
      if (input.mode === 'yield-once' && runs.get(input.subjectId) === 1) throw new JobYield();
      if (input.mode === 'permanent')
        throw new JobFailure({ code: 'bad_input', message: 'The input cannot work.' }, 'permanent');
      if (input.mode === 'hold' || input.mode === 'hold-ignoring-abort') {
        await new Promise<void>((resolve, reject) => {
          gates.set(input.subjectId, resolve);
          if (input.mode === 'hold')
            ctx.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
        });
      }
      return { key };
    },
    async onSettled(trx, job, outcome) {
      if (failSettleTimes > 0) {
        failSettleTimes--;
        // A real error raised by the database inside the finishing transaction.
        await sql`select * from no_such_table_for_the_test`.execute(trx);
      }
      settled.set(job.subjectId, [...(settled.get(job.subjectId) ?? []), outcome]);
    },
  };
  return {
    handler,
    runs,
    settled,
    uploaded,
    release: (id: string) => gates.get(id)?.(),
    whenStarted: (id: string) => new Promise<void>((r) => started.set(id, r)),
    failSettle: (n: number) => {
      failSettleTimes = n;
    },
  };
}

describe(`the job system (${DB})`, { timeout: 120_000 }, () => {
  let t: TestServices;
  const probe = probeKind('probe');
  let bg: Background | null = null;

  before(async () => {
    t = await createTestServices({
      env: { LIPSYNC_JOB_LEASE_SECONDS: '2', LIPSYNC_JOB_MAX_ATTEMPTS: '3', LIPSYNC_WORKER_CONCURRENCY: '2' },
    });
    t.services.handlers.register(probe.handler);
  });
  after(async () => {
    await bg?.stop();
    await t?.cleanup();
  });

  const jobs = () => t.services.store.jobs;
  const kysely = () => t.services.store.db.kysely;
  async function enqueue(step: Step, org = 'org-a', kind = 'probe', maxAttempts = 3): Promise<JobRecord> {
    const j = await kysely()
      .transaction()
      .execute((trx) =>
        t.services.queue.enqueue(trx, {
          kind,
          subjectId: randomUUID(),
          organizationId: org,
          payload: step,
          payloadVersion: 1,
          maxAttempts,
          timeoutMs: 60_000,
        }),
      );
    await t.services.queue.announce(kind);
    return j;
  }
  /** Waits (on the event bus, no fixed sleeps) until the job satisfies `done`. */
  async function waitFor(
    subjectId: string,
    done: (j: JobRecord) => boolean,
    kind = 'probe',
  ): Promise<JobRecord> {
    for (let i = 0; i < 200; i++) {
      const change = t.services.bus.waitForChange(subjectId, 500);
      const j = (await jobs().findBySubject(kind, subjectId))!;
      if (done(j)) {
        await change;
        return j;
      }
      await change;
    }
    throw new Error(`job of ${subjectId} never reached the expected state`);
  }
  const dueNow = (id: string) =>
    kysely().updateTable('jobs').set({ run_at: 0 }).where('id', '=', id).execute();
  const startWorkers = () => {
    bg ??= startBackground(t.services, { kinds: ['probe'] });
    return bg;
  };
  const stopWorkers = async () => {
    await bg?.stop();
    bg = null;
  };

  test('a new kind runs by registering a handler: prepared, run, outputs promoted, settled once', async () => {
    startWorkers();
    const j = await enqueue({ mode: 'ok' });
    const done = await waitFor(j.subjectId, (x) => x.status === 'completed');
    assert.equal(done.attempts, 1);
    assert.equal(done.progress, 100);
    assert.equal(done.leaseToken, null);
    const outcome = probe.settled.get(j.subjectId);
    assert.equal(outcome?.length, 1);
    assert.equal(outcome?.[0]?.status, 'completed');
    const key = (outcome?.[0] as { result: { key: string } }).result.key;
    assert.match(key, new RegExp(`^jobs/${j.id}/[0-9a-f-]{36}/out\\.txt$`));
    assert.ok(await t.services.blobs.exists(key));
    assert.deepEqual(await t.services.blobs.list(`jobs/${j.id}/`), [key]);
  });

  test('a run that yields goes back to the queue at once, its attempt refunded, and continues', async () => {
    startWorkers();
    const j = await enqueue({ mode: 'yield-once' });
    const done = await waitFor(j.subjectId, (x) => x.status === 'completed');
    assert.equal(probe.runs.get(j.subjectId), 2);
    assert.equal(done.attempts, 1, 'a yield is not counted as an attempt');
    assert.equal(done.lastError, null);
    assert.equal(probe.settled.get(j.subjectId)?.length, 1);
  });

  test('a transient failure is retried later (backoff on the database clock); a permanent one ends at once', async () => {
    await stopWorkers();
    const flaky = await enqueue({ mode: 'transient' }, 'org-a', 'probe', 2);
    const broken = await enqueue({ mode: 'permanent' });
    startWorkers();
    const retrying = await waitFor(flaky.subjectId, (x) => x.status === 'queued' && x.attempts === 1);
    assert.ok(retrying.runAt > (await jobs().clock()), 'the retry is not due at once');
    assert.match(retrying.lastError ?? '', /job_failed/);
    assert.deepEqual(
      await t.services.blobs.list(`jobs/${flaky.id}/`),
      [],
      'a failed attempt leaves no files',
    );
    const failed = await waitFor(broken.subjectId, (x) => x.status === 'failed');
    assert.equal(failed.attempts, 1, 'a permanent failure is not retried');
    assert.equal(
      (probe.settled.get(broken.subjectId)?.[0] as { error: { code: string } }).error.code,
      'bad_input',
    );
    // the retry runs once due, and with no attempts left the job fails
    await dueNow(flaky.id);
    await t.services.queue.announce('probe');
    const last = await waitFor(flaky.subjectId, (x) => x.status === 'failed');
    assert.equal(last.attempts, 2);
    assert.equal(probe.runs.get(flaky.subjectId), 2);
    assert.equal(probe.settled.get(flaky.subjectId)?.length, 1);
  });

  test('a run that lost its lease writes nothing: no settlement, no output blob', async () => {
    startWorkers();
    for (const mode of ['hold', 'hold-ignoring-abort'] as const) {
      const subject = randomUUID();
      const started = probe.whenStarted(subject);
      const j = await kysely()
        .transaction()
        .execute((trx) =>
          t.services.queue.enqueue(trx, {
            kind: 'probe',
            subjectId: subject,
            organizationId: 'org-a',
            payload: { mode },
            payloadVersion: 1,
            maxAttempts: 3,
            timeoutMs: 60_000,
          }),
        );
      await t.services.queue.announce('probe');
      await started;
      assert.equal((await jobs().findBySubject('probe', subject))!.status, 'running');
      // another claim owns the job now (as after a requeue by the watchdog and a new claim)
      await kysely()
        .updateTable('jobs')
        .set({ lease_token: 'another-claim' })
        .where('id', '=', j.id)
        .execute();
      // with 'hold' the heartbeat notices and aborts the run; with 'hold-ignoring-abort' the run
      // completes anyway and its completion is refused by the fence
      probe.release(subject);
      for (let i = 0; i < 100 && (await t.services.blobs.list(`jobs/${j.id}/`)).length > 0; i++)
        await new Promise((r) => setTimeout(r, 50));
      assert.deepEqual(
        await t.services.blobs.list(`jobs/${j.id}/`),
        [],
        `${mode}: the attempt's files are gone`,
      );
      const after = (await jobs().findBySubject('probe', subject))!;
      assert.equal(after.status, 'running', `${mode}: untouched`);
      assert.equal(after.leaseToken, 'another-claim');
      assert.equal(probe.settled.get(subject), undefined, `${mode}: never settled`);
      await kysely().updateTable('jobs').set({ status: 'canceled' }).where('id', '=', j.id).execute();
    }
  });

  test('a database error while finishing: logged and retried, the process stays up, settled once', async () => {
    startWorkers();
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      probe.failSettle(1);
      const once = await enqueue({ mode: 'ok' });
      const done = await waitFor(once.subjectId, (x) => x.status === 'completed');
      assert.equal(done.attempts, 1, 'the finish was retried, not the run');
      assert.equal(probe.settled.get(once.subjectId)?.length, 1);
      // every try fails: the lease runs out, the watchdog requeues it, the next attempt completes
      probe.failSettle(4);
      const often = await enqueue({ mode: 'ok' });
      const requeued = await waitFor(often.subjectId, (x) => x.status === 'queued' && x.attempts === 1);
      await dueNow(requeued.id);
      await t.services.queue.announce('probe');
      const later = await waitFor(often.subjectId, (x) => x.status === 'completed');
      assert.equal(later.attempts, 2);
      assert.equal(probe.settled.get(often.subjectId)?.length, 1);
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  test('graceful shutdown hands a running job back at once, the attempt refunded', async () => {
    await stopWorkers();
    const subject = randomUUID();
    const started = probe.whenStarted(subject);
    await kysely()
      .transaction()
      .execute((trx) =>
        t.services.queue.enqueue(trx, {
          kind: 'probe',
          subjectId: subject,
          organizationId: 'org-a',
          payload: { mode: 'hold' },
          payloadVersion: 1,
          maxAttempts: 3,
          timeoutMs: 60_000,
        }),
      );
    startWorkers();
    await started;
    await stopWorkers();
    const j = (await jobs().findBySubject('probe', subject))!;
    assert.equal(j.status, 'queued');
    assert.equal(j.attempts, 0, "a shutdown is not the job's fault");
    assert.equal(j.leaseToken, null);
    assert.ok(j.runAt <= (await jobs().clock()), 'due at once for another worker');
    assert.deepEqual(await t.services.blobs.list(`jobs/${j.id}/`), []);
    await kysely().updateTable('jobs').set({ status: 'canceled' }).where('id', '=', j.id).execute();
  });

  test("fair share: one organization's backlog does not starve another's single job", async () => {
    await stopWorkers();
    const kind = 'fair';
    t.services.handlers.register({ ...probeKind(kind).handler });
    const backlog = [];
    for (let i = 0; i < 5; i++) backlog.push(await enqueue({ mode: 'ok' }, 'org-busy', kind));
    const single = await enqueue({ mode: 'ok' }, 'org-quiet', kind);
    const first = await t.services.queue.claim([kind], 'w1', 60_000);
    const second = await t.services.queue.claim([kind], 'w2', 60_000);
    // the backlog is older (jobs made within one millisecond tie on age, so any of them may come first)
    assert.ok(
      backlog.some((b) => b.id === first?.id),
      'a backlog job first: it is older',
    );
    assert.equal(second?.id, single.id, 'then the organization with nothing running');
    // kinds a worker does not serve are never claimed
    assert.equal(await t.services.queue.claim(['some-other-kind'], 'w3', 60_000), null);
    await kysely().updateTable('jobs').set({ status: 'canceled' }).where('kind', '=', kind).execute();
  });

  test('fair share, one worker slot: the organization served longest ago goes first, not the oldest job', async () => {
    await stopWorkers();
    const kind = 'turns-one-slot';
    const [busy, quiet] = [`org-busy-${randomUUID()}`, `org-quiet-${randomUUID()}`];
    const order: string[] = [];
    let allRan = () => {};
    const ran = new Promise<void>((resolve) => (allRan = resolve));
    const oneSlot = await createTestServices({
      shareDatabaseWith: t,
      env: { LIPSYNC_WORKER_CONCURRENCY: '1' },
    });
    const handler: JobHandler<Step, { org: string }, { key: string }> = {
      kind,
      payloadVersion: 1,
      parsePayload: (raw) => raw as Step,
      prepare: async (job) => ({ org: job.organizationId }),
      async run(input) {
        order.push(input.org);
        if (order.length === 5) allRan();
        return { key: 'none' };
      },
    };
    t.services.handlers.register(handler);
    oneSlot.services.handlers.register(handler);
    // Four of the busy organization's jobs are older than the quiet one's single job.
    for (let i = 0; i < 4; i++) await enqueue({ mode: 'ok' }, busy, kind);
    await enqueue({ mode: 'ok' }, quiet, kind);
    const pool = startBackground(oneSlot.services, { kinds: [kind] });
    try {
      await ran;
    } finally {
      await pool.stop();
      await oneSlot.cleanup();
    }
    // The old order (nobody running between jobs, so oldest first) ran the quiet job last.
    assert.deepEqual(order, [busy, quiet, busy, busy, busy]);
  });

  test('fair share, several slots: fewest running first, then the organization served longest ago', async () => {
    await stopWorkers();
    const kind = 'turns-slots';
    t.services.handlers.register({ ...probeKind(kind).handler });
    const [a, b, c] = ['a', 'b', 'c'].map((x) => `org-${x}-${randomUUID()}`) as [string, string, string];
    const queued = new Map<string, string>();
    for (const org of [a, a, a, b, b, b, c]) queued.set((await enqueue({ mode: 'ok' }, org, kind)).id, org);
    const claim = async () => {
      const j = await t.services.queue.claim([kind], 'w', 60_000);
      assert.ok(j, 'a job is claimed');
      return j;
    };
    const finish = (j: JobRecord) =>
      kysely().updateTable('jobs').set({ status: 'completed' }).where('id', '=', j.id).execute();
    // Two slots: the oldest job, then the organization with nothing running.
    const first = await claim();
    const second = await claim();
    assert.deepEqual([first.organizationId, second.organizationId], [a, b]);
    await finish(first);
    // a and c both have nothing running; c has not been served yet (the old order took a's next job).
    const third = await claim();
    assert.equal(third.organizationId, c);
    await finish(second);
    // a and b have nothing running; a was served before b.
    const fourth = await claim();
    assert.equal(fourth.organizationId, a);
    await finish(third);
    // b has nothing running, a has one: b, even though a was served longer ago.
    assert.equal((await claim()).organizationId, b);
    await kysely().updateTable('jobs').set({ status: 'canceled' }).where('kind', '=', kind).execute();
  });

  test("claims racing for an organization's last shared slot: only one wins", async () => {
    await stopWorkers();
    const kind = 'shared-race';
    t.services.handlers.register({ ...probeKind(kind).handler });
    for (let round = 0; round < 5; round++) {
      const org = `org-shared-${randomUUID()}`;
      for (let i = 0; i < 4; i++) {
        await kysely()
          .transaction()
          .execute((trx) =>
            t.services.queue.enqueue(trx, {
              kind,
              subjectId: randomUUID(),
              organizationId: org,
              payload: { mode: 'ok' },
              payloadVersion: 1,
              maxAttempts: 3,
              timeoutMs: 60_000,
              shareLimit: 1,
            }),
          );
      }
      const claims = await Promise.all(
        [1, 2, 3, 4].map((w) => t.services.queue.claim([kind], `w${w}`, 60_000)),
      );
      assert.equal(claims.filter((j) => j !== null).length, 1, 'one claim per shared slot');
      const running = await kysely()
        .selectFrom('jobs')
        .select('id')
        .where('organization_id', '=', org)
        .where('status', '=', 'running')
        .execute();
      assert.equal(running.length, 1);
    }
    await kysely().updateTable('jobs').set({ status: 'canceled' }).where('kind', '=', kind).execute();
  });

  test('two pools racing for one queue: every job runs exactly once', async () => {
    await stopWorkers();
    const kind = 'race';
    const race = probeKind(kind);
    t.services.handlers.register(race.handler);
    const ids: string[] = [];
    for (let i = 0; i < 24; i++) ids.push((await enqueue({ mode: 'ok' }, `org-${i % 3}`, kind)).subjectId);
    const a = startBackground(t.services, { kinds: [kind] });
    const b = startBackground(t.services, { kinds: [kind] });
    try {
      for (const id of ids) {
        for (let i = 0; i < 200; i++) {
          const change = t.services.bus.waitForChange(id, 500);
          const j = (await jobs().findBySubject(kind, id))!;
          await change;
          if (j.status === 'completed') break;
        }
      }
      for (const id of ids) {
        assert.equal(race.runs.get(id), 1, `${id} ran once`);
        assert.equal(race.settled.get(id)?.length, 1);
        assert.equal((await jobs().findBySubject(kind, id))!.attempts, 1);
      }
    } finally {
      await a.stop();
      await b.stop();
    }
  });

  test('a pool warms its kinds up at start without holding claims back, and stop waits for the warm-up', async () => {
    await stopWorkers();
    const kind = 'warming';
    const warm = probeKind(kind);
    const calls: { jobsAtOnce: number }[] = [];
    let finishWarmUp = () => {};
    const warmedUp = new Promise<void>((resolve) => (finishWarmUp = resolve));
    t.services.handlers.register({
      ...warm.handler,
      warmUp: async (o) => {
        calls.push(o);
        await warmedUp;
      },
    });
    const cold = startBackground(t.services, { kinds: [kind], warmUp: false });
    await cold.stop();
    assert.equal(calls.length, 0, 'warmUp: false warms nothing');

    const pool = startBackground(t.services, { kinds: [kind], warmUp: true });
    assert.deepEqual(calls, [{ jobsAtOnce: 2 }], 'once, for each job the pool may run at once');
    // A job is claimed and run while the warm-up is still under way.
    const j = await enqueue({ mode: 'ok' }, 'org-a', kind);
    await waitFor(j.subjectId, (x) => x.status === 'completed', kind);
    assert.equal(warm.runs.get(j.subjectId), 1);
    // stop() returns only after the warm-up ended (a thread stopped mid-load can abort the process).
    let stopped = false;
    const stopping = pool.stop().then(() => (stopped = true));
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    assert.equal(stopped, false);
    finishWarmUp();
    await stopping;
    assert.equal(stopped, true);
  });

  test('a failed warm-up is logged and the pool runs jobs as usual', async () => {
    await stopWorkers();
    const kind = 'warm-fails';
    const warm = probeKind(kind);
    t.services.handlers.register({
      ...warm.handler,
      warmUp: () => Promise.reject(new Error('models missing')),
    });
    const pool = startBackground(t.services, { kinds: [kind], warmUp: true });
    try {
      const j = await enqueue({ mode: 'ok' }, 'org-a', kind);
      await waitFor(j.subjectId, (x) => x.status === 'completed', kind);
      assert.equal(warm.runs.get(j.subjectId), 1);
    } finally {
      await pool.stop();
    }
  });

  test('a process refuses to start while jobs of a kind it has no handler for are waiting', async () => {
    await enqueue({ mode: 'ok' }, 'org-a', 'probe');
    await kysely()
      .insertInto('jobs')
      .values({
        id: randomUUID(),
        kind: 'mystery',
        subject_id: randomUUID(),
        organization_id: 'org-a',
        payload: '{}',
        payload_version: 1,
        status: 'queued',
        priority: 0,
        run_at: 0,
        attempts: 0,
        max_attempts: 1,
        lease_token: null,
        lease_expires_at: null,
        locked_by: null,
        parent_id: null,
        timeout_ms: 1000,
        deadline_at: null,
        cancel_requested: 0,
        progress: 0,
        last_error: null,
        created_at: 0,
        updated_at: 0,
        started_at: null,
        finished_at: null,
      })
      .execute();
    const config = loadConfig({ ...t.env, LOG_LEVEL: 'silent' });
    await assert.rejects(createServices(config, createLogger('silent')), (err: unknown) => {
      assert.ok(err instanceof UnknownJobKindError);
      assert.deepEqual(
        err.kinds.filter((k) => k === 'mystery'),
        ['mystery'],
      );
      return true;
    });
    await kysely()
      .deleteFrom('jobs')
      .where('kind', 'in', ['mystery', 'probe'])
      .where('status', '=', 'queued')
      .execute();
  });

  test(
    'PostgreSQL: the listener comes back after its backend is terminated, and waiters wake again',
    {
      skip: DB === 'postgres' ? false : 'PostgreSQL only',
    },
    async () => {
      const bus = t.services.bus as PostgresEventBus;
      const terminated = await sql<{ pid: number }>`
      select pid from pg_stat_activity
      where application_name = 'lipsync-listener' and datname = current_database() and pid <> pg_backend_pid()`.execute(
        kysely(),
      );
      assert.ok(terminated.rows.length >= 1);
      const back = new Promise<number>((r) => bus.events.once('listening', r));
      for (const row of terminated.rows) await sql`select pg_terminate_backend(${row.pid})`.execute(kysely());
      const pid = await back;
      assert.ok(!terminated.rows.some((r) => r.pid === pid), 'a new backend');
      // a notification from another connection reaches a waiter again
      const id = randomUUID();
      const woke = bus.waitForChange(id, 30_000);
      await sql`select pg_notify('lipsync_subject', ${id})`.execute(kysely());
      assert.equal(await woke, 'changed');
      // and work announcements reach idle workers
      const work = new Promise<string>((r) => {
        const off = bus.onWork((k) => {
          if (k === 'probe') {
            off();
            r(k);
          }
        });
      });
      await sql`select pg_notify('lipsync_work', 'probe')`.execute(kysely());
      assert.equal(await work, 'probe');
    },
  );
});
