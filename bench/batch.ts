// Batches (POST /v2/batch), on SQLite and, when it answers, PostgreSQL, each figure a ratio to a
// baseline measured in the same run:
//
//   validate  a 500-record JSONL file sent with dry_run=true (every record checked by the rules of
//             POST /v2/generate, its two assets resolved, nothing created), against splitting the same
//             file into lines and JSON.parse-ing each (the baseline); parseBatchFile alone is shown too
//   create    the same file without dry_run (the batch, its 500 records and its job in one
//             transaction; no worker runs, and each batch is canceled afterwards, untimed), against the
//             same baseline
//   children  N single generations (POST /v2/generate, all sent at once, each long-polled to its end)
//             against a batch of the same N requests run to COMPLETED, on one service with in-process
//             workers and the passthrough engine; wall time and CPU time (this process and its
//             ffmpeg/ffprobe runs) per generation of each, and the batch's per child as a ratio of
//             the single's, paired per round, the order alternating
//
// Everything runs in this process through app.inject on a test service (createTestServices), as the
// integration tests do; inputs are short clips cut from the shared fixtures (makeTestMedia) into a
// temp folder.
//
//   node --import tsx bench/batch.ts [--quick] [--no-postgres] [--records=500] [--runs=N]
//                                    [--children=20] [--rounds=N] [--workers=2]
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { parseArgs, intOption } from './lib/args.js';
import { onCleanup, runMain } from './lib/cleanup.js';
import { postgresProblem, postgresUrlForDisplay } from './lib/deployment.js';
import { machineLine, median, num, printTable } from './lib/stats.js';
import { createOrgWithKey, createTestServices, fixture, type TestServices } from '../test/helpers/index.js';
import { encodeForm } from '../test/helpers/multipart.js';
import {
  makeTestMedia,
  postGenerate,
  uploadAsset,
  waitTerminal,
  type TestMedia,
} from '../test/integration/generations-support.js';
import { startBackground } from '../src/app/runtime.js';
import { parseBatchFile } from '../src/domain/batches.js';

const args = parseArgs();
const RECORDS = intOption(args, 'records', 500);
const RUNS = intOption(args, 'runs', args.quick ? 2 : 5);
const CHILDREN = intOption(args, 'children', 20);
const ROUNDS = intOption(args, 'rounds', args.quick ? 1 : 2);
const WORKERS = intOption(args, 'workers', 2);
/** Passes of the baseline per measurement: one pass takes well under a millisecond. */
const BASELINE_PASSES = 200;

type Database = 'sqlite' | 'postgres';
type Headers = Record<string, string>;

interface Timing {
  ms: number;
  cpuMs: number;
}

function cpuMsSince(cpu0: NodeJS.CpuUsage): number {
  const cpu = process.cpuUsage(cpu0);
  return (cpu.user + cpu.system) / 1000;
}

const CLOCK_TICKS = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/**
 * CPU time (ms) of this process and of its ended child processes (ffmpeg, ffprobe: cutime + cstime of
 * /proc/self/stat, 10 ms resolution); NaN where /proc is missing. Not the PostgreSQL server's.
 */
function cpuWithChildrenMs(): number {
  try {
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const children = (Number(f[13]) + Number(f[14])) / CLOCK_TICKS; // fields 16 and 17
    const own = process.cpuUsage();
    return (own.user + own.system) / 1000 + children * 1000;
  } catch {
    return NaN;
  }
}

async function timed(fn: () => Promise<unknown>): Promise<Timing> {
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  await fn();
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000 };
}

/** A ratio as "1.23x", or "123x" from 100 up. */
const times = (v: number): string => `${v.toFixed(v >= 100 ? 0 : v >= 10 ? 1 : 2)}x`;

const jsonl = (records: unknown[]): Buffer =>
  Buffer.from(records.map((r) => JSON.stringify(r)).join('\n') + '\n');

function batchFile(n: number, video: string, audio: string, prefix: string): Buffer {
  return jsonl(
    Array.from({ length: n }, (_, i) => ({
      request_id: `${prefix}-${i + 1}`,
      endpoint: '/v2/generate',
      payload: {
        model: 'lipsync-2',
        input: [
          { type: 'video', assetId: video },
          { type: 'audio', assetId: audio },
        ],
      },
    })),
  );
}

/** The baseline: the file split into lines and each non-empty line parsed, `passes` times; ms per pass. */
function baselinePass(file: Buffer, passes: number): Timing {
  let sink = 0;
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  for (let p = 0; p < passes; p++) {
    for (const line of file.toString('utf8').split('\n')) {
      if (line) sink += (JSON.parse(line) as { payload: object }).payload ? 1 : 0;
    }
  }
  const ms = (performance.now() - t0) / passes;
  const cpu = process.cpuUsage(cpu0);
  if (sink !== passes * RECORDS) throw new Error(`the baseline parsed ${sink} records`);
  return { ms, cpuMs: (cpu.user + cpu.system) / 1000 / passes };
}

async function submitBatch(t: TestServices, headers: Headers, file: Buffer, dryRun: boolean) {
  const form = await encodeForm([
    ...(dryRun ? [{ name: 'dry_run', value: 'true' }] : []),
    { name: 'input', file, filename: 'batch.jsonl', type: 'application/x-ndjson' },
  ]);
  // The form is encoded before the clock starts: what is timed is the request.
  return () =>
    t.app.inject({
      method: 'POST',
      url: '/v2/batch',
      headers: { ...headers, ...form.headers },
      payload: form.payload,
    });
}

interface FileFigures {
  baseline: Timing[];
  parse: Timing[];
  validate: Timing[];
  create: Timing[];
  cancel: Timing[];
}

/** Parts 1 and 2: validating and creating a RECORDS-record batch, no worker running. */
async function measureFile(t: TestServices, m: TestMedia): Promise<FileFigures> {
  const org = await createOrgWithKey(t.services, { plan: 'scale' });
  const headers = org.owner.headers;
  const video = await uploadAsset(t.app, headers, m.video);
  const audio = await uploadAsset(t.app, headers, m.audioShort);
  const file = batchFile(RECORDS, video, audio, 'req');
  const limits = { minRecords: 20, maxRecords: RECORDS };
  const f: FileFigures = { baseline: [], parse: [], validate: [], create: [], cancel: [] };

  const dry = await submitBatch(t, headers, file, true);
  const create = await submitBatch(t, headers, file, false);
  const once = async (target: 'validate' | 'create'): Promise<Timing> => {
    const send = target === 'validate' ? dry : create;
    const t0 = process.cpuUsage();
    const w0 = performance.now();
    const r = await send();
    const time = { ms: performance.now() - w0, cpuMs: cpuMsSince(t0) };
    const body = r.json() as { status?: string; id?: string; summary?: { assets_resolved: number } };
    if (r.statusCode !== 200)
      throw new Error(`POST /v2/batch (${target}) answered ${r.statusCode}: ${r.body}`);
    if (target === 'validate' && body.summary?.assets_resolved !== 2 * RECORDS)
      throw new Error(`the dry run resolved ${body.summary?.assets_resolved} assets: ${r.body}`);
    if (target === 'create') {
      if (body.status !== 'PENDING') throw new Error(`the batch was created ${body.status}`);
      // Canceled so that the next one fits the plan's batch concurrency (and no worker ever runs it).
      f.cancel.push(
        await timed(async () => {
          const c = await t.app.inject({ method: 'POST', url: `/v2/batch/${body.id}/cancel`, headers });
          if (c.statusCode !== 200 || c.json().status !== 'FAILED')
            throw new Error(`cancel answered ${c.statusCode}: ${c.body}`);
        }),
      );
    }
    return time;
  };

  // Warm-up of each: the validator, statement caches, the JIT.
  baselinePass(file, BASELINE_PASSES);
  await once('validate');
  await once('create');
  f.cancel.length = 0;
  for (let i = 0; i < RUNS; i++) {
    f.baseline.push(baselinePass(file, BASELINE_PASSES));
    f.parse.push(
      await timed(async () => {
        for (let p = 0; p < BASELINE_PASSES; p++) parseBatchFile(file, limits);
      }).then((x) => ({ ms: x.ms / BASELINE_PASSES, cpuMs: x.cpuMs / BASELINE_PASSES })),
    );
    // The two requests take turns, in a different order each run.
    const order: ('validate' | 'create')[] = i % 2 === 0 ? ['validate', 'create'] : ['create', 'validate'];
    for (const target of order) f[target].push(await once(target));
  }
  return f;
}

interface ChildFigures {
  /** Per round: wall ms per generation. */
  single: number[];
  batch: number[];
  /** Per round: CPU ms per generation, this process and its ffmpeg/ffprobe runs. */
  singleCpu: number[];
  batchCpu: number[];
  /** Per round, ms: POSTs of the singles (all of them answered). */
  singlePost: number[];
  /** Per round, ms: the batch's creation span (batch created -> last child created). */
  batchCreate: number[];
  /** Per round, ms: batch created -> first child started. */
  batchFirstStart: number[];
}

/** Part 3: N single generations against a batch of the same N requests, on in-process workers. */
async function measureChildren(t: TestServices, m: TestMedia): Promise<ChildFigures> {
  // Enterprise with a contracted concurrency of N: the N singles are all admitted at once.
  const org = await createOrgWithKey(t.services, { plan: 'enterprise', concurrency: CHILDREN });
  const headers = org.owner.headers;
  const video = await uploadAsset(t.app, headers, m.video);
  const audio = await uploadAsset(t.app, headers, m.audioShort);
  const body = {
    model: 'lipsync-2',
    input: [
      { type: 'video', assetId: video },
      { type: 'audio', assetId: audio },
    ],
  };
  const { kysely } = t.services.store.db;
  const bg = startBackground(t.services);
  const stopWorkers = onCleanup('workers', () => bg.stop());

  async function singles() {
    const cpu0 = cpuWithChildrenMs();
    const t0 = performance.now();
    let postMs = 0;
    const ids = await Promise.all(
      Array.from({ length: CHILDREN }, async () => {
        const r = await postGenerate(t.app, headers, body);
        if (r.statusCode !== 201) throw new Error(`POST /v2/generate answered ${r.statusCode}: ${r.body}`);
        postMs = Math.max(postMs, performance.now() - t0);
        return (r.json() as { id: string }).id;
      }),
    );
    const ends = await Promise.all(ids.map((id) => waitTerminal(t.app, headers, id, 300_000)));
    const ms = performance.now() - t0;
    const cpu = cpuWithChildrenMs() - cpu0;
    const bad = ends.find((g) => g.status !== 'COMPLETED');
    if (bad) throw new Error(`a single generation ended ${bad.status}: ${JSON.stringify(bad.error)}`);
    return { perGen: ms / CHILDREN, cpuPerGen: cpu / CHILDREN, postMs };
  }

  let n = 0;
  async function batch() {
    const file = batchFile(CHILDREN, video, audio, `run${++n}`);
    const submit = await submitBatch(t, headers, file, false);
    const cpu0 = cpuWithChildrenMs();
    const t0 = performance.now();
    const r = await submit();
    if (r.statusCode !== 200) throw new Error(`POST /v2/batch answered ${r.statusCode}: ${r.body}`);
    const id = (r.json() as { id: string }).id;
    for (;;) {
      // Subscribed before the read, so that an end committed in between is not slept through.
      const stop = new AbortController();
      const change = t.services.bus.waitForChange(id, 2_000, stop.signal);
      const g = await t.app.inject({ method: 'GET', url: `/v2/batch/${id}`, headers });
      const b = g.json() as { status: string; metrics: { success_count: number } };
      const ended = b.status === 'COMPLETED' || b.status === 'FAILED';
      if (ended) stop.abort();
      await change;
      if (b.status === 'FAILED') throw new Error(`the batch ended FAILED: ${g.body}`);
      if (ended) {
        if (b.metrics.success_count !== CHILDREN) throw new Error(`the batch ended with ${g.body}`);
        break;
      }
    }
    const ms = performance.now() - t0;
    const cpu = cpuWithChildrenMs() - cpu0;
    const created = Date.parse((await t.services.store.batches.find(id))!.createdAt);
    const rows = await kysely
      .selectFrom('generations')
      .select(['created_at', 'started_at'])
      .where('source', '=', `batch:${id}`)
      .execute();
    if (rows.length !== CHILDREN) throw new Error(`the batch has ${rows.length} children`);
    const lastCreated = Math.max(...rows.map((x) => Date.parse(x.created_at)));
    const firstStart = Math.min(...rows.map((x) => Date.parse(x.started_at as string)));
    return {
      perGen: ms / CHILDREN,
      cpuPerGen: cpu / CHILDREN,
      createMs: lastCreated - created,
      firstStartMs: firstStart - created,
    };
  }

  const f: ChildFigures = {
    single: [],
    batch: [],
    singleCpu: [],
    batchCpu: [],
    singlePost: [],
    batchCreate: [],
    batchFirstStart: [],
  };
  // Warm-up: one single generation (the media path, ffmpeg's caches); a batch has at least 20 records.
  await postGenerate(t.app, headers, body).then((r) => waitTerminal(t.app, headers, r.json().id, 300_000));
  for (let r = 1; r <= ROUNDS; r++) {
    const order = r % 2 === 1 ? (['single', 'batch'] as const) : (['batch', 'single'] as const);
    const line: string[] = [];
    for (const target of order) {
      if (target === 'single') {
        const s = await singles();
        f.single.push(s.perGen);
        f.singleCpu.push(s.cpuPerGen);
        f.singlePost.push(s.postMs);
        line.push(`singles ${num(s.perGen, 0)} ms/generation`);
      } else {
        const b = await batch();
        f.batch.push(b.perGen);
        f.batchCpu.push(b.cpuPerGen);
        f.batchCreate.push(b.createMs);
        f.batchFirstStart.push(b.firstStartMs);
        line.push(`batch ${num(b.perGen, 0)} ms/child`);
      }
    }
    console.log(`  round ${r}/${ROUNDS}: ${line.join(', ')}`);
  }
  await bg.stop();
  stopWorkers();
  return f;
}

async function measure(database: Database, m: TestMedia) {
  console.log(`\n## ${database}`);
  const t = await createTestServices({
    database,
    env: {
      LIPSYNC_DEFAULT_ENGINE: 'passthrough',
      LIPSYNC_RATE_LIMIT_ENABLED: 'false',
      LIPSYNC_WORKER_CONCURRENCY: String(WORKERS),
    },
  });
  onCleanup(`test services (${database})`, () => t.cleanup());
  const file = await measureFile(t, m);
  const children = await measureChildren(t, m);
  return { database, file, children };
}

await runMain(
  'batch',
  async () => {
    console.log(
      '# Batches: validating and creating a batch file, and a batch child against a single generation',
    );
    console.log(machineLine());
    console.log(
      `${RECORDS} records x ${RUNS} run(s) for validate/create; ${CHILDREN} generations x ${ROUNDS} round(s), ` +
        `${WORKERS} in-process worker(s), passthrough engine`,
    );
    if (!existsSync(fixture('media/face_5.mp4')))
      throw new Error(`the shared fixtures are missing (${fixture('media')}): set LIPSYNC_FIXTURES_DIR`);
    const m = await makeTestMedia();
    onCleanup(`test media ${m.dir}`, () => m.cleanup());
    const databases: Database[] = ['sqlite'];
    const pgProblem = args.noPostgres ? 'skipped (--no-postgres)' : await postgresProblem();
    if (pgProblem === null) {
      console.log(`PostgreSQL: ${postgresUrlForDisplay()} (a fresh schema)`);
      databases.push('postgres');
    } else {
      console.log(`PostgreSQL not measured: ${pgProblem}`);
    }

    const results = [];
    for (const d of databases) results.push(await measure(d, m));

    console.log('');
    console.log(
      `A ${RECORDS}-record file: medians over ${RUNS} run(s), after one warm-up. "x parse" is the ratio to ` +
        'splitting the file into lines and JSON.parse-ing each, in the same run (per run, then the median). ' +
        'CPU is this process' +
        (databases.includes('postgres') ? ' (not the PostgreSQL server).' : '.'),
    );
    const rows: string[][] = [['database', 'what', 'ms', 'µs/record', 'x parse', 'CPU ms', 'x parse']];
    for (const { database, file: f } of results) {
      const line = (what: string, s: Timing[]) => {
        const wall = median(s.map((x) => x.ms));
        rows.push([
          database,
          what,
          num(wall, wall < 10 ? 2 : 0),
          num((wall * 1000) / RECORDS, 0),
          times(median(s.map((x, i) => x.ms / f.baseline[i].ms))),
          num(median(s.map((x) => x.cpuMs)), 2),
          times(median(s.map((x, i) => x.cpuMs / f.baseline[i].cpuMs))),
        ]);
      };
      line('JSON.parse line by line (baseline)', f.baseline);
      line('parseBatchFile (the file rules only)', f.parse);
      line('POST /v2/batch dry_run=true (validate)', f.validate);
      line('POST /v2/batch (create, no worker)', f.create);
      line('POST /v2/batch/{id}/cancel (after each create)', f.cancel);
    }
    printTable(rows);

    console.log('');
    console.log(
      `${CHILDREN} generations, medians over ${ROUNDS} round(s) after one warm-up generation: singles all ` +
        'POSTed at once and long-polled, against one batch of the same requests run to COMPLETED. Ratios ' +
        'paired per round. CPU is per generation: this process and its ffmpeg/ffprobe runs' +
        (databases.includes('postgres') ? ' (not the PostgreSQL server).' : '.'),
    );
    const crows: string[][] = [
      [
        'database',
        'single ms/generation',
        'batch ms/child',
        'x single',
        'per round',
        'CPU ms single',
        'CPU ms batch',
        'x single',
        'singles POSTed (all)',
        'batch: children created',
        'batch: first child started',
      ],
    ];
    for (const { database, children: c } of results) {
      crows.push([
        database,
        num(median(c.single), 0),
        num(median(c.batch), 0),
        times(median(c.batch.map((b, i) => b / c.single[i]))),
        c.batch.map((b, i) => (b / c.single[i]).toFixed(2)).join(' / '),
        num(median(c.singleCpu), 0),
        num(median(c.batchCpu), 0),
        times(median(c.batchCpu.map((b, i) => b / c.singleCpu[i]))),
        `${num(median(c.singlePost), 0)} ms`,
        `${num(median(c.batchCreate), 0)} ms`,
        `${num(median(c.batchFirstStart), 0)} ms`,
      ]);
    }
    printTable(crows);
  },
  { maxMs: 6 * 60_000 },
);
