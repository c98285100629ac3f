// The real `lipsync` command as a child process: the server (`serve`) and one-shot CLI commands.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { binPath, repoRoot } from './paths.js';
import { createTestSchema, testDatabase, type TestDatabase, type TestSchema } from './database.js';

/** Variables that configure the service; never inherited from the test runner's own environment. */
const CONFIG_VARS = /^(PORT|HOST|DATABASE_URL|REDIS_URL|LOG_LEVEL|LIPSYNC_.*)$/;

function baseEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !CONFIG_VARS.test(k)) out[k] = v;
  }
  return out;
}

/** A port that was free a moment ago (bind port 0, read it, release it). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** A data folder and (on PostgreSQL) a schema that a server and CLI commands share. */
export interface TestDeployment {
  readonly database: TestDatabase;
  readonly dataDir: string;
  /** LIPSYNC_DATA_DIR, DATABASE_URL (PostgreSQL), LOG_LEVEL and a signing secret. */
  readonly env: Readonly<Record<string, string>>;
  cleanup(): Promise<void>;
}

export async function createDeployment(
  opts: { database?: TestDatabase; env?: Record<string, string> } = {},
): Promise<TestDeployment> {
  const database = opts.database ?? testDatabase();
  const dataDir = await mkdtemp(join(tmpdir(), 'lipsync-e2e-'));
  let schema: TestSchema | null = null;
  try {
    if (database === 'postgres') schema = await createTestSchema();
  } catch (err) {
    await rm(dataDir, { recursive: true, force: true });
    throw err;
  }
  const env: Record<string, string> = {
    LOG_LEVEL: process.env.LIPSYNC_TEST_LOG_LEVEL || 'info',
    LIPSYNC_SIGNING_SECRET: 'test-signing-secret-0123456789abcdef',
    LIPSYNC_DATA_DIR: dataDir,
    // Recognizing the words of every recording (pocketsphinx, about 0.4 x real time here) serves only
    // the articulation tests, which turn it on; voice activity and transcripts still run everywhere.
    LIPSYNC_ARTICULATION_RECOGNIZE: '0',
    ...(schema ? { DATABASE_URL: schema.url } : {}),
    ...opts.env,
  };
  return {
    database,
    dataDir,
    env,
    async cleanup() {
      await rm(dataDir, { recursive: true, force: true });
      if (schema) await schema.drop();
    },
  };
}

export interface CliResult {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `node bin/lipsync.js ...args` to completion with the given environment (no stdin). */
export async function runCli(
  args: string[],
  opts: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<CliResult> {
  const child = spawn(process.execPath, [binPath, ...args], {
    cwd: repoRoot,
    env: { ...baseEnv(), ...opts.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), opts.timeoutMs ?? 30_000);
  try {
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve, reject) => {
      child.on('error', reject);
      child.on('close', (c, s) => resolve([c, s]));
    });
    return { code, signal, stdout, stderr };
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs a CLI command with `--json` and returns the one JSON object it printed. Fails unless the
 * command exits 0 and stdout is exactly one line holding one JSON object.
 */
export async function runCliJson<T = Record<string, any>>(
  args: string[],
  opts: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<T> {
  const r = await runCli([...args, '--json'], opts);
  const where = `lipsync ${args.join(' ')} --json`;
  if (r.code !== 0) {
    throw new Error(`${where} exited ${r.code ?? r.signal}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  }
  const lines = r.stdout.split('\n').filter((l) => l.trim() !== '');
  if (lines.length !== 1) {
    throw new Error(`${where} printed ${lines.length} lines on stdout, expected one:\n${r.stdout}`);
  }
  const parsed: unknown = JSON.parse(lines[0]);
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new Error(`${where} printed ${lines[0]}, not a JSON object`);
  }
  return parsed as T;
}

/** The owner key a first start prints (on a line of its own), or null. */
export function firstStartKey(stdout: string): string | null {
  const m = stdout.match(/^\s+(sk_lipsync_[A-Za-z0-9_-]{43})\s*$/m);
  return m ? m[1] : null;
}

export interface TestServer {
  readonly url: string;
  readonly port: number;
  readonly process: ChildProcess;
  /** Everything the process wrote to stdout so far. */
  stdout(): string;
  stderr(): string;
  /** SIGTERM, then SIGKILL after a grace period; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `node bin/lipsync.js serve` on a free port and waits until GET /health answers 200. */
export async function startServer(
  opts: { env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<TestServer> {
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const child = spawn(process.execPath, [binPath, 'serve'], {
    cwd: repoRoot,
    env: { ...baseEnv(), HOST: '127.0.0.1', LIPSYNC_PUBLIC_URL: url, ...opts.env, PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (err += d));
  // Never outlive the test process, even when a test ends without stopping the server.
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);
  const exited = new Promise<number | null>((resolve) =>
    child.on('exit', (code) => {
      process.removeListener('exit', killOnExit);
      resolve(code);
    }),
  );
  let exitCode: number | null | undefined;
  void exited.then((c) => (exitCode = c));

  const stop = async (): Promise<number | null> => {
    if (exitCode !== undefined) return exitCode;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    try {
      return await exited;
    } finally {
      clearTimeout(timer);
    }
  };

  const deadline = Date.now() + (opts.timeoutMs ?? 30_000);
  for (;;) {
    if (exitCode !== undefined) {
      throw new Error(
        `lipsync serve exited with ${exitCode} before it was ready\nstdout: ${out}\nstderr: ${err}`,
      );
    }
    try {
      const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) });
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(
        `lipsync serve did not answer /health within the time limit\nstdout: ${out}\nstderr: ${err}`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url, port, process: child, stdout: () => out, stderr: () => err, stop };
}
