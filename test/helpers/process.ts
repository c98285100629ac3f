// The real `lipsync` command as a child process: the server (`serve`) and one-shot CLI commands.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { lipsyncBin, repoRoot } from './paths.js';
import { createTestSchema, testDatabase, type TestDatabase, type TestSchema } from './database.js';
import { startS3rver, type S3rver } from './s3rver.js';

/** Variables that configure the service; never inherited from the test runner's own environment. */
const CONFIG_VARS = /^(PORT|HOST|DATABASE_URL|REDIS_URL|LOG_LEVEL|LIPSYNC_.*)$/;

/**
 * Where the commands look for a saved `lipsync login`: a folder that does not exist, so that the
 * login of whoever runs the tests never reaches them (a test of login passes its own XDG_CONFIG_HOME).
 */
const NO_SAVED_LOGIN = join(tmpdir(), `lipsync-test-no-login-${process.pid}`, 'missing');

function baseEnv(): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v !== undefined && !CONFIG_VARS.test(k)) out[k] = v;
  }
  out.XDG_CONFIG_HOME = NO_SAVED_LOGIN;
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

export type TestStorage = 'local' | 's3';

/** TEST_STORAGE (local by default): where the blobs of end-to-end deployments live. */
export function testStorage(): TestStorage {
  const v = (process.env.TEST_STORAGE ?? 'local').trim().toLowerCase();
  if (v === 'local' || v === '') return 'local';
  if (v === 's3') return 's3';
  throw new Error(`TEST_STORAGE=${JSON.stringify(v)} must be local or s3`);
}

/** The bucket of an S3 deployment (each deployment has its own s3rver). */
export const DEPLOYMENT_BUCKET = 'lipsync-e2e';

/**
 * A data folder, (on PostgreSQL) a schema and (on S3) an s3rver with a bucket, that a server, workers
 * and CLI commands share.
 */
export interface TestDeployment {
  readonly database: TestDatabase;
  readonly storage: TestStorage;
  /** On S3: the s3rver's URL and the bucket the deployment stores in; null on local storage. */
  readonly s3: { readonly endpoint: string; readonly bucket: string } | null;
  readonly dataDir: string;
  /**
   * LIPSYNC_DATA_DIR, DATABASE_URL (PostgreSQL), LIPSYNC_STORAGE and LIPSYNC_S3_* (S3), LOG_LEVEL and
   * a signing secret.
   */
  readonly env: Readonly<Record<string, string>>;
  cleanup(): Promise<void>;
}

export async function createDeployment(
  opts: { database?: TestDatabase; storage?: TestStorage; env?: Record<string, string> } = {},
): Promise<TestDeployment> {
  const database = opts.database ?? testDatabase();
  const storage = opts.storage ?? testStorage();
  const dataDir = await mkdtemp(join(tmpdir(), 'lipsync-e2e-'));
  // One s3rver per deployment (about half a second to start): nothing is shared between files or
  // deployments, and cleanup removes the whole bucket folder with it.
  const [schemaResult, s3Result] = await Promise.allSettled([
    database === 'postgres' ? createTestSchema() : null,
    storage === 's3' ? startS3rver([DEPLOYMENT_BUCKET]) : null,
  ]);
  const schema: TestSchema | null = schemaResult.status === 'fulfilled' ? schemaResult.value : null;
  const s3: S3rver | null = s3Result.status === 'fulfilled' ? s3Result.value : null;
  for (const r of [schemaResult, s3Result]) {
    if (r.status === 'rejected') {
      await rm(dataDir, { recursive: true, force: true });
      await schema?.drop();
      await s3?.stop();
      throw r.reason;
    }
  }
  const env: Record<string, string> = {
    LOG_LEVEL: process.env.LIPSYNC_TEST_LOG_LEVEL || 'info',
    LIPSYNC_SIGNING_SECRET: 'test-signing-secret-0123456789abcdef',
    LIPSYNC_DATA_DIR: dataDir,
    // Recognizing the words of every recording (pocketsphinx, about 0.4 x real time here) serves only
    // the articulation tests, which turn it on; voice activity and transcripts still run everywhere.
    LIPSYNC_ARTICULATION_RECOGNIZE: '0',
    // A warmed worker loads the face models on a thread at start (about a second of one core, and a
    // thread that must not be ended mid-load): only the tests of the warm-up turn it on.
    LIPSYNC_ENGINE_WARM_UP: '0',
    ...(schema ? { DATABASE_URL: schema.url } : {}),
    ...(s3 ? s3.env(DEPLOYMENT_BUCKET) : {}),
    ...opts.env,
  };
  return {
    database,
    storage,
    s3: s3 ? { endpoint: s3.endpoint, bucket: DEPLOYMENT_BUCKET } : null,
    dataDir,
    env,
    async cleanup() {
      await rm(dataDir, { recursive: true, force: true });
      if (schema) await schema.drop();
      if (s3) await s3.stop();
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
  opts: { env?: Record<string, string>; timeoutMs?: number; cwd?: string } = {},
): Promise<CliResult> {
  const child = spawn(process.execPath, [lipsyncBin(), ...args], {
    cwd: opts.cwd ?? repoRoot,
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
  opts: { env?: Record<string, string>; timeoutMs?: number; cwd?: string } = {},
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
  /**
   * What every signed download URL of this server starts with: `<url>/v2/files/` on local storage,
   * `<LIPSYNC_S3_ENDPOINT>/<bucket>/` on S3 (path style, as s3rver deployments are).
   */
  readonly filesBase: string;
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
  const env: Record<string, string> = {
    ...baseEnv(),
    HOST: '127.0.0.1',
    LIPSYNC_PUBLIC_URL: url,
    ...opts.env,
    PORT: String(port),
  };
  const filesBase =
    env.LIPSYNC_STORAGE === 's3'
      ? `${String(env.LIPSYNC_S3_ENDPOINT).replace(/\/+$/, '')}/${env.LIPSYNC_S3_BUCKET}/`
      : `${env.LIPSYNC_PUBLIC_URL}/v2/files/`;
  const child = spawn(process.execPath, [lipsyncBin(), 'serve'], {
    cwd: repoRoot,
    env,
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
  return { url, port, filesBase, process: child, stdout: () => out, stderr: () => err, stop };
}
