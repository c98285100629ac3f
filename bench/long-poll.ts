// 2,000 concurrent long-polls (GET /v2/generate/{id}?wait=true&timeout=10) on PENDING generations held
// by a real server process: server memory per waiter, the server's CPU while they wait, and the
// wake-up latency (from the finish() call that commits a generation's terminal state to the moment
// its waiter has the whole response), compared with plain GETs of the same generations in the same run.
//
// The generations are completed through the GenerationFinisher, as a worker does at the end of a job:
//   in-process      by the server process itself, like its in-process worker (LIPSYNC_ROLE=all)
//   worker process  by a second process on the same database, like a separate `lipsync worker`; the
//                   server hears of it through its SQLite watcher or PostgreSQL LISTEN/NOTIFY
// First a sample is completed one at a time with a pause in between (the wake-up path at light load),
// then all the others as fast as one finisher goes (a burst: 2,000 answers due at once).
//
//   node --import tsx bench/long-poll.ts [--quick] [--no-postgres] [--waiters=N] [--paced=N]
import { readFileSync } from 'node:fs';
import { parseArgs, intOption } from './lib/args.js';
import { runMain } from './lib/cleanup.js';
import { startFinisherProcess, startServiceServer, type BenchChild } from './lib/child.js';
import { deployment, postgresProblem, postgresUrlForDisplay } from './lib/deployment.js';
import { get, keepAliveAgent, type GetResult } from './lib/http-client.js';
import type { FinishTiming, Stats } from './lib/protocol.js';
import { distribution, machineLine, mib, num, printTable, ratio, type Distribution } from './lib/stats.js';

type Completion = 'in-process' | 'worker process';

interface Scenario {
  database: 'sqlite' | 'postgres';
  completion: Completion;
}

interface Phase {
  count: number;
  /** Waiters still in their first long-poll when their generation completed. */
  wake: Distribution;
  /** Waiters whose first long-poll had timed out (left out of `wake`). */
  repolled: number;
  finishCall: Distribution;
  /** From the first finish() call to the last waiter's response. */
  spanMs: number;
}

interface ScenarioResult extends Scenario {
  waiters: number;
  rampMs: number;
  /** Server after warm-up, no connection open. */
  idle: Stats;
  /** With one idle keep-alive connection per future waiter open. */
  connected: Stats;
  /** With every waiter waiting. */
  during: Stats;
  idleCpuPercent: number;
  paced: Phase;
  burst: Phase;
  plainSequential: Distribution;
  /** From the first request of the burst of plain GETs to the last response. */
  plainBurstSpanMs: number;
}

const args = parseArgs();
const WAITERS = intOption(args, 'waiters', args.quick ? 500 : 2000);
const PACED = Math.min(WAITERS - 1, intOption(args, 'paced', args.quick ? 50 : 100));
const PACED_GAP_MS = 5;
const WAIT_TIMEOUT_S = 10;
const SEQUENTIAL_GETS = args.quick ? 100 : 300;
const RAMP_BATCH = 250;
const IDLE_WINDOW_MS = 1000;
/** How many times one waiter sends its long-poll at most (a client polls again after a timeout). */
const MAX_POLLS = 4;

/** The soft limit on open files of this process (Linux), or null when unknown. */
function openFileLimit(): number | null {
  try {
    const m = readFileSync('/proc/self/limits', 'utf8').match(/^Max open files\s+(\d+|unlimited)/m);
    return m ? (m[1] === 'unlimited' ? Infinity : Number(m[1])) : null;
  } catch {
    return null;
  }
}

async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function runScenario(sc: Scenario): Promise<ScenarioResult> {
  const label = `${sc.database}, ${sc.completion}`;
  console.log(`\n## ${label}: ${WAITERS} waiters`);
  const dep = await deployment(sc.database, { LIPSYNC_ROLE: 'api', LIPSYNC_RATE_LIMIT_ENABLED: '0' });
  const server = await startServiceServer(`server (${label})`, dep.env);
  const finisher: BenchChild =
    sc.completion === 'in-process'
      ? server
      : await startFinisherProcess(`worker process (${label})`, dep.env);
  const headers = { 'x-api-key': server.ready.apiKey as string };
  const base = `${server.ready.url}/v2/generate/`;
  const ids = await server.seed(WAITERS, 'PENDING');
  let agent = keepAliveAgent(1);
  try {
    // Baseline 1: plain GETs one after the other on one warm connection (after as many to warm up).
    const seq: GetResult[] = [];
    for (let i = 0; i < 2 * SEQUENTIAL_GETS; i++) {
      const r = await get(agent, base + ids[i % ids.length], headers);
      if (r.status !== 200) throw new Error(`plain GET answered ${r.status}: ${r.body}`);
      if (i >= SEQUENTIAL_GETS) seq.push(r);
    }
    agent.destroy();
    agent = keepAliveAgent(WAITERS + 10);
    await sleep(200);
    const idle = await server.stats(true);

    // Baseline 2: every generation read at once with plain GETs. This also opens the keep-alive
    // connections the long-polls use, so that the ramp below does not wait for TCP handshakes.
    const burst = await Promise.all(ids.map((id) => get(agent, base + id, headers)));
    if (burst.some((r) => r.status !== 200)) throw new Error('a plain GET of the burst failed');
    const plainBurstSpanMs =
      Math.max(...burst.map((r) => r.doneAt)) - Math.min(...burst.map((r) => r.sentAt));
    const connected = await server.stats(true);

    // Open the long-polls in batches, each once the previous one is registered on the event bus. A
    // waiter whose poll times out before its generation completes polls again, as a client would.
    const longPoll = async (id: string): Promise<GetResult & { polls: number }> => {
      for (let poll = 1; ; poll++) {
        const r = await get(
          agent,
          `${base}${id}?wait=true&timeout=${WAIT_TIMEOUT_S}`,
          headers,
          (WAIT_TIMEOUT_S + 20) * 1000,
        );
        const status = r.status === 200 ? (JSON.parse(r.body) as { status?: string }).status : undefined;
        if (status === 'COMPLETED') return { ...r, polls: poll };
        if (r.status !== 200 || status !== 'PENDING' || poll >= MAX_POLLS) {
          throw new Error(`long-poll of ${id} answered ${r.status} ${r.body.slice(0, 200)} (poll ${poll})`);
        }
      }
    };
    const rampStart = performance.now();
    const waits: Promise<GetResult & { polls: number }>[] = [];
    for (let i = 0; i < ids.length; i += RAMP_BATCH) {
      for (const id of ids.slice(i, i + RAMP_BATCH)) {
        const p = longPoll(id);
        p.catch(() => undefined);
        waits.push(p);
      }
      const expected = Math.min(ids.length, i + RAMP_BATCH);
      await waitFor(`${expected} waiters`, async () => (await server.stats()).waiters >= expected, 8000);
    }
    const rampMs = performance.now() - rampStart;

    const during = await server.stats(true);
    // The server's CPU while every waiter waits and nothing changes.
    const c0 = await server.stats();
    const t0 = performance.now();
    await sleep(IDLE_WINDOW_MS);
    const c1 = await server.stats();
    const idleCpuPercent =
      ((c1.cpuUserUs + c1.cpuSystemUs - c0.cpuUserUs - c0.cpuSystemUs) / 1000 / (performance.now() - t0)) *
      100;
    if (c1.waiters < WAITERS) throw new Error(`only ${c1.waiters} of ${WAITERS} waiters are still waiting`);

    // Latency from the start of the finish() call that commits the change (on the finisher's clock,
    // converted to ours): an upper bound, by the duration of the commit itself. Waiters whose first
    // poll had timed out are counted apart: their latency is that of a new request, not a wake-up.
    const offset = await finisher.clockOffset();
    const phase = async (from: number, to: number, gapMs: number): Promise<Phase> => {
      const timings: FinishTiming[] = await finisher.finish(ids.slice(from, to), { concurrency: 1, gapMs });
      if (timings.some((t) => !t.ok)) throw new Error('some generations were not PENDING any more');
      const answered = await Promise.all(waits.slice(from, to));
      const wake: number[] = [];
      answered.forEach((r, i) => {
        if (r.polls === 1) wake.push(r.doneAt - (timings[i].calledAt - offset));
      });
      return {
        count: to - from,
        wake: distribution(wake),
        repolled: answered.filter((r) => r.polls > 1).length,
        finishCall: distribution(timings.map((t) => t.returnedAt - t.calledAt)),
        spanMs: Math.max(...answered.map((r) => r.doneAt)) - (timings[0].calledAt - offset),
      };
    };
    const paced = await phase(0, PACED, PACED_GAP_MS);
    const burstPhase = await phase(PACED, ids.length, 0);

    const result: ScenarioResult = {
      ...sc,
      waiters: WAITERS,
      rampMs,
      idle,
      connected,
      during,
      idleCpuPercent,
      paced,
      burst: burstPhase,
      plainSequential: distribution(seq.map((r) => r.doneAt - r.sentAt)),
      plainBurstSpanMs,
    };
    report(result, Math.abs(offset));
    return result;
  } finally {
    agent.destroy();
    if (finisher !== server) await finisher.stop();
    await server.stop();
  }
}

const perWaiterKiB = (a: number, b: number, n: number) => num((b - a) / n / 1024, 1);
const perSecond = (n: number, ms: number) => num((n / ms) * 1000, 0);

function report(r: ScenarioResult, clockSkewMs: number): void {
  const n = r.waiters;
  console.log(
    `waiters registered in ${num(r.rampMs, 0)} ms (batches of ${RAMP_BATCH}); ` +
      `clock skew to the finisher's process ${num(clockSkewMs, 3)} ms`,
  );
  console.log('server memory (after GC)        RSS         JS heap');
  console.log(
    `  idle, no connections       ${mib(r.idle.rss).padStart(10)}  ${mib(r.idle.heapUsed).padStart(10)}`,
  );
  console.log(
    `  ${String(n).padStart(5)} idle keep-alives   ${mib(r.connected.rss).padStart(10)}  ${mib(r.connected.heapUsed).padStart(10)}`,
  );
  console.log(
    `  ${String(n).padStart(5)} waiting long-polls ${mib(r.during.rss).padStart(10)}  ${mib(r.during.heapUsed).padStart(10)}`,
  );
  console.log(
    `  per waiter, its connection included: ${perWaiterKiB(r.idle.rss, r.during.rss, n)} KiB RSS, ` +
      `${perWaiterKiB(r.idle.heapUsed, r.during.heapUsed, n)} KiB heap; on an already open connection: ` +
      `${perWaiterKiB(r.connected.heapUsed, r.during.heapUsed, n)} KiB heap`,
  );
  console.log(
    `server CPU while ${n} waiters wait and nothing changes: ${num(r.idleCpuPercent, 1)}% of one core`,
  );
  console.log(
    `paced: ${r.paced.count} generations completed one at a time, ${PACED_GAP_MS} ms apart (finish() p50 ` +
      `${num(r.paced.finishCall.p50, 2)} ms)`,
  );
  console.log(
    `burst: ${r.burst.count} completed back to back (finish() p50 ${num(r.burst.finishCall.p50, 2)} ms): all answered ` +
      `within ${num(r.burst.spanMs, 0)} ms (${perSecond(r.burst.count, r.burst.spanMs)}/s); ${n} plain GETs sent at once ` +
      `took ${num(r.plainBurstSpanMs, 0)} ms (${perSecond(n, r.plainBurstSpanMs)}/s)` +
      (r.paced.repolled + r.burst.repolled
        ? `; ${r.paced.repolled + r.burst.repolled} waiters reached their ${WAIT_TIMEOUT_S} s timeout before their ` +
          'generation completed and polled again (left out of the wake-up latencies)'
        : ''),
  );
  const row = (name: string, d: Distribution, baseline?: Distribution) => [
    name,
    String(d.count),
    num(d.p50, 2),
    num(d.p90, 2),
    num(d.p99, 2),
    num(d.max, 2),
    baseline ? ratio(d.p50, baseline.p50) : '',
    baseline ? ratio(d.p99, baseline.p99) : '',
  ];
  printTable([
    ['latency (ms)', 'n', 'p50', 'p90', 'p99', 'max', 'x p50', 'x p99'],
    row('plain GET, one at a time (baseline)', r.plainSequential),
    row('wake-up, paced completions', r.paced.wake, r.plainSequential),
    row('wake-up, burst of completions', r.burst.wake, r.plainSequential),
  ]);
}

await runMain(
  'long-poll',
  async () => {
    console.log(
      `# Long-poll: ${WAITERS} concurrent GET /v2/generate/{id}?wait=true&timeout=${WAIT_TIMEOUT_S}`,
    );
    console.log(machineLine());
    console.log('The server runs in its own process with LIPSYNC_ROLE=api and LIPSYNC_RATE_LIMIT_ENABLED=0.');
    const limit = openFileLimit();
    if (limit !== null && limit < WAITERS + 256) {
      throw new Error(
        `this process may open only ${limit} files; ${WAITERS} waiters need about ${WAITERS + 256}. ` +
          `Raise the limit first (ulimit -n ${WAITERS * 2}) or pass --waiters=${Math.max(1, limit - 256)}.`,
      );
    }
    const scenarios: Scenario[] = [{ database: 'sqlite', completion: 'in-process' }];
    if (!args.quick) scenarios.push({ database: 'sqlite', completion: 'worker process' });
    const pgProblem = args.noPostgres
      ? 'skipped (--no-postgres)'
      : args.quick
        ? 'skipped in --quick'
        : await postgresProblem();
    if (pgProblem === null) {
      console.log(`PostgreSQL: ${postgresUrlForDisplay()} (a fresh schema per scenario)`);
      scenarios.push({ database: 'postgres', completion: 'worker process' });
    } else {
      console.log(`PostgreSQL not measured: ${pgProblem}`);
    }
    const results: ScenarioResult[] = [];
    for (const sc of scenarios) results.push(await runScenario(sc));

    console.log('\n## summary (wake-up latency as a ratio to a plain GET, one at a time, of the same run)');
    printTable([
      [
        'scenario',
        'KiB/waiter RSS',
        'heap',
        'idle CPU %',
        'paced p50 ms',
        'x',
        'p99 ms',
        'x',
        'burst p50 ms',
        'x',
        'p99 ms',
        'x',
      ],
      ...results.map((r) => [
        `${r.database}, ${r.completion}`,
        perWaiterKiB(r.idle.rss, r.during.rss, r.waiters),
        perWaiterKiB(r.idle.heapUsed, r.during.heapUsed, r.waiters),
        num(r.idleCpuPercent, 1),
        num(r.paced.wake.p50, 2),
        ratio(r.paced.wake.p50, r.plainSequential.p50),
        num(r.paced.wake.p99, 2),
        ratio(r.paced.wake.p99, r.plainSequential.p99),
        num(r.burst.wake.p50, 2),
        ratio(r.burst.wake.p50, r.plainSequential.p50),
        num(r.burst.wake.p99, 2),
        ratio(r.burst.wake.p99, r.plainSequential.p99),
      ]),
    ]);
  },
  { maxMs: 300_000 },
);
