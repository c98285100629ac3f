// Raw frame streams for the engine stage: ffmpeg decodes to raw frames on stdout and encodes raw
// frames from stdin, rgb24 by default or yuv420p (the codecs' own format: no colour conversion in
// ffmpeg, half the bytes; an engine that takes it converts only what it draws on). Both honour
// backpressure (a slow consumer pauses ffmpeg through the pipe), so memory stays flat however long
// the video is.
import { pipeline } from 'node:stream/promises';
import {
  aacArgs,
  containerArgs,
  DEFAULT_H264,
  h264Args,
  type H264Settings,
  type OutputFormat,
} from './encoding.js';
import { MediaProcessError, startFfmpeg, type FfmpegProcess } from './ffmpeg.js';
import { openFrameFifo } from './frame-fifo.js';

export interface FrameSize {
  width: number;
  height: number;
  /** rgb24 (default; 3 bytes per pixel) or yuv420p (planar, 1.5 bytes per pixel; even sizes only). */
  pixelFormat?: PixelFormat;
}

export type PixelFormat = 'rgb24' | 'yuv420p';

export interface DecodeSpec extends FrameSize {
  /** Input options and inputs, e.g. ['-i', path] or ['-ss', '2', '-i', path]. */
  inputArgs: string[];
  /** A filter chain for the first input's video (-vf). */
  videoFilter?: string;
  /** Or a complex graph with the frames on output label `output` (without brackets). */
  filterComplex?: { graph: string; output: string };
  /** Stop after this many frames. */
  maxFrames?: number;
}

export interface StreamOptions {
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Where the decoder's FIFO is made (its own private folder inside; default: the OS temp folder). */
  tmpRoot?: string;
  /**
   * Frame buffers to reuse: the decoder takes its frames from the pool, the encoder gives each back
   * once it is written. A frame of several megabytes allocated anew per frame made the job thread's
   * garbage collector run a full mark-compact every few frames (bench/results/2026-history.md).
   */
  pool?: FramePool;
}

/**
 * Reusable frame buffers of one size. Only buffers it made come back into it, and only once the
 * holder is done with them (the encoder, after the pipe took the bytes).
 */
export class FramePool {
  private readonly free: Buffer[] = [];
  private readonly mine = new WeakSet<Buffer>();

  constructor(readonly frameBytes: number) {}

  take(): Buffer {
    const b = this.free.pop();
    if (b) return b;
    const made = Buffer.allocUnsafeSlow(this.frameBytes);
    this.mine.add(made);
    return made;
  }

  give(b: Buffer): void {
    // A bounded free list: the frames in flight are a handful (read-ahead on both sides).
    if (this.mine.has(b) && this.free.length < 16 && !this.free.includes(b)) this.free.push(b);
  }
}

export function frameBytes(size: FrameSize): number {
  if (size.pixelFormat === 'yuv420p') {
    if (size.width % 2 !== 0 || size.height % 2 !== 0) {
      throw new RangeError('yuv420p frames need an even width and height');
    }
    return size.width * size.height * 1.5;
  }
  return size.width * size.height * 3;
}

function decodeArgs(spec: DecodeSpec): string[] {
  const args = [...spec.inputArgs];
  if (spec.filterComplex) {
    args.push('-filter_complex', spec.filterComplex.graph, '-map', `[${spec.filterComplex.output}]`);
  } else {
    args.push('-map', '0:v:0');
    if (spec.videoFilter) args.push('-vf', spec.videoFilter);
  }
  if (spec.maxFrames !== undefined) args.push('-frames:v', String(spec.maxFrames));
  args.push('-an', '-sn', '-dn', '-f', 'rawvideo', '-pix_fmt', spec.pixelFormat ?? 'rgb24');
  args.push('-s', `${spec.width}x${spec.height}`, 'pipe:1');
  return args;
}

/**
 * Decodes video to raw frames of exactly frameBytes(spec) bytes each. Stopping the iteration early
 * (break, throw) kills ffmpeg; the generator returns only after the process has exited. Frames come
 * through a FIFO read straight into frame buffers (frame-fifo.ts), or through ffmpeg's stdout pipe
 * where no FIFO can be made (or `viaPipe` asks for it).
 */
export async function* decodeFrames(
  spec: DecodeSpec,
  opts: StreamOptions & { viaPipe?: boolean } = {},
): AsyncGenerator<Buffer> {
  const size = frameBytes(spec);
  if (!Number.isInteger(size) || size <= 0) throw new RangeError('frame size must be positive integers');
  const pool = opts.pool?.frameBytes === size ? opts.pool : undefined;
  const take = pool ? () => pool.take() : () => Buffer.allocUnsafeSlow(size);
  const fifo = opts.viaPipe ? null : await openFrameFifo(size, take, opts.tmpRoot).catch(() => null);
  if (!fifo) {
    yield* decodeThroughPipe(spec, size, opts);
    return;
  }
  let proc: FfmpegProcess;
  try {
    proc = startFfmpeg(decodeArgs(spec), { ...opts, stdin: 'ignore', stdout: { fifo: fifo.path } });
  } catch (err) {
    await fifo.dispose();
    throw err;
  }
  // Once ffmpeg holds its own write end, the FIFO ends when ffmpeg closes it.
  void proc.child.started.then(() => fifo.closeWriteEnd());
  try {
    yield* untilExit(proc, fifo.frames(), () => fifo.partialBytes);
  } finally {
    await fifo.dispose();
  }
}

/** The same from ffmpeg's stdout: one buffer per pipe read, joined into frames. */
function decodeThroughPipe(spec: DecodeSpec, size: number, opts: StreamOptions): AsyncGenerator<Buffer> {
  const proc = startFfmpeg(decodeArgs(spec), { ...opts, stdin: 'ignore', stdout: 'pipe' });
  const stdout = proc.child.stdout;
  if (!stdout) throw new MediaProcessError('spawn', 'ffmpeg has no stdout');
  let have = 0;
  async function* joined(): AsyncGenerator<Buffer> {
    let parts: Buffer[] = [];
    for await (const chunk of stdout as AsyncIterable<Buffer>) {
      let rest = chunk;
      while (have + rest.length >= size) {
        const need = size - have;
        parts.push(rest.subarray(0, need));
        rest = rest.subarray(need);
        const frame = joinFrame(parts, size, opts.pool);
        parts = [];
        have = 0;
        yield frame;
      }
      if (rest.length > 0) {
        parts.push(rest);
        have += rest.length;
      }
    }
  }
  return untilExit(proc, joined(), () => have);
}

/**
 * A decoder's frames, then its exit status: a partial last frame is an error, and stopping early
 * (break, throw) kills ffmpeg and returns only once it has exited.
 */
async function* untilExit(
  proc: FfmpegProcess,
  frames: AsyncIterable<Buffer>,
  partialBytes: () => number,
): AsyncGenerator<Buffer> {
  let completed = false;
  try {
    yield* frames;
    await proc.done;
    const have = partialBytes();
    if (have !== 0) throw new MediaProcessError('failed', `the decoder ended inside a frame (${have} bytes)`);
    completed = true;
  } finally {
    if (!completed) {
      proc.kill('aborted');
      await proc.done.catch(() => undefined);
    }
  }
}

/** One frame from its pipe chunks: the chunk itself when it is whole, else copied into one buffer. */
function joinFrame(parts: Buffer[], size: number, pool: FramePool | undefined): Buffer {
  if (parts.length === 1) return parts[0];
  if (!pool || pool.frameBytes !== size) return Buffer.concat(parts, size);
  const frame = pool.take();
  let at = 0;
  for (const p of parts) at += p.copy(frame, at);
  return frame;
}

export interface EncodeSpec extends FrameSize {
  /** Frame rate as ffmpeg understands it: "25", "30000/1001". */
  fps: string;
  outputPath: string;
  format: OutputFormat;
  /** The soundtrack to mux (encoded to AAC); none gives a video-only file. */
  audioPath?: string | null;
  /** Cut the output at this many seconds (e.g. the conformed duration). */
  durationSeconds?: number;
  h264?: H264Settings;
}

export interface EncodeResult {
  frames: number;
}

/**
 * Encodes raw frames (each exactly frameBytes(spec) bytes) plus an optional audio file into an
 * h264/AAC file. Writing waits for the pipe to drain, so a fast producer is paced by the encoder.
 */
export async function encodeFrames(
  frames: AsyncIterable<Buffer> | Iterable<Buffer>,
  spec: EncodeSpec,
  opts: StreamOptions & { onFrames?: (written: number) => void } = {},
): Promise<EncodeResult> {
  const size = frameBytes(spec);
  const pixelFormat = spec.pixelFormat ?? 'rgb24';
  const args = ['-y', '-f', 'rawvideo', '-pix_fmt', pixelFormat, '-s', `${spec.width}x${spec.height}`];
  args.push('-framerate', spec.fps, '-i', 'pipe:0');
  if (spec.audioPath) args.push('-i', spec.audioPath);
  args.push('-map', '0:v:0');
  if (spec.audioPath) args.push('-map', '1:a:0', ...aacArgs());
  args.push(...h264Args(spec.h264 ?? DEFAULT_H264));
  if (spec.durationSeconds !== undefined) args.push('-t', spec.durationSeconds.toFixed(6));
  args.push(...containerArgs(spec.format), spec.outputPath);

  const proc = startFfmpeg(args, { ...opts, stdin: 'pipe', stdout: 'ignore' });
  const stdin = proc.child.stdin;
  if (!stdin) throw new MediaProcessError('spawn', 'ffmpeg has no stdin');
  let written = 0;
  const highWaterMark = stdin.writableHighWaterMark;
  async function* checked(): AsyncGenerator<Buffer> {
    for await (const frame of frames) {
      if (frame.length !== size) {
        throw new RangeError(`frame ${written} has ${frame.length} bytes, expected ${size}`);
      }
      yield frame;
      // Resumed only once the pipe has taken the frame (pipeline waits for 'drain' after each
      // write that fills the pipe's buffer, and a frame always does): it can be reused.
      if (opts.pool && frame.length > highWaterMark) opts.pool.give(frame);
      written++;
      opts.onFrames?.(written);
    }
  }
  try {
    await pipeline(checked, stdin);
  } catch (err) {
    proc.kill('aborted');
    const procErr = await proc.done.then(
      () => null,
      (e: unknown) => e,
    );
    // ffmpeg's own failure (bad audio, disk full) explains a broken pipe better than EPIPE does.
    if (procErr instanceof MediaProcessError && (procErr.reason !== 'aborted' || opts.signal?.aborted)) {
      throw procErr;
    }
    throw err;
  }
  await proc.done;
  return { frames: written };
}
