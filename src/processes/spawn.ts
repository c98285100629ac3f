// The one way the service starts a child process: child_process.spawn, with a FIFO given by path
// opened here and handed to the child as its stdin or stdout (frames travel through FIFOs:
// media/frame-fifo.ts). The child is a ChildProcess with `started`, which settles once it has started
// or failed to.
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, constants, openSync } from 'node:fs';
import type { Readable, Writable } from 'node:stream';

/** stdin: read from that FIFO (the caller holds its write end); stdout: write into it. */
export interface FifoStdio {
  fifo: string;
}
export type StdioRequest = 'ignore' | 'pipe' | FifoStdio;

export interface SpawnOptions {
  cwd?: string;
  /** 'pipe' gives `stdin`; { fifo } makes the child read that FIFO, whose write end the caller holds. */
  stdin?: StdioRequest;
  /** 'pipe' gives `stdout`; { fifo } makes the child write into that FIFO, whose read end the caller holds. */
  stdout?: StdioRequest;
  stderr?: 'ignore' | 'pipe';
}

/** What callers use of a ChildProcess. */
export interface Child {
  readonly stdin: Writable | null;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  readonly exitCode: number | null;
  readonly signalCode: NodeJS.Signals | null;
  /** Settles once the child has started or failed to (its FIFOs are open by then); never rejects. */
  readonly started: Promise<void>;
  kill(signal?: NodeJS.Signals): boolean;
  on(event: 'error', listener: (err: Error) => void): this;
  on(event: 'close', listener: (code: number | null, signal: NodeJS.Signals | null) => void): this;
}

export function spawnChild(cmd: string, args: readonly string[], opts: SpawnOptions = {}): Child {
  // The caller holds the other end of a FIFO open already, so opening this end does not block.
  const fds: number[] = [];
  const stdio = [opts.stdin ?? 'ignore', opts.stdout ?? 'ignore'].map((s, i) => {
    if (typeof s !== 'object') return s;
    const fd = openSync(s.fifo, i === 0 ? constants.O_RDONLY : constants.O_WRONLY);
    fds.push(fd);
    return fd;
  });
  let child: ChildProcess;
  try {
    child = spawn(cmd, args, { cwd: opts.cwd, stdio: [stdio[0], stdio[1], opts.stderr ?? 'ignore'] });
  } finally {
    for (const fd of fds) closeSync(fd);
  }
  const started = new Promise<void>((resolve) => {
    child.once('spawn', resolve);
    child.once('error', () => resolve());
  });
  return Object.assign(child, { started });
}
