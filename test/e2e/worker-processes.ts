// Real `lipsync worker` processes for end-to-end tests: started with their own environment, their pino
// log lines readable, stopped gracefully or killed, their ffmpeg children found.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { lipsyncBin, repoRoot } from '../helpers/index.js';

export const CONFIG_VARS = /^(PORT|HOST|DATABASE_URL|REDIS_URL|LOG_LEVEL|LIPSYNC_.*)$/;
/** A guard against hangs only: nothing here asserts how long anything took. */
export const HANG_GUARD_MS = 60_000;

/** One pino log line of a worker process. */
export interface LogLine {
  level?: number;
  msg?: string;
  jobId?: string;
  subjectId?: string;
  attempt?: number;
  owner?: string;
  [k: string]: unknown;
}

export interface WorkerProcess {
  readonly name: string;
  readonly child: ChildProcess;
  readonly pid: number;
  /** The pool's owner id (`host:pid:random`, what jobs.locked_by holds), once started. */
  owner: string | null;
  output(): string;
  logs(): LogLine[];
  /** Resolves once the worker logged 'worker started'. */
  ready(): Promise<void>;
  /** Resolves with the exit code and signal. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM, then SIGKILL after a grace period (cleanup). */
  stop(): Promise<void>;
}

export function startWorker(name: string, env: Record<string, string>, args: string[] = []): WorkerProcess {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !CONFIG_VARS.test(k)) base[k] = v;
  const child = spawn(process.execPath, [lipsyncBin(), 'worker', ...args], {
    cwd: repoRoot,
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  let out = '';
  let onData: (() => void) | null = null;
  const append = (d: string) => {
    out += d;
    onData?.();
  };
  child.stdout?.setEncoding('utf8').on('data', append);
  child.stderr?.setEncoding('utf8').on('data', append);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => {
      process.removeListener('exit', killOnExit);
      resolve({ code, signal });
    }),
  );
  const logs = (): LogLine[] =>
    out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .flatMap((l) => {
        try {
          return [JSON.parse(l) as LogLine];
        } catch {
          return [];
        }
      });
  const w: WorkerProcess = {
    name,
    child,
    pid: child.pid!,
    owner: null,
    output: () => out,
    logs,
    exited,
    async ready() {
      const found = () => {
        const started = logs().find((l) => l.msg === 'worker started');
        if (started) w.owner = String(started.owner);
        return started !== undefined;
      };
      if (found()) return;
      await new Promise<void>((resolve, reject) => {
        const t = setTimeout(() => {
          onData = null;
          reject(new Error(`${name} did not start\n${out}`));
        }, HANG_GUARD_MS);
        onData = () => {
          if (!found()) return;
          onData = null;
          clearTimeout(t);
          resolve();
        };
        void exited.then(({ code, signal }) => {
          onData = null;
          clearTimeout(t);
          reject(new Error(`${name} exited (${code ?? signal}) before it started\n${out}`));
        });
      });
    },
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(t);
    },
  };
  return w;
}

export async function startWorkers(n: number, env: Record<string, string>): Promise<WorkerProcess[]> {
  const workers = Array.from({ length: n }, (_, i) => startWorker(`worker ${i + 1}`, env));
  try {
    await Promise.all(workers.map((w) => w.ready()));
  } catch (err) {
    await Promise.all(workers.map((w) => w.stop()));
    throw err;
  }
  return workers;
}

/** Waits for a process's exit, failing (instead of hanging) if it does not come. */
export async function exitOf(
  w: WorkerProcess,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  let t: NodeJS.Timeout | undefined;
  const guard = new Promise<never>((_, reject) => {
    t = setTimeout(() => reject(new Error(`${w.name} did not exit\n${w.output()}`)), HANG_GUARD_MS);
  });
  try {
    return await Promise.race([w.exited, guard]);
  } finally {
    clearTimeout(t);
  }
}

/** The pids of a process's descendants (ffmpeg children of a worker). */
export function descendants(pid: number): number[] {
  let out = '';
  try {
    out = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' });
  } catch {
    return []; // ps exits 1 when there are none
  }
  const kids = out
    .split('\n')
    .map((s) => Number(s.trim()))
    .filter((n) => n > 0);
  return kids.flatMap((k) => [k, ...descendants(k)]);
}

export function allOutput(workers: WorkerProcess[]): string {
  return workers.map((w) => `--- ${w.name} (${w.owner ?? w.pid}) ---\n${w.output()}`).join('\n');
}
