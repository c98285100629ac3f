// The one place that starts ffmpeg: argument arrays only (never a shell string), bounded stderr kept
// for error messages, progress from `-progress pipe:1`, and a hard kill on abort or timeout. A run
// settles only after the process has exited, so callers may delete its files right away. Decoded
// frames come through a FIFO (frame-fifo.ts), frames to encode go into its stdin pipe.
import { spawnChild, type Child, type FifoStdio } from '../processes/spawn.js';

export const FFMPEG_BIN = 'ffmpeg';

export type MediaProcessFailure = 'failed' | 'aborted' | 'timeout' | 'spawn';

export class MediaProcessError extends Error {
  constructor(
    readonly reason: MediaProcessFailure,
    message: string,
    /** The last lines ffmpeg wrote to stderr (its own error messages). */
    readonly stderrTail: readonly string[] = [],
    readonly exitCode: number | null = null,
  ) {
    super(message);
    this.name = 'MediaProcessError';
  }
}

export interface FfmpegRunOptions {
  signal?: AbortSignal;
  /** Kill ffmpeg after this many milliseconds (no limit when unset). */
  timeoutMs?: number;
  /** Seconds of output written so far (from ffmpeg's out_time). */
  onProgress?: (seconds: number) => void;
}

interface StartOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  /** { fifo }: ffmpeg reads that FIFO as its stdin (the caller holds the write end). */
  stdin: 'ignore' | 'pipe' | FifoStdio;
  /** { fifo }: ffmpeg writes its stdout into that FIFO (the caller holds the read end). */
  stdout: 'ignore' | 'pipe' | FifoStdio;
}

export interface FfmpegProcess {
  child: Child;
  /** Resolves when ffmpeg exits with status 0; rejects with a MediaProcessError otherwise. */
  done: Promise<void>;
  /** Kills ffmpeg (SIGKILL); `done` then rejects with the given reason. */
  kill(reason?: MediaProcessFailure): void;
}

const TAIL_LINES = 30;

/** Starts ffmpeg with `-hide_banner -nostats -loglevel error` (+ `-nostdin`) and the caller's args. */
export function startFfmpeg(args: readonly string[], opts: StartOptions): FfmpegProcess {
  const base = ['-hide_banner', '-nostats', '-loglevel', 'error'];
  if (opts.stdin === 'ignore') base.push('-nostdin');
  const child = spawnChild(FFMPEG_BIN, [...base, ...args], {
    stdin: opts.stdin,
    stdout: opts.stdout,
    stderr: 'pipe',
  });
  const tail: string[] = [];
  let partial = '';
  child.stderr?.setEncoding('utf8');
  child.stderr?.on('data', (chunk: string) => {
    const lines = (partial + chunk).split(/\r?\n|\r/);
    partial = lines.pop() ?? '';
    for (const line of lines) {
      if (line.trim() === '') continue;
      tail.push(line.length > 500 ? `${line.slice(0, 500)}...` : line);
      if (tail.length > TAIL_LINES) tail.shift();
    }
  });

  let killedFor: MediaProcessFailure | null = null;
  const kill = (reason: MediaProcessFailure = 'aborted'): void => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    killedFor ??= reason;
    child.kill('SIGKILL');
  };
  const onAbort = (): void => kill('aborted');
  const timer = opts.timeoutMs !== undefined ? setTimeout(() => kill('timeout'), opts.timeoutMs) : null;
  if (opts.signal?.aborted) queueMicrotask(onAbort);
  else opts.signal?.addEventListener('abort', onAbort, { once: true });

  const done = new Promise<void>((resolve, reject) => {
    let spawnError: Error | null = null;
    child.on('error', (err) => {
      spawnError = err;
    });
    child.on('close', (code, signal) => {
      if (timer) clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (partial.trim() !== '') tail.push(partial.trim());
      const stderrTail = tail.slice(-TAIL_LINES);
      if (spawnError) {
        reject(new MediaProcessError('spawn', `ffmpeg could not start: ${spawnError.message}`));
      } else if (killedFor === 'timeout') {
        reject(new MediaProcessError('timeout', `ffmpeg timed out after ${opts.timeoutMs} ms`, stderrTail));
      } else if (killedFor === 'aborted') {
        reject(new MediaProcessError('aborted', 'ffmpeg was aborted', stderrTail));
      } else if (code === 0) {
        resolve();
      } else {
        const last = stderrTail.at(-1) ?? `exit ${code ?? signal}`;
        reject(new MediaProcessError('failed', `ffmpeg failed: ${last}`, stderrTail, code));
      }
    });
  });
  return { child, done, kill };
}

/**
 * Runs ffmpeg to completion. Global options `-y -progress pipe:1` are added; progress is
 * reported as seconds of output time. Rejects with MediaProcessError (reason failed, aborted,
 * timeout or spawn) carrying the last stderr lines.
 */
export async function runFfmpeg(args: string[], opts: FfmpegRunOptions = {}): Promise<void> {
  const proc = startFfmpeg(['-y', '-progress', 'pipe:1', ...args], {
    signal: opts.signal,
    timeoutMs: opts.timeoutMs,
    stdin: 'ignore',
    stdout: 'pipe',
  });
  let buffered = '';
  proc.child.stdout?.setEncoding('utf8');
  proc.child.stdout?.on('data', (chunk: string) => {
    buffered += chunk;
    const lines = buffered.split('\n');
    buffered = lines.pop() ?? '';
    for (const line of lines) {
      const m = /^out_time_us=(-?\d+)/.exec(line);
      if (m && opts.onProgress) {
        const seconds = Number(m[1]) / 1e6;
        if (Number.isFinite(seconds) && seconds >= 0) opts.onProgress(seconds);
      }
    }
  });
  await proc.done;
}

/** Escapes a value for use inside an ffmpeg filter option (`key=value` in a filtergraph). */
export function escapeFilterValue(value: string): string {
  // Level 1 (option value): backslash-escape \ ' : ; level 2 (graph): quote the whole value.
  const level1 = value.replace(/[\\':]/g, (c) => `\\${c}`);
  return `'${level1.replace(/'/g, `'\\''`)}'`;
}
