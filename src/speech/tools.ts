// The one place that starts the speech command-line tools (festival, RHVoice-test, pocketsphinx_batch):
// at most LIPSYNC_SPEECH_PROCESSES at once (shared with Praat), argument arrays only, a hard kill on abort or timeout, and stderr kept as a bounded tail for the log
// (it may quote the text being spoken, so it never goes to clients). A run settles only after the
// process has exited, so callers may delete its files right away.
import { access, constants, readdir, stat } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { spawnChild } from '../processes/spawn.js';
import { ProcessPoolBusyError, speechProcesses } from '../processes/pool.js';

export const FESTIVAL_VOICE_DIR = '/usr/share/festival/voices/us/cmu_us_slt_arctic_hts';
export const RHVOICE_VOICE_ROOT = '/usr/share/RHVoice/voices';
export const SPHINX_MODEL_ROOT = '/usr/share/pocketsphinx/model/en-us';
export const MBROLA_ROOT = '/usr/share/mbrola';
export const PICO_LANG_DIR = '/usr/share/pico/lang';

/** `busy`: every speech process slot was taken and the queue full or its wait over (processes/pool.ts). */
export type ToolFailure = 'failed' | 'aborted' | 'timeout' | 'spawn' | 'busy';

export class SpeechToolError extends Error {
  constructor(
    readonly reason: ToolFailure,
    readonly tool: string,
    message: string,
    /** The last stderr lines, for the log only. */
    readonly stderrTail: readonly string[] = [],
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'SpeechToolError';
  }
}

export interface ToolRunOptions {
  signal?: AbortSignal;
  /** Kill the tool after this many milliseconds (default 120 s: these tools never legitimately hang). */
  timeoutMs?: number;
  /** Written to the tool's stdin, which is then closed. */
  stdin?: string;
  cwd?: string;
}

const TAIL_LINES = 20;

/**
 * Runs a tool to completion, in a slot of the process-wide speech pool, and returns its stdout.
 * Rejects with SpeechToolError.
 */
export async function runTool(
  cmd: string,
  args: readonly string[],
  opts: ToolRunOptions = {},
): Promise<string> {
  try {
    return await speechProcesses().run(() => runNow(cmd, args, opts), opts.signal);
  } catch (err) {
    if (err instanceof SpeechToolError) throw err;
    if (err instanceof ProcessPoolBusyError)
      throw new SpeechToolError('busy', cmd, `${cmd} had no process slot: ${err.message}`, [], {
        cause: err,
      });
    if (opts.signal?.aborted) throw new SpeechToolError('aborted', cmd, `${cmd} was aborted`);
    throw err;
  }
}

function runNow(cmd: string, args: readonly string[], opts: ToolRunOptions): Promise<string> {
  const timeoutMs = opts.timeoutMs ?? 120_000;
  return new Promise<string>((resolve, reject) => {
    if (opts.signal?.aborted) {
      reject(new SpeechToolError('aborted', cmd, `${cmd} was aborted`));
      return;
    }
    const child = spawnChild(cmd, args, {
      cwd: opts.cwd,
      stdin: opts.stdin === undefined ? 'ignore' : 'pipe',
      stdout: 'pipe',
      stderr: 'pipe',
    });
    const out: Buffer[] = [];
    const tail: string[] = [];
    child.stdout?.on('data', (b: Buffer) => out.push(b));
    child.stderr?.setEncoding('utf8');
    child.stderr?.on('data', (chunk: string) => {
      for (const line of chunk.split(/\r?\n/)) {
        if (line.trim() === '') continue;
        tail.push(line.length > 300 ? `${line.slice(0, 300)}...` : line);
        if (tail.length > TAIL_LINES) tail.shift();
      }
    });
    // A closed stdin (tool exited early) must not crash the process.
    child.stdin?.on('error', () => undefined);
    if (opts.stdin !== undefined) child.stdin?.end(opts.stdin);

    let killedFor: ToolFailure | null = null;
    const kill = (reason: ToolFailure): void => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      killedFor ??= reason;
      child.kill('SIGKILL');
    };
    const onAbort = (): void => kill('aborted');
    const timer = setTimeout(() => kill('timeout'), timeoutMs);
    opts.signal?.addEventListener('abort', onAbort, { once: true });

    let spawnError: Error | null = null;
    child.on('error', (err) => {
      spawnError = err;
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      opts.signal?.removeEventListener('abort', onAbort);
      if (spawnError) {
        reject(new SpeechToolError('spawn', cmd, `${cmd} could not start: ${(spawnError as Error).message}`));
      } else if (killedFor === 'timeout') {
        reject(new SpeechToolError('timeout', cmd, `${cmd} timed out after ${timeoutMs} ms`, tail));
      } else if (killedFor === 'aborted') {
        reject(new SpeechToolError('aborted', cmd, `${cmd} was aborted`, tail));
      } else if (code === 0) {
        resolve(Buffer.concat(out).toString('utf8'));
      } else {
        reject(new SpeechToolError('failed', cmd, `${cmd} failed (exit ${code ?? signal})`, tail));
      }
    });
  });
}

async function onPath(bin: string): Promise<boolean> {
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (!dir) continue;
    try {
      await access(join(dir, bin), constants.X_OK);
      return true;
    } catch {
      // not in this directory
    }
  }
  return false;
}

async function isDir(path: string): Promise<boolean> {
  return stat(path).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

export const RHVOICE_VOICES = ['clb', 'bdl', 'slt', 'alan'] as const;
export type RhvoiceVoice = (typeof RHVOICE_VOICES)[number];

export interface LocalEngines {
  /** festival with the cmu_us_slt_arctic_hts voice. */
  festival: boolean;
  /** RHVoice voices whose data is installed (only the LGPL ones are ever used). */
  rhvoice: RhvoiceVoice[];
  /** pocketsphinx_batch with the en-us model (forced alignment). */
  pocketsphinx: boolean;
  ffmpeg: boolean;
  /** espeak-ng and mbrola (other languages), with the MBROLA databases installed. */
  espeak?: { mbrolaDbs: string[] };
  /** pico2wave (SVOX Pico, non-free) with its language files. */
  pico?: boolean;
}

let detected: Promise<LocalEngines> | null = null;

/** Which local speech engines are installed (looked up once per process). */
export function detectLocalEngines(): Promise<LocalEngines> {
  detected ??= (async () => {
    const [festival, rhvoiceBin, sphinx, ffmpeg, espeak, mbrola, pico] = await Promise.all([
      Promise.all([onPath('festival'), isDir(FESTIVAL_VOICE_DIR)]).then(([a, b]) => a && b),
      onPath('RHVoice-test'),
      Promise.all([onPath('pocketsphinx_batch'), isDir(join(SPHINX_MODEL_ROOT, 'en-us'))]).then(
        ([a, b]) => a && b,
      ),
      onPath('ffmpeg'),
      onPath('espeak-ng'),
      onPath('mbrola'),
      Promise.all([onPath('pico2wave'), isDir(PICO_LANG_DIR)]).then(([a, b]) => a && b),
    ]);
    const rhvoice: RhvoiceVoice[] = [];
    if (rhvoiceBin) {
      for (const v of RHVOICE_VOICES) if (await isDir(join(RHVOICE_VOICE_ROOT, v))) rhvoice.push(v);
    }
    const mbrolaDbs = espeak && mbrola ? await installedMbrolaDbs() : [];
    return { festival, rhvoice, pocketsphinx: sphinx, ffmpeg, espeak: { mbrolaDbs }, pico };
  })();
  return detected;
}

/** The MBROLA databases installed (folders under /usr/share/mbrola holding their voice file). */
export async function installedMbrolaDbs(): Promise<string[]> {
  const entries = await readdir(MBROLA_ROOT).catch(() => [] as string[]);
  const out: string[] = [];
  for (const e of entries) {
    const ok = await access(join(MBROLA_ROOT, e, e), constants.R_OK).then(
      () => true,
      () => false,
    );
    if (ok) out.push(e);
  }
  return out;
}
