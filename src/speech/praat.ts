// Runs Praat scripts headless (`praat --run`). Scripts live as strings in the TS modules that use
// them and are written into the caller's workDir, so nothing depends on non-TS files surviving the
// build. Praat's stderr (its own messages, which may quote file paths) goes into the error's `detail`
// for the log only; the error message itself stays generic.
import { createHash } from 'node:crypto';
import { rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { spawnChild } from '../processes/spawn.js';
import { ProcessPoolBusyError, speechProcesses } from '../processes/pool.js';

export const PRAAT_BIN = 'praat';

/** `busy`: no slot in the process-wide speech pool (processes/pool.ts). */
export type PraatFailure = 'failed' | 'aborted' | 'timeout' | 'spawn' | 'busy';

export class PraatError extends Error {
  constructor(
    readonly reason: PraatFailure,
    message: string,
    /** Praat's stderr tail: for the log only. */
    readonly detail?: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'PraatError';
  }
}

export interface PraatRunOptions {
  workDir: string;
  signal?: AbortSignal;
  /** Kill praat after this many milliseconds (default 120 s). */
  timeoutMs?: number;
  /** Receives Praat's warnings of a successful run (stderr); failures carry it in PraatError.detail. */
  onStderr?: (text: string) => void;
}

const STDERR_LIMIT = 4000;
const STDOUT_LIMIT = 1 << 20;

/** Writes `source` into workDir under a content-addressed name (atomically) and returns its path. */
async function writeScript(source: string, workDir: string): Promise<string> {
  const name = `praat-${createHash('sha256').update(source).digest('hex').slice(0, 16)}.praat`;
  const file = path.join(workDir, name);
  // A temp name + rename so that concurrent runs in one workDir never read a half-written script.
  const tmp = `${file}.${process.pid}.${Math.random().toString(36).slice(2)}`;
  await writeFile(tmp, source, 'utf8');
  await rename(tmp, file);
  return file;
}

/**
 * Runs a Praat script (its source text) with positional form arguments, in a slot of the speech
 * pool, and resolves with what it wrote to the Info window (stdout). Rejects with PraatError on a
 * non-zero exit, abort, timeout or no slot.
 */
export async function runPraat(
  source: string,
  args: readonly (string | number)[],
  opts: PraatRunOptions,
): Promise<string> {
  if (opts.signal?.aborted) throw new PraatError('aborted', 'praat was aborted');
  const script = await writeScript(source, opts.workDir);
  try {
    return await speechProcesses().run(() => runScript(script, args, opts), opts.signal);
  } catch (err) {
    if (err instanceof PraatError) throw err;
    if (err instanceof ProcessPoolBusyError)
      throw new PraatError('busy', `praat had no process slot: ${err.message}`, undefined, { cause: err });
    if (opts.signal?.aborted) throw new PraatError('aborted', 'praat was aborted');
    throw err;
  }
}

function runScript(
  script: string,
  args: readonly (string | number)[],
  opts: PraatRunOptions,
): Promise<string> {
  const argv = ['--no-pref-files', '--no-plugins', '--run', script, ...args.map((a) => formatArg(a))];
  const child = spawnChild(PRAAT_BIN, argv, { stdout: 'pipe', stderr: 'pipe', cwd: opts.workDir });
  let stdout = '';
  let stderr = '';
  child.stdout?.setEncoding('utf8');
  child.stderr?.setEncoding('utf8');
  child.stdout?.on('data', (c: string) => {
    if (stdout.length < STDOUT_LIMIT) stdout += c;
  });
  child.stderr?.on('data', (c: string) => {
    stderr = (stderr + c).slice(-STDERR_LIMIT);
  });

  let killedFor: PraatFailure | null = null;
  const kill = (reason: PraatFailure): void => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    killedFor ??= reason;
    child.kill('SIGKILL');
  };
  const onAbort = (): void => kill('aborted');
  const timeoutMs = opts.timeoutMs ?? 120_000;
  const timer = setTimeout(() => kill('timeout'), timeoutMs);
  opts.signal?.addEventListener('abort', onAbort, { once: true });

  return new Promise<string>((resolve, reject) => {
    let spawnError: Error | null = null;
    child.on('error', (err) => {
      spawnError = err;
    });
    child.on('close', (code, sig) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      const detail = stderr.trim() || undefined;
      if (spawnError) {
        reject(new PraatError('spawn', `praat could not start: ${spawnError.message}`));
      } else if (killedFor === 'timeout') {
        reject(new PraatError('timeout', `praat timed out after ${timeoutMs} ms`, detail));
      } else if (killedFor === 'aborted') {
        reject(new PraatError('aborted', 'praat was aborted', detail));
      } else if (code === 0) {
        if (detail) opts.onStderr?.(detail);
        resolve(stdout);
      } else {
        reject(new PraatError('failed', `praat failed (exit ${code ?? sig})`, detail));
      }
    });
  });
}

/** Numbers in plain decimal notation: Praat's form fields do not read `1e-7`. */
function formatArg(a: string | number): string {
  if (typeof a === 'string') return a;
  if (!Number.isFinite(a)) throw new RangeError(`praat argument is not finite: ${a}`);
  return Number.isInteger(a) ? String(a) : a.toFixed(6);
}

/** True when the praat binary can be started (tests skip without it). */
export async function praatAvailable(): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawnChild(PRAAT_BIN, ['--version']);
    child.on('error', () => resolve(false));
    child.on('close', (code) => resolve(code === 0));
  });
}
