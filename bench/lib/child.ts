// Starts a service process or the bare baseline server as a child process (from source, through
// tsx) and talks to it over IPC. Each child is registered for clean-up.
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '../../test/helpers/paths.js';
import type { Command, FinishTiming, Ready, Reply, Request, Stats } from './protocol.js';
import { onCleanup } from './cleanup.js';
import { wallNow } from './stats.js';

/** Variables that configure the service; never inherited from the benchmark's own environment. */
const CONFIG_VARS = /^(PORT|HOST|DATABASE_URL|REDIS_URL|LOG_LEVEL|LIPSYNC_.*|BENCH_CHILD_MODE)$/;

function baseEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !CONFIG_VARS.test(k)) out[k] = v;
  return out;
}

export interface BenchChild {
  readonly label: string;
  readonly ready: Ready;
  readonly process: ChildProcess;
  call<T = unknown>(command: Command): Promise<T>;
  seed(count: number, status: 'PENDING' | 'COMPLETED'): Promise<string[]>;
  finish(ids: string[], opts?: { concurrency?: number; gapMs?: number }): Promise<FinishTiming[]>;
  stats(gc?: boolean): Promise<Stats>;
  /**
   * How far this process's wallNow() is ahead of ours (ms), from the IPC round trip with the
   * smallest delay among `samples`.
   */
  clockOffset(samples?: number): Promise<number>;
  /** Asks the process to stop, then SIGKILLs it if it has not exited within the grace period. */
  stop(): Promise<void>;
  /** The last part of what the process wrote on stderr (for error messages). */
  stderr(): string;
}

async function startChild(
  label: string,
  entry: string,
  env: Record<string, string>,
  timeoutMs = 60_000,
): Promise<BenchChild> {
  // BENCH_CHILD_NODE_FLAGS adds node flags to every child, e.g. "--cpu-prof --cpu-prof-dir=/tmp/prof".
  const extra = (process.env.BENCH_CHILD_NODE_FLAGS ?? '').split(/\s+/).filter(Boolean);
  const flags = ['--import', 'tsx', '--expose-gc', ...extra];
  const child = spawn(process.execPath, [...flags, join(repoRoot, 'bench', 'lib', entry)], {
    cwd: repoRoot,
    env: { ...baseEnv(), ...env },
    // The service logs to stdout (pino); it goes to /dev/null so that the benchmark process does not
    // spend its own event loop reading it.
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let err = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (err = (err + d).slice(-16_384)));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let hasExited = false;
  void exited.then(() => (hasExited = true));

  let nextId = 1;
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let ready: Ready | null = null;
  const readyPromise = new Promise<Ready>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`${label}: not ready within ${timeoutMs} ms\n${err}`)),
      timeoutMs,
    );
    child.on('message', (m: Ready | Reply) => {
      if (m.type === 'ready') {
        clearTimeout(timer);
        ready = m;
        resolve(m);
      } else if (m.type === 'reply') {
        const p = pending.get(m.id);
        pending.delete(m.id);
        if (m.ok) p?.resolve(m.result);
        else p?.reject(new Error(`${label}: ${m.error}`));
      }
    });
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      const e = new Error(`${label} exited (${code ?? signal})\n${err}`);
      if (!ready) reject(e);
      for (const p of pending.values()) p.reject(e);
      pending.clear();
    });
  });

  const kill = async (): Promise<void> => {
    if (hasExited) return;
    child.kill('SIGKILL');
    await exited;
  };
  const unregister = onCleanup(label, kill);
  try {
    await readyPromise;
  } catch (e) {
    await kill();
    unregister();
    throw e;
  }

  const call = <T>(command: Command): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (hasExited) return reject(new Error(`${label} has exited\n${err}`));
      const id = nextId++;
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      child.send({ type: 'request', id, command } satisfies Request);
    });

  const stop = async (): Promise<void> => {
    if (!hasExited) {
      const grace = setTimeout(() => child.kill('SIGKILL'), 15_000);
      try {
        await call({ cmd: 'stop' }).catch(() => undefined);
        await exited;
      } finally {
        clearTimeout(grace);
      }
    }
    unregister();
  };

  return {
    label,
    ready: ready as unknown as Ready,
    process: child,
    call,
    seed: (count, status) => call<string[]>({ cmd: 'seed', count, status }),
    finish: (ids, opts = {}) =>
      call<FinishTiming[]>({
        cmd: 'finish',
        ids,
        concurrency: opts.concurrency ?? 1,
        gapMs: opts.gapMs ?? 0,
      }),
    stats: (gc) => call<Stats>({ cmd: 'stats', gc }),
    clockOffset: async (samples = 20) => {
      let best = { rtt: Infinity, offset: 0 };
      for (let i = 0; i < samples; i++) {
        const t0 = wallNow();
        const theirs = await call<number>({ cmd: 'clock' });
        const t1 = wallNow();
        if (t1 - t0 < best.rtt) best = { rtt: t1 - t0, offset: theirs - (t0 + t1) / 2 };
      }
      return best.offset;
    },
    stop,
    stderr: () => err,
  };
}

/**
 * Our service as `lipsync serve` runs it (src/main.ts start()), on 127.0.0.1 and a free port, with
 * the deployment's environment plus `env`.
 */
export function startServiceServer(label: string, env: Record<string, string>): Promise<BenchChild> {
  return startChild(label, 'service-process.ts', {
    HOST: '127.0.0.1',
    PORT: '0',
    ...env,
    BENCH_CHILD_MODE: 'server',
  });
}

/** The service container alone on the same database, like a separate `lipsync worker` process. */
export function startFinisherProcess(label: string, env: Record<string, string>): Promise<BenchChild> {
  return startChild(label, 'service-process.ts', { ...env, BENCH_CHILD_MODE: 'finisher' });
}

/** The baseline: bare Fastify, one route returning a small JSON object. */
export function startBareServer(label = 'bare fastify'): Promise<BenchChild> {
  return startChild(label, 'bare-server.ts', {});
}
