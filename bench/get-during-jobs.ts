// GET /v2/generate/{id} (authenticated, a real COMPLETED row) while generations run in the same
// server: issue 30's "GET p99 while jobs run". One server process (SQLite, LIPSYNC_ROLE=all: the API
// and the in-process worker, one job at a time as by default) runs real generations that this
// benchmark keeps submitting (by assetId, a fixture face clip and a short WAV, sync_mode cut_off),
// alternately on the passthrough engine (lipsync-2) and the CPU engine (lipsync-2-pro), with
// --in-flight generations submitted and not yet finished at any time, so that the worker always has
// the next one queued. Each round measures these windows, one after the other:
//
//   idle, full load     autocannon at full speed on the GET, no generation running (jobs paused)
//   idle, paced         autocannon at --rate requests/s, no generation running
//   jobs only           generations running, no GETs: the server's CPU time per second for the jobs
//   jobs, full load     generations running and autocannon at full speed
//   jobs, paced         generations running and autocannon at --rate requests/s
//
// The server's CPU time (user + system of its process and threads; not its ffmpeg children) is
// taken as bench/get-generation.ts takes it. While jobs run it includes the jobs' own work; the
// "net" column subtracts the CPU time per second of the "jobs only" windows, which is an estimate:
// under a full GET load the jobs get less of the CPU, so the net figure is then too low.
//
//   node --import tsx bench/get-during-jobs.ts [--quick] [--rounds=N] [--duration=S]
//                                              [--connections=N] [--rate=N] [--in-flight=N]
//                                              [--video=face_1.mp4] [--audio=hello.wav]
import { readFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { parseArgs, intOption } from './lib/args.js';
import { onCleanup, runMain } from './lib/cleanup.js';
import { startServiceServer, type BenchChild } from './lib/child.js';
import { deployment } from './lib/deployment.js';
import { load, type LoadResult, type LoadSettings } from './lib/load.js';
import { machineLine, median, num, printTable, wallNow } from './lib/stats.js';
import { fixture } from '../test/helpers/paths.js';

const args = parseArgs();
const ROUNDS = intOption(args, 'rounds', args.quick ? 2 : 5);
const DURATION = intOption(args, 'duration', args.quick ? 3 : 5);
const CONNECTIONS = intOption(args, 'connections', 10);
const RATE = intOption(args, 'rate', 200);
const IN_FLIGHT = intOption(args, 'in-flight', 2);
const VIDEO = fixture(`media/${args.values.video ?? 'face_1.mp4'}`);
const AUDIO = fixture(`media/${args.values.audio ?? 'hello.wav'}`);
/** Model id -> engine, through LIPSYNC_ENGINES_FILE; submitted in turn. */
const MODELS = [
  { model: 'lipsync-2', engine: 'passthrough' },
  { model: 'lipsync-2-pro', engine: 'cpu' },
] as const;
const TERMINAL = new Set(['COMPLETED', 'FAILED', 'CANCELED', 'TIMED_OUT', 'REJECTED']);

type WindowName = 'idle, full load' | 'idle, paced' | 'jobs only' | 'jobs, full load' | 'jobs, paced';
const WINDOWS: readonly WindowName[] = [
  'idle, full load',
  'idle, paced',
  'jobs only',
  'jobs, full load',
  'jobs, paced',
];

interface Window {
  /** Null for "jobs only" (no GETs). */
  load: LoadResult | null;
  seconds: number;
  /** Server CPU microseconds over the window. */
  cpuUs: number;
  /** Generations that finished within the window. */
  finished: number;
}

interface Finished {
  engine: string;
  at: number;
  ms: number;
}

/** Keeps IN_FLIGHT generations submitted and unfinished, until paused or stopped. */
class JobLoop {
  readonly finished: Finished[] = [];
  private next = 0;
  private paused = true;
  private stopped = false;
  private gate: { promise: Promise<void>; open: () => void } = JobLoop.newGate();
  private readonly busy = new Set<number>();
  private idleWaiters: (() => void)[] = [];
  private failure: Error | null = null;
  private readonly lanes: Promise<void>[] = [];

  constructor(
    private readonly server: BenchChild,
    private readonly assets: { video: string; audio: string },
  ) {
    for (let i = 0; i < IN_FLIGHT; i++) this.lanes.push(this.lane(i));
  }

  private static newGate() {
    let open = () => undefined as void;
    const promise = new Promise<void>((r) => (open = r));
    return { promise, open };
  }

  private async lane(i: number): Promise<void> {
    for (;;) {
      while (this.paused && !this.stopped) await this.gate.promise;
      if (this.stopped) return;
      this.busy.add(i);
      try {
        const { model, engine } = MODELS[this.next++ % MODELS.length];
        const t0 = wallNow();
        await this.generate(model);
        this.finished.push({ engine, at: wallNow(), ms: wallNow() - t0 });
      } catch (err) {
        this.failure ??= err as Error;
        this.stopped = true;
      } finally {
        this.busy.delete(i);
        if (this.busy.size === 0) for (const w of this.idleWaiters.splice(0)) w();
      }
    }
  }

  private async generate(model: string): Promise<void> {
    const { url, apiKey } = this.server.ready;
    const headers = { 'x-api-key': apiKey as string };
    const res = await fetch(`${url}/v2/generate`, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json' },
      body: JSON.stringify({
        model,
        input: [
          { type: 'video', assetId: this.assets.video },
          { type: 'audio', assetId: this.assets.audio },
        ],
        options: { sync_mode: 'cut_off' },
      }),
    });
    const created = (await res.json()) as { id?: string };
    if (res.status !== 201 || !created.id)
      throw new Error(`POST /v2/generate (${model}) answered ${res.status} ${JSON.stringify(created)}`);
    let body: { status: string; error?: string } = { status: '' };
    for (let poll = 0; poll < 60 && !TERMINAL.has(body.status); poll++) {
      const r = await fetch(`${url}/v2/generate/${created.id}?wait=true&timeout=10`, { headers });
      body = (await r.json()) as typeof body;
    }
    if (body.status !== 'COMPLETED')
      throw new Error(`generation ${created.id} (${model}) ended ${body.status}: ${body.error ?? ''}`);
  }

  /** Throws the first failure of a generation, if any. */
  check(): void {
    if (this.failure) throw this.failure;
  }

  resume(): void {
    this.check();
    this.paused = false;
    this.gate.open();
    this.gate = JobLoop.newGate();
  }

  /** Submits no more and waits until every generation submitted has finished. */
  async pause(): Promise<void> {
    this.paused = true;
    if (this.busy.size > 0) await new Promise<void>((r) => this.idleWaiters.push(r));
    this.check();
  }

  /** Waits until `count` more generations have finished. */
  async waitFor(count: number, timeoutMs = 120_000): Promise<void> {
    const target = this.finished.length + count;
    const deadline = Date.now() + timeoutMs;
    while (this.finished.length < target) {
      this.check();
      if (Date.now() > deadline) throw new Error(`no generation finished within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.gate.open();
    await Promise.all(this.lanes);
  }

  finishedBetween(t0: number, t1: number): number {
    return this.finished.filter((f) => f.at >= t0 && f.at < t1).length;
  }
}

async function upload(server: BenchChild, path: string): Promise<string> {
  const form = new FormData();
  form.append('file', new Blob([await readFile(path)]), basename(path));
  const res = await fetch(`${server.ready.url}/v2/assets/upload`, {
    method: 'POST',
    headers: { 'x-api-key': server.ready.apiKey as string },
    body: form,
  });
  const body = (await res.json()) as { id?: string };
  if (res.status !== 201 || !body.id)
    throw new Error(`uploading ${path} answered ${res.status} ${JSON.stringify(body)}`);
  return body.id;
}

const cpuUsOf = async (server: BenchChild) => {
  const s = await server.stats();
  return s.cpuUserUs + s.cpuSystemUs;
};

await runMain(
  'get-during-jobs',
  async () => {
    console.log('# GET /v2/generate/{id} while generations run in the same server');
    const full: LoadSettings = { connections: CONNECTIONS, duration: DURATION };
    const paced: LoadSettings = { connections: CONNECTIONS, duration: DURATION, rate: RATE };
    console.log(
      `${machineLine()}\nautocannon ${CONNECTIONS} connections, pipelining 1, ${DURATION} s per window, ` +
        `full speed or paced at ${RATE} req/s; ${ROUNDS} round(s); generations ${basename(VIDEO)} + ` +
        `${basename(AUDIO)}, ${IN_FLIGHT} in flight, alternately on the ` +
        `${MODELS.map((m) => `${m.engine} engine (${m.model})`).join(' and the ')}`,
    );
    const work = await mkdtemp(join(tmpdir(), 'lipsync-bench-'));
    onCleanup(`temp folder ${work}`, () => rm(work, { recursive: true, force: true }));
    const enginesFile = join(work, 'engines.json');
    await writeFile(
      enginesFile,
      JSON.stringify(Object.fromEntries(MODELS.map((m) => [m.model, { engine: m.engine }]))),
    );
    const dep = await deployment('sqlite', {
      LIPSYNC_ENGINES_FILE: enginesFile,
      // Every request counts against the rate limit as usual, with a ceiling this load does not reach.
      LIPSYNC_RATE_LIMIT_PER_MINUTE: '1000000',
    });
    const server = await startServiceServer('server (sqlite, LIPSYNC_ROLE=all)', dep.env);

    const [id] = await server.seed(1, 'COMPLETED');
    const headers = { 'x-api-key': server.ready.apiKey as string };
    const url = `${server.ready.url}/v2/generate/${id}`;
    const check = await fetch(url, { headers });
    const body = (await check.json()) as { id?: string; status?: string };
    if (check.status !== 200 || body.id !== id || body.status !== 'COMPLETED')
      throw new Error(`GET ${url} answered ${check.status} ${JSON.stringify(body)}`);

    const jobs = new JobLoop(server, {
      video: await upload(server, VIDEO),
      audio: await upload(server, AUDIO),
    });
    onCleanup('generation loop', () => jobs.stop());
    // Warm-up: a generation on each engine, and a short GET load.
    jobs.resume();
    await jobs.waitFor(MODELS.length);
    await jobs.pause();
    await load(url, headers, { ...full, duration: 1 }, server);

    const results = new Map<WindowName, Window[]>(WINDOWS.map((w) => [w, []]));
    const measure = async (name: WindowName, settings: LoadSettings | null): Promise<void> => {
      const t0 = wallNow();
      let res: LoadResult | null = null;
      let cpuUs: number;
      if (settings) {
        res = await load(url, headers, settings, server);
        if (res.non2xx > 0 || res.errors > 0)
          throw new Error(`${name}: ${res.non2xx} non-2xx responses and ${res.errors} errors/timeouts`);
        cpuUs = res.serverCpuUsPerRequest * res.requests;
      } else {
        const before = await cpuUsOf(server);
        await new Promise((r) => setTimeout(r, DURATION * 1000));
        cpuUs = (await cpuUsOf(server)) - before;
      }
      const t1 = wallNow();
      jobs.check();
      (results.get(name) as Window[]).push({
        load: res,
        seconds: res ? res.seconds : (t1 - t0) / 1000,
        cpuUs,
        finished: jobs.finishedBetween(t0, t1),
      });
    };

    for (let r = 1; r <= ROUNDS; r++) {
      await measure('idle, full load', full);
      await measure('idle, paced', paced);
      jobs.resume();
      // The worker is in its stride once a generation has finished since the pause.
      await jobs.waitFor(1);
      await measure('jobs only', null);
      await measure('jobs, full load', full);
      await measure('jobs, paced', paced);
      await jobs.pause();
      const line = WINDOWS.map((w) => {
        const x = (results.get(w) as Window[])[r - 1];
        return x.load ? `${w} p99 ${num(x.load.p99, 2)} ms` : `${w} ${x.finished} generations`;
      }).join(', ');
      console.log(`  round ${r}/${ROUNDS}: ${line}`);
    }
    await jobs.stop();
    await server.stop();

    // Latencies and rates are medians over the rounds. CPU time and generations are pooled over the
    // rounds (sums), since a window of a few seconds holds few generations and their CPU comes in lumps.
    const of = (name: WindowName) => results.get(name) as Window[];
    const med = (name: WindowName, f: (x: Window) => number) => median(of(name).map(f));
    const sum = (name: WindowName, f: (x: Window) => number) => of(name).reduce((a, x) => a + f(x), 0);
    const cpuPerGet = (name: WindowName) =>
      sum(name, (x) => x.cpuUs) / sum(name, (x) => x.load?.requests ?? 0);
    // The jobs' own CPU per second, from the "jobs only" windows, taken off a window's CPU.
    const jobCpuPerSecond = sum('jobs only', (x) => x.cpuUs) / sum('jobs only', (x) => x.seconds);
    const netPerGet = (name: WindowName) =>
      (sum(name, (x) => x.cpuUs) - jobCpuPerSecond * sum(name, (x) => x.seconds)) /
      sum(name, (x) => x.load?.requests ?? 0);
    const perMinute = (name: WindowName) => (sum(name, (x) => x.finished) * 60) / sum(name, (x) => x.seconds);
    console.log('');
    console.log(
      `Latencies and req/s: medians over ${ROUNDS} round(s); CPU and generations: pooled over the rounds. ` +
        '"server CPU us/GET" includes the jobs\' work in the server process; "net" takes off the CPU per ' +
        'second of the "jobs only" windows (an estimate; at full load the jobs get less CPU, so it is low).',
    );
    printTable([
      ['window', 'req/s', 'p50 ms', 'p99 ms', 'server CPU us/GET', 'net us/GET', 'generations/min'],
      ...WINDOWS.map((w) => [
        w,
        w === 'jobs only'
          ? ''
          : num(
              med(w, (x) => x.load?.rps ?? NaN),
              0,
            ),
        w === 'jobs only'
          ? ''
          : num(
              med(w, (x) => x.load?.p50 ?? NaN),
              2,
            ),
        w === 'jobs only'
          ? ''
          : num(
              med(w, (x) => x.load?.p99 ?? NaN),
              2,
            ),
        w === 'jobs only' ? '' : num(cpuPerGet(w), 0),
        // At a paced rate the GETs' CPU is a small part of the window's: the jobs' lumps swamp it.
        w === 'jobs, full load' ? num(netPerGet(w), 0) : '',
        w.startsWith('idle') ? '' : num(perMinute(w), 1),
      ]),
    ]);
    const ratioTo = (w: WindowName, base: WindowName) =>
      median(of(w).map((x, i) => (x.load?.p99 ?? NaN) / (of(base)[i].load?.p99 ?? NaN)));
    console.log('');
    console.log(
      `GET p99 while jobs run: ${num(
        med('jobs, full load', (x) => x.load?.p99 ?? NaN),
        2,
      )} ms at full load ` +
        `(${ratioTo('jobs, full load', 'idle, full load').toFixed(2)}x idle), ` +
        `${num(
          med('jobs, paced', (x) => x.load?.p99 ?? NaN),
          2,
        )} ms paced at ${RATE} req/s ` +
        `(${ratioTo('jobs, paced', 'idle, paced').toFixed(2)}x idle); server CPU per GET while jobs run ` +
        `${num(cpuPerGet('jobs, full load'), 0)} us with the jobs' work, about ` +
        `${num(netPerGet('jobs, full load'), 0)} us net (idle: ${num(cpuPerGet('idle, full load'), 0)} us).`,
    );
  },
  { maxMs: (ROUNDS * (5 * (DURATION + 3) + 90) + 180) * 1000 },
);
