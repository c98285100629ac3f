// Jobs claimed and completed per second by the job system's worker pool (src/jobs/worker.ts, through
// the database worker port and the JobQueue, wired as `startBackground` wires them) with 1, 4 and 16
// concurrent workers, on SQLite and PostgreSQL, as ratios to bare loops measured in the same run:
//
//   bare claim loop (the baseline)  the same number of loops, each running the claim statement
//                                   (store.jobs.claim) and then the settle statement (store.jobs.settle),
//                                   each autocommitted: the SQL a job cannot do without, no handler
//   claim statement only            the claim statement alone, as the issue words it; its jobs stay
//                                   running, and the claim counts running jobs, so this loop slows
//                                   down as it goes (see bench/results/2026-history.md)
//
//   node --import tsx bench/queue.ts [--quick] [--no-postgres] [--jobs=N] [--rounds=N]
//                                    [--concurrency=1,4,16] [--orgs=N]
//
// The job kind is the benchmark's own: its handler prepares nothing, runs nothing and adds nothing to
// the settle transaction, so what is measured is the job system itself. Each measurement starts with
// N queued jobs spread over several organizations (inserted in bulk, not timed) and ends when the
// last of them is completed; then the jobs are deleted. Everything runs in this process, on the
// service container as `createServices` builds it: on SQLite every worker shares the one connection
// (as in the service), on PostgreSQL the pool of 10 connections.
import { randomUUID } from 'node:crypto';
import { sql, type Insertable } from 'kysely';
import { loadConfig } from '../src/config.js';
import { createLogger } from '../src/logger.js';
import { createServices } from '../src/app/container.js';
import type { Services } from '../src/services/index.js';
import { DatabaseWorkerPort, type ClaimedJob } from '../src/jobs/port.js';
import { WorkerPool } from '../src/jobs/worker.js';
import type { JobHandler } from '../src/jobs/handler.js';
import type { JobTable } from '../src/store/schema.js';
import { parseArgs, intOption } from './lib/args.js';
import { onCleanup, runMain } from './lib/cleanup.js';
import { deployment, postgresProblem, postgresUrlForDisplay } from './lib/deployment.js';
import { machineLine, median, num, printTable } from './lib/stats.js';

const KIND = 'bench-noop';

const args = parseArgs();
const rounds = intOption(args, 'rounds', args.quick ? 1 : 3);
const jobsPerRun = intOption(args, 'jobs', args.quick ? 200 : 500);
const orgCount = intOption(args, 'orgs', 8);
const concurrencies = (args.values.concurrency ?? '1,4,16').split(',').map((s) => {
  const c = Number(s);
  if (!Number.isInteger(c) || c <= 0 || c > 64) {
    console.error(`--concurrency takes positive integers up to 64, got ${s}`);
    process.exit(2);
  }
  return c;
});

type TargetName = 'bare' | 'claim' | 'pool';
const TARGETS: readonly TargetName[] = ['bare', 'claim', 'pool'];
const LABEL: Record<TargetName, string> = {
  bare: 'bare claim loop (baseline)',
  claim: 'claim statement only',
  pool: 'worker pool (job system)',
};

interface Sample {
  ms: number;
  /** CPU time of this process (user + system) per job, µs. */
  cpuUs: number;
}

/** The benchmark's job kind: no payload, no preparation, no work, no part in the transitions. */
const noopHandler: JobHandler<null, null, null> = {
  kind: KIND,
  payloadVersion: 1,
  parsePayload: () => null,
  prepare: async () => null,
  run: async () => null,
  onSettled: async () => undefined,
};

/** The database port, telling the benchmark about each completion once it is committed. */
class CountingPort extends DatabaseWorkerPort {
  onCompleted: () => void = () => undefined;

  override async complete(c: ClaimedJob, result: unknown): Promise<boolean> {
    const ok = await super.complete(c, result);
    if (ok) this.onCompleted();
    return ok;
  }
}

interface Bench {
  readonly database: 'sqlite' | 'postgres';
  readonly services: Services;
  readonly orgIds: string[];
  readonly port: CountingPort;
  readonly results: Map<string, Sample[]>;
}

async function open(database: 'sqlite' | 'postgres'): Promise<Bench> {
  const dep = await deployment(database);
  const config = loadConfig({ ...dep.env, LOG_LEVEL: 'warn' });
  const services = await createServices(config, createLogger(config.logLevel));
  onCleanup(`services (${database})`, () => services.close());
  services.handlers.register(noopHandler);
  const port = new CountingPort(
    services.store,
    services.queue,
    services.handlers,
    services.blobs,
    services.bus,
    services.logger.child({ component: 'jobs' }),
  );
  const orgIds = Array.from({ length: orgCount }, () => randomUUID());
  return { database, services, orgIds, port, results: new Map() };
}

/** N queued jobs of the benchmark's kind, due now, round-robin over the organizations. */
async function enqueue(b: Bench, count: number): Promise<void> {
  const { store } = b.services;
  const now = await store.jobs.clock();
  const rows: Insertable<JobTable>[] = Array.from({ length: count }, (_, i) => ({
    id: randomUUID(),
    kind: KIND,
    subject_id: randomUUID(),
    organization_id: b.orgIds[i % b.orgIds.length],
    payload: 'null',
    payload_version: 1,
    status: 'queued',
    priority: 0,
    run_at: now - 1000,
    attempts: 0,
    max_attempts: 3,
    lease_token: null,
    lease_expires_at: null,
    locked_by: null,
    parent_id: null,
    timeout_ms: 600_000,
    deadline_at: null,
    cancel_requested: 0,
    progress: 0,
    last_error: null,
    created_at: now - 1000 - count + i,
    updated_at: now - 1000,
    started_at: null,
    finished_at: null,
  }));
  await store.db.kysely.transaction().execute(async (trx) => {
    for (let i = 0; i < rows.length; i += 200) {
      await trx
        .insertInto('jobs')
        .values(rows.slice(i, i + 200))
        .execute();
    }
  });
}

/** Checks that every job reached the state the target leaves it in, then removes them all. */
async function checkAndClear(b: Bench, target: TargetName, count: number): Promise<void> {
  const { kysely } = b.services.store.db;
  const want = target === 'claim' ? 'running' : 'completed';
  const rows = await kysely
    .selectFrom('jobs')
    .select(['status', (eb) => eb.fn.countAll<number>().as('n')])
    .where('kind', '=', KIND)
    .groupBy('status')
    .execute();
  const got = rows.map((r) => `${r.status}=${Number(r.n)}`).join(', ');
  if (rows.length !== 1 || rows[0].status !== want || Number(rows[0].n) !== count) {
    throw new Error(`${b.database} ${target}: expected ${want}=${count}, found ${got || 'no jobs'}`);
  }
  await kysely.deleteFrom('jobs').where('kind', '=', KIND).execute();
  // The table holds only this measurement's rows: vacuuming keeps it the same size for the next one.
  if (b.database === 'postgres') await sql`vacuum jobs`.execute(kysely);
}

/** `concurrency` loops of the claim statement alone (or followed by the settle statement). */
async function bareLoops(b: Bench, concurrency: number, settle: boolean): Promise<void> {
  const { store, config } = b.services;
  const { kysely } = store.db;
  const owner = `bench-bare:${process.pid}`;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (;;) {
        const job = await store.jobs.claim(kysely, [KIND], owner, config.jobLeaseMs);
        if (!job) return;
        if (settle) {
          const token = job.leaseToken as string;
          await store.jobs.settle(kysely, job.id, { token, statuses: ['running'] }, 'completed', null);
        }
      }
    }),
  );
}

/** The job system's worker pool with `concurrency` loops, until `count` jobs are completed. */
async function poolRun(b: Bench, concurrency: number, count: number): Promise<() => Promise<void>> {
  const { config, handlers, logger } = b.services;
  const pool = new WorkerPool(
    b.port,
    handlers,
    {
      kinds: [KIND],
      concurrency,
      leaseMs: config.jobLeaseMs,
      idlePollMs: config.workerIdlePollMs,
      tempRoot: config.tempDir,
    },
    logger.child({ component: 'worker' }),
  );
  let done = 0;
  const all = new Promise<void>((resolve) => {
    b.port.onCompleted = () => {
      if (++done === count) resolve();
    };
  });
  pool.start();
  await all;
  return () => pool.stop();
}

async function measure(b: Bench, target: TargetName, concurrency: number, count: number): Promise<Sample> {
  await enqueue(b, count);
  let stop: (() => Promise<void>) | null = null;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  if (target === 'pool') stop = await poolRun(b, concurrency, count);
  else await bareLoops(b, concurrency, target === 'bare');
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  await stop?.();
  await checkAndClear(b, target, count);
  return { ms, cpuUs: (cpu.user + cpu.system) / count };
}

const key = (t: TargetName, c: number) => `${t}@${c}`;
const jobsPerSecond = (s: Sample, count: number) => (count * 1000) / s.ms;

await runMain(
  'queue',
  async () => {
    console.log('# Job queue: jobs claimed and completed per second against a bare claim loop');
    console.log(
      `${machineLine()}\n${jobsPerRun} jobs per measurement over ${orgCount} organizations, ` +
        `concurrency ${concurrencies.join(', ')}, ${rounds} round(s)`,
    );
    const benches: Bench[] = [await open('sqlite')];
    const pgProblem = args.noPostgres ? 'skipped (--no-postgres)' : await postgresProblem();
    if (pgProblem === null) {
      console.log(`PostgreSQL: ${postgresUrlForDisplay()} (a fresh schema)`);
      benches.push(await open('postgres'));
    } else {
      console.log(`PostgreSQL not measured: ${pgProblem}`);
    }

    // Warm-up: statement caches, the JIT, the pg pool's connections.
    for (const b of benches) {
      for (const t of TARGETS) await measure(b, t, Math.max(...concurrencies), Math.min(200, jobsPerRun));
    }

    for (let r = 1; r <= rounds; r++) {
      for (const b of benches) {
        for (const c of concurrencies) {
          // The targets take turns, in a different order each round.
          const order = TARGETS.map((_, i) => TARGETS[(i + r - 1) % TARGETS.length]);
          const line: string[] = [];
          for (const t of order) {
            const s = await measure(b, t, c, jobsPerRun);
            const list = b.results.get(key(t, c)) ?? [];
            list.push(s);
            b.results.set(key(t, c), list);
            line.push(`${t} ${num(jobsPerSecond(s, jobsPerRun), 0)}`);
          }
          console.log(`  round ${r}/${rounds} ${b.database} x${c}: ${line.join(', ')} jobs/s`);
        }
      }
    }

    // Ratios are taken per round (against the loops of the same round and concurrency), then the
    // median over rounds is shown.
    for (const b of benches) {
      console.log('');
      console.log(
        `${b.database}, ${jobsPerRun} jobs: medians over ${rounds} round(s). "x bare" is the ratio to ` +
          'the bare claim loop (claim + settle statements), "x claim" to the claim statement only, of the ' +
          'same round and concurrency. CPU is this process only' +
          (b.database === 'postgres' ? ' (not the PostgreSQL server).' : ' (SQLite runs in it).'),
      );
      const rows: string[][] = [['workers', 'target', 'jobs/s', 'x bare', 'x claim', 'CPU us/job', 'x bare']];
      const ratioTo = (s: Sample[], base: Sample[], f: (x: Sample) => number) =>
        `${median(s.map((x, i) => f(x) / f(base[i]))).toFixed(2)}x`;
      for (const c of concurrencies) {
        const bare = b.results.get(key('bare', c)) as Sample[];
        const claim = b.results.get(key('claim', c)) as Sample[];
        for (const t of TARGETS) {
          const s = b.results.get(key(t, c)) as Sample[];
          rows.push([
            String(c),
            LABEL[t],
            num(median(s.map((x) => jobsPerSecond(x, jobsPerRun))), 0),
            ratioTo(s, bare, (x) => 1 / x.ms),
            ratioTo(s, claim, (x) => 1 / x.ms),
            num(median(s.map((x) => x.cpuUs)), 0),
            ratioTo(s, bare, (x) => x.cpuUs),
          ]);
        }
      }
      printTable(rows);
    }
  },
  // A generous ceiling: 10 ms per job is 20 times slower than PostgreSQL on a busy 2-core machine.
  { maxMs: 60_000 + rounds * concurrencies.length * TARGETS.length * (jobsPerRun * 10 + 2_000) },
);
