// Decoders started ahead of their jobs. Starting ffmpeg costs 0.05-0.2 s before it reads a byte,
// depending on the machine (the dynamic linker loads some 200 libraries), and a generation's first frame waited behind that
// (docs/benchmarks.md, "Decoders started ahead of their jobs"). A prestarted decoder has paid it
// already: it sits blocked reading its filter graph from a FIFO. Its arguments were fixed before the
// job was known, so what the job decides comes in late: the input is a symbolic link made when it is
// taken, and the frame size, pixel format and count are the last filters of the graph it is sent.
// Once ffmpeg has opened the graph FIFO, this process holds its only write end: should this process
// die, ffmpeg reads an empty graph and exits, so no decoder outlives it. (Before that, in the first
// 0.2 s, only the spawn helper's kill of its children on its parent's death covers it.)
import { closeSync, constants, open, openSync, statSync, symlinkSync, writeSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { startFfmpeg, type FfmpegProcess } from './ffmpeg.js';
import { openFrameFifo, runMkfifo, type FrameFifo } from './frame-fifo.js';
import { makeTempDir, removeTempDir } from './tempdir.js';

/** A decoder handed to a job: started, its graph and input given; frames come through `fifo`. */
export interface TakenDecoder {
  proc: FfmpegProcess;
  fifo: FrameFifo;
  /** Removes its folder; call once the process has exited and the FIFO is disposed of. */
  release(): Promise<void>;
}

export interface DecoderJob {
  /** The whole filter graph, its frames on [vout] at their final size, format and count. */
  graph: string;
  /** The one input (read as `-an -i input`). */
  input: string;
  frameBytes: number;
  take: () => Buffer;
  signal?: AbortSignal;
  timeoutMs?: number;
}

interface Slot {
  dir: string;
  graphFd: number;
  fifo: FrameFifo;
  proc: FfmpegProcess;
  taken: boolean;
  /** Its process has exited. */
  dead: boolean;
}

const pool = {
  target: 0,
  root: undefined as string | undefined,
  idle: [] as Slot[],
  starting: new Set<Promise<void>>(),
  lostInARow: 0,
  counts: { started: 0, taken: 0, lost: 0 },
};
let closing: Promise<void> | null = null;
let replacing: NodeJS.Timeout | null = null;

/**
 * How long after a taken decoder has exited its replacement starts: not at once, where its start
 * (0.05-0.2 s of a core) would compete with the end of the job that took it (the engine's last
 * frames, the encoder's flush). A job that comes sooner starts its own decoder.
 */
const REPLACE_AFTER_MS = 1_000;
const LOST_IN_A_ROW = 3;

/**
 * Keeps `count` decoders waiting (the most asked for so far), under `root` (default: the OS temp
 * folder); one taken is replaced a moment after it has exited (REPLACE_AFTER_MS). Never throws: a
 * decoder that cannot be started leaves its jobs to start their own.
 */
export function prestartDecoders(opts: { count: number; root?: string }): void {
  pool.target = Math.max(pool.target, opts.count);
  pool.root ??= opts.root;
  closing = null;
  fill();
}

/** Lets every waiting decoder go and stops replacing them; resolves once they have exited. */
export async function closePrestartedDecoders(): Promise<void> {
  pool.target = 0;
  if (replacing) clearTimeout(replacing);
  replacing = null;
  const slots = pool.idle.splice(0);
  closing = Promise.all([...slots.map((s) => discard(s)), ...pool.starting]).then(() => undefined);
  await closing;
}

/** Decoders waiting (their process ids), and counts since start (for tests and benchmarks). */
export function prestartedDecoderStats(): {
  idle: number[];
  started: number;
  taken: number;
  lost: number;
} {
  const pid = (s: Slot) => (s.proc.child as { pid?: number }).pid ?? -1;
  return { idle: pool.idle.map(pid), ...pool.counts };
}

/**
 * A waiting decoder given this job, or null when none waits (or it could not be given the job; it
 * is then let go): the caller starts one of its own.
 */
export function takePrestartedDecoder(job: DecoderJob): TakenDecoder | null {
  if (pool.idle.length === 0) return null;
  // Only a file: a protocol or device name means nothing as a link's target.
  const input = resolve(job.input);
  if (!statSync(input, { throwIfNoEntry: false })?.isFile()) return null;
  for (;;) {
    const slot = pool.idle.shift();
    if (!slot) return null;
    try {
      symlinkSync(input, join(slot.dir, 'input'));
      writeAll(slot.graphFd, Buffer.from(job.graph));
      // ffmpeg reads the graph to its end: the end is this, the last write end, closing.
      closeGraph(slot);
    } catch {
      // Its folder is gone (a temp sweep), or ffmpeg with it: this one cannot take the job.
      void discard(slot).then(replaceLater);
      continue;
    }
    slot.taken = true;
    pool.counts.taken++;
    pool.lostInARow = 0;
    // Nothing is lost meanwhile: what ffmpeg writes waits in the FIFO until it is read.
    slot.fifo.bind(job.frameBytes, job.take);
    slot.proc.watch({ signal: job.signal, timeoutMs: job.timeoutMs });
    slot.proc.child.ref();
    void slot.proc.done.catch(() => undefined).then(replaceLater);
    return { proc: slot.proc, fifo: slot.fifo, release: () => removeTempDir(slot.dir) };
  }
}

function replaceLater(): void {
  if (replacing || closing) return;
  replacing = setTimeout(() => {
    replacing = null;
    fill();
  }, REPLACE_AFTER_MS);
  // A process with nothing else to do need not wait for it.
  replacing.unref();
}

function fill(): void {
  while (!closing && pool.idle.length + pool.starting.size < pool.target) {
    const starting: Promise<void> = startOne()
      .then(async (slot) => {
        if (!slot) return;
        if (closing || slot.dead || pool.idle.length >= pool.target) await discard(slot);
        else pool.idle.push(slot);
      })
      .finally(() => pool.starting.delete(starting));
    pool.starting.add(starting);
  }
}

async function startOne(): Promise<Slot | null> {
  let dir: string | null = null;
  let graphFd = -1;
  let fifo: FrameFifo | null = null;
  let proc: FfmpegProcess | null = null;
  try {
    dir = await makeTempDir('lipsync-decoder', pool.root);
    const graphPath = join(dir, 'graph');
    await runMkfifo(graphPath);
    fifo = await openFrameFifo(0, unbound, dir);
    const args = ['-filter_complex_script', graphPath, '-an', '-i', join(dir, 'input')];
    args.push('-map', '[vout]', '-an', '-sn', '-dn', '-f', 'rawvideo', 'pipe:1');
    proc = startFfmpeg(args, { stdin: 'ignore', stdout: { fifo: fifo.path } });
    await proc.child.started;
    fifo.closeWriteEnd();
    // Opening the write end waits for ffmpeg to open the read end: it is then ready, and a graph
    // written from now on is read (one written before it opened would be dropped with the FIFO).
    const writer = openAsync(graphPath, constants.O_WRONLY);
    const first = await Promise.race([writer, proc.done.then(exitedFirst, exitedFirst)]);
    if (first === EXITED) {
      // Nothing will open the read end now: open one to let the pending open finish.
      const reader = openSync(graphPath, constants.O_RDONLY | constants.O_NONBLOCK);
      closeSync(await writer);
      closeSync(reader);
      throw new Error('ffmpeg exited before it read its graph');
    }
    graphFd = first;
    // Ready and waiting: it keeps this process alive no more than an idle thread would.
    proc.child.unref();
    const slot: Slot = { dir, graphFd, fifo, proc, taken: false, dead: false };
    pool.counts.started++;
    void proc.done.catch(() => undefined).then(() => lost(slot));
    return slot;
  } catch {
    proc?.kill('aborted');
    await proc?.done.catch(() => undefined);
    if (graphFd >= 0) closeSync(graphFd);
    await fifo?.dispose();
    if (dir) await removeTempDir(dir);
    return null;
  }
}

/**
 * A waiting decoder exited on its own (killed from outside): dropped, and replaced a moment later,
 * but not after LOST_IN_A_ROW losses with no job taken between them (something keeps killing them).
 */
function lost(slot: Slot): void {
  slot.dead = true;
  if (slot.taken) return;
  const at = pool.idle.indexOf(slot);
  if (at < 0) return;
  pool.idle.splice(at, 1);
  pool.counts.lost++;
  void discard(slot).then(() => {
    if (++pool.lostInARow < LOST_IN_A_ROW) replaceLater();
  });
}

/** Lets a decoder that was never given a job go (each one at most once: it has left `idle`). */
async function discard(slot: Slot): Promise<void> {
  slot.taken = true;
  // Held again: waiting for its exit must keep this process alive.
  slot.proc.child.ref();
  slot.proc.kill('aborted');
  await slot.proc.done.catch(() => undefined);
  closeGraph(slot);
  await slot.fifo.dispose();
  await removeTempDir(slot.dir);
}

function writeAll(fd: number, bytes: Buffer): void {
  for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at);
}

function closeGraph(slot: Slot): void {
  if (slot.graphFd < 0) return;
  closeSync(slot.graphFd);
  slot.graphFd = -1;
}

const openAsync = promisify(open);
const EXITED = Symbol('exited');
const exitedFirst = (): typeof EXITED => EXITED;

function unbound(): Buffer {
  throw new Error('a prestarted decoder wrote before it was given its job');
}
