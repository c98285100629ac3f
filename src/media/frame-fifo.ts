// Raw frames from a decoder without a buffer per read. A child's stdout pipe read the usual way hands
// over a fresh 64 KiB buffer per read, some twenty per 1280x720 frame, each then copied into the
// frame; on a busy job thread that memory made V8 run a mark-compact about every 100 ms
// (bench/results/2026-history.md, "fifth pass"). Here ffmpeg writes into a FIFO whose read end is a net.Socket
// with `onread`: each read lands straight in the frame being filled (a pooled buffer), and a full
// queue stops reading, so the decoder is paced by its consumer as through a pipe.
import { closeSync, constants, openSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnChild } from '../processes/spawn.js';

/** Complete frames waiting for the consumer before reading stops (callers read ahead themselves: prefetch). */
const READY_LIMIT = 1;

export interface FrameFifo {
  /** The FIFO, for the child's stdout ({ fifo: path }). */
  readonly path: string;
  /**
   * Closes this process's write end, held so that the read end sees no end of file before the
   * child has opened its own: call it once the child has started (or failed to).
   */
  closeWriteEnd(): void;
  /** The frames, in order; ends when the writer closes (partialBytes then tells of a frame cut short). */
  frames(): AsyncGenerator<Buffer>;
  /** Bytes of a frame left incomplete at the end. */
  readonly partialBytes: number;
  /** Stops reading and removes the FIFO (safe to call more than once). */
  dispose(): Promise<void>;
}

/**
 * Creates a FIFO in a private temporary folder, opened at both ends. Rejects when the system cannot
 * make one (no `mkfifo`); the caller then reads a plain pipe.
 */
export async function openFrameFifo(
  frameBytes: number,
  take: () => Buffer,
  root: string = tmpdir(),
): Promise<FrameFifo> {
  const { dir, path, readFd, writeFd } = await makeFifo(root);
  return new SocketFrameFifo(dir, path, readFd, writeFd, frameBytes, take);
}

/** A FIFO in a private temporary folder, opened at both ends (this process holds both). */
async function makeFifo(
  root: string,
): Promise<{ dir: string; path: string; readFd: number; writeFd: number }> {
  const dir = await mkdtemp(join(root, 'lipsync-frames-'));
  const path = join(dir, 'frames');
  let readFd = -1;
  try {
    await runMkfifo(path);
    // Non-blocking so the read end opens without a writer; the write end then opens at once.
    readFd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    const writeFd = openSync(path, constants.O_WRONLY);
    return { dir, path, readFd, writeFd };
  } catch (err) {
    if (readFd >= 0) closeSync(readFd);
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

function runMkfifo(path: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawnChild('mkfifo', ['-m', '600', path]);
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`mkfifo exited with ${code}`))));
  });
}

class SocketFrameFifo implements FrameFifo {
  private readonly socket: net.Socket;
  private readonly ready: Buffer[] = [];
  private current: Buffer | null = null;
  private have = 0;
  private ended = false;
  private failure: Error | null = null;
  private wake: (() => void) | null = null;
  private writeOpen = true;
  private disposed = false;

  constructor(
    private readonly dir: string,
    readonly path: string,
    readFd: number,
    private readonly writeFd: number,
    private readonly frameBytes: number,
    private readonly take: () => Buffer,
  ) {
    // `onread` is what net.connect passes to the constructor too; the constructor's type omits it.
    const options: net.SocketConstructorOpts & { onread: net.OnReadOpts } = {
      fd: readFd,
      readable: true,
      writable: false,
      onread: { buffer: () => this.target(), callback: (n: number) => this.filled(n) },
    };
    this.socket = new net.Socket(options);
    this.socket.on('end', () => this.settle(null));
    this.socket.on('error', (err) => this.settle(err));
    this.socket.on('close', () => this.settle(null));
  }

  get partialBytes(): number {
    return this.have;
  }

  closeWriteEnd(): void {
    if (!this.writeOpen) return;
    this.writeOpen = false;
    closeSync(this.writeFd);
  }

  /** Where the next read lands: the rest of the frame being filled. */
  private target(): Uint8Array {
    this.current ??= this.take();
    return this.current.subarray(this.have);
  }

  /** Returning false stops reading until the consumer catches up (see frames()). */
  private filled(n: number): boolean {
    this.have += n;
    if (this.have === this.frameBytes && this.current) {
      this.ready.push(this.current);
      this.current = null;
      this.have = 0;
      this.notify();
    }
    return this.ready.length < READY_LIMIT;
  }

  private settle(err: Error | null): void {
    if (this.ended) return;
    this.ended = true;
    this.failure = err;
    this.notify();
  }

  private notify(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  async *frames(): AsyncGenerator<Buffer> {
    for (;;) {
      const frame = this.ready.shift();
      if (frame) {
        // Reading stopped on a full queue: there is room again.
        if (this.ready.length < READY_LIMIT && !this.ended) this.socket.resume();
        yield frame;
        continue;
      }
      if (this.failure) throw this.failure;
      if (this.ended) return;
      await new Promise<void>((resolve) => (this.wake = resolve));
    }
  }

  async dispose(): Promise<void> {
    if (this.disposed) return;
    this.disposed = true;
    this.closeWriteEnd();
    this.socket.destroy();
    await rm(this.dir, { recursive: true, force: true });
  }
}
