// The one way the service starts a child process. By default the start is done by the spawn helper
// (spawn-helper.ts), a small process forked once: a fork() of this large process blocks its event
// loop while the page tables are copied (5-8 ms) and makes it pay a copy-on-write fault for every page
// it writes afterwards (about 3% of a 720p generation's CPU; ADR 18). The child looks like a
// ChildProcess to the caller: stdout and stderr as readable streams, stdin as a writable one, 'error'
// and 'close' events, kill().
//
// Bulk data never crosses the helper: frames go through FIFOs that the child opens by path
// ({ fifo }) or through its stdin pipe, handed over to this process; what is relayed is small
// (ffprobe's JSON, progress lines, stderr, a tool's output). `direct: true`, or useSpawnHelper(false)
// (LIPSYNC_SPAWN_HELPER=0), starts children from this process instead.
import { fork, spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { closeSync, constants, openSync } from 'node:fs';
import { Socket } from 'node:net';
import { Readable, Writable } from 'node:stream';
import type { FromHelper, StdioRequest, ToHelper } from './spawn-protocol.js';

export type { FifoStdio } from './spawn-protocol.js';

export interface SpawnOptions {
  cwd?: string;
  /** 'pipe' gives `stdin`; { fifo } makes the child read that FIFO, whose write end the caller holds. */
  stdin?: StdioRequest;
  /** 'pipe' gives `stdout`; { fifo } makes the child write into that FIFO, whose read end the caller holds. */
  stdout?: StdioRequest;
  stderr?: 'ignore' | 'pipe';
  /** Start it from this process (for bulk data through stdio pipes). */
  direct?: boolean;
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
  /**
   * Whether the child keeps this process's event loop alive (it does unless unref'd): one kept
   * waiting for work that may never come (prestarted-decoders.ts) does not.
   */
  ref(): void;
  unref(): void;
  on(event: 'error', listener: (err: Error) => void): this;
  on(event: 'close', listener: (code: number | null, signal: NodeJS.Signals | null) => void): this;
}

let helperDisabled = false;

/** Whether children are started through the helper (config.spawnHelper; on by default). */
export function useSpawnHelper(on: boolean): void {
  helperDisabled = !on;
}

/**
 * Lets the helper go and waits until it has exited (it kills any child still running first): for a
 * process about to exit, so that none of its descendants outlives it. A later start forks a new one.
 */
export async function closeSpawnHelper(timeoutMs = 5_000): Promise<void> {
  const closing = helper;
  helper = null;
  await closing?.close(timeoutMs);
}

/** The helper's process id while one runs (for tests). */
export function spawnHelperPid(): number | undefined {
  return helper?.pid;
}
const counts = { started: 0, viaHelper: 0 };

/** Children started so far, and how many of them through the helper (for tests and benchmarks). */
export function spawnCounts(): { started: number; viaHelper: number } {
  return { ...counts };
}

export function spawnChild(cmd: string, args: readonly string[], opts: SpawnOptions = {}): Child {
  counts.started++;
  const request = {
    cmd,
    args,
    cwd: opts.cwd,
    stdin: opts.stdin ?? 'ignore',
    stdout: opts.stdout ?? 'ignore',
    stderr: opts.stderr ?? 'ignore',
  };
  if (opts.direct || helperDisabled) return spawnDirect(request);
  helper ??= new SpawnHelper();
  counts.viaHelper++;
  return helper.spawn(request);
}

type Request = Omit<Extract<ToHelper, { t: 'spawn' }>, 't' | 'id' | 'env'>;

function spawnDirect(r: Request): Child {
  const fds: number[] = [];
  const stdio = [r.stdin, r.stdout].map((s, i) => {
    if (typeof s !== 'object') return s;
    const fd = openSync(s.fifo, i === 0 ? constants.O_RDONLY : constants.O_WRONLY);
    fds.push(fd);
    return fd;
  });
  let child: ChildProcess;
  try {
    child = spawn(r.cmd, r.args, { cwd: r.cwd, stdio: [stdio[0], stdio[1], r.stderr] });
  } finally {
    for (const fd of fds) closeSync(fd);
  }
  const started = new Promise<void>((resolve) => {
    child.once('spawn', resolve);
    child.once('error', () => resolve());
  });
  // Its stdio pipes are handles of their own (sockets): unref'ing the process alone would not let go.
  const pipes = [child.stdin, child.stdout, child.stderr] as (Socket | null)[];
  const own = { ref: child.ref.bind(child), unref: child.unref.bind(child) };
  const ref = (): void => {
    own.ref();
    for (const p of pipes) p?.ref();
  };
  const unref = (): void => {
    own.unref();
    for (const p of pipes) p?.unref();
  };
  return Object.assign(child, { started, ref, unref }) as Child;
}

/**
 * A helper child's stdin: writes wait for the pipe's socket to be handed over, then go straight into
 * it. A write completes only once the socket has passed it to the kernel, so after 'drain' the
 * caller may reuse its buffers, as with a ChildProcess's own stdin.
 */
class HandedOverStdin extends Writable {
  private socket: Socket | null = null;
  private waiting: (() => void) | null = null;
  private gone = false;

  attach(socket: Socket): void {
    this.socket = socket;
    socket.on('error', (err) => this.destroy(err));
    const next = this.waiting;
    this.waiting = null;
    next?.();
  }

  /** The child has exited: a write that still waits for the socket fails as on a closed pipe. */
  childClosed(): void {
    this.gone = true;
    if (this.waiting && !this.socket)
      this.destroy(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, cb: (err?: Error | null) => void): void {
    if (this.socket) this.socket.write(chunk, cb);
    else if (this.gone) cb(Object.assign(new Error('write EPIPE'), { code: 'EPIPE' }));
    else this.waiting = () => this._write(chunk, _encoding, cb);
  }

  override _final(cb: (err?: Error | null) => void): void {
    if (this.socket) this.socket.end(cb);
    else if (this.gone) cb();
    else this.waiting = () => this._final(cb);
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    this.socket?.destroy();
    cb(err);
  }
}

/** A child started by the helper. */
class HelperChild extends EventEmitter implements Child {
  readonly stdin: Writable | null;
  readonly stdout: Readable | null;
  readonly stderr: Readable | null;
  exitCode: number | null = null;
  signalCode: NodeJS.Signals | null = null;
  pid: number | undefined;
  readonly started: Promise<void>;
  /** Whether it keeps the helper, and so this process, alive (ref/unref). */
  held = true;
  private markStarted!: () => void;
  private closed = false;

  constructor(
    private readonly id: number,
    request: Request,
    private readonly post: (m: ToHelper) => void,
    private readonly heldChanged: () => void,
  ) {
    super();
    this.started = new Promise((resolve) => (this.markStarted = resolve));
    const readable = (wanted: StdioRequest) => (wanted === 'pipe' ? new Readable({ read() {} }) : null);
    this.stdout = readable(request.stdout);
    this.stderr = readable(request.stderr);
    this.stdin = request.stdin === 'pipe' ? new HandedOverStdin() : null;
  }

  ref(): void {
    this.held = true;
    this.heldChanged();
  }

  unref(): void {
    this.held = false;
    this.heldChanged();
  }

  kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
    if (this.closed) return false;
    this.post({ t: 'kill', id: this.id, signal });
    return true;
  }

  receive(m: FromHelper, handle?: unknown): void {
    switch (m.t) {
      case 'stdin':
        if (this.stdin instanceof HandedOverStdin && handle instanceof Socket) this.stdin.attach(handle);
        break;
      case 'spawned':
        this.pid = m.pid;
        this.markStarted();
        this.emit('spawn');
        break;
      case 'out': {
        const data = Buffer.from(m.data.buffer, m.data.byteOffset, m.data.byteLength);
        (m.fd === 1 ? this.stdout : this.stderr)?.push(data);
        break;
      }
      case 'error': {
        const err: NodeJS.ErrnoException = new Error(m.message);
        if (m.code) err.code = m.code;
        this.markStarted();
        // As from a ChildProcess: 'error' with no listener would throw.
        if (this.listenerCount('error') > 0) this.emit('error', err);
        break;
      }
      case 'close':
        this.finish(m.code, m.signal);
        break;
    }
  }

  finish(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.closed) return;
    this.closed = true;
    this.exitCode = code;
    this.signalCode = signal;
    this.markStarted();
    this.stdout?.push(null);
    this.stderr?.push(null);
    if (this.stdin instanceof HandedOverStdin) this.stdin.childClosed();
    // After the output already pushed has reached flowing 'data' listeners.
    setImmediate(() => this.emit('close', code, signal));
  }
}

/** The helper process, forked on the first start and again if it ever dies. */
class SpawnHelper {
  private readonly process: ChildProcess;
  private readonly children = new Map<number, HelperChild>();
  private nextId = 1;
  private ready = false;

  get pid(): number | undefined {
    return this.process.pid;
  }

  constructor() {
    // Under tsx (tests, benchmarks) this module is the .ts source and the helper needs tsx's loader.
    const source = import.meta.url.endsWith('.ts');
    const entry = new URL(`./spawn-helper${source ? '.ts' : '.js'}`, import.meta.url);
    this.process = fork(entry, [], {
      execArgv: source ? ['--import', import.meta.resolve('tsx')] : [],
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.process.on('message', (m: FromHelper, handle: unknown) => this.receive(m, handle));
    this.process.on('error', () => this.lost());
    this.process.on('exit', () => this.lost());
    this.idle();
  }

  spawn(request: Request): Child {
    const id = this.nextId++;
    const child = new HelperChild(
      id,
      request,
      (m) => this.post(m),
      () => this.holdIfNeeded(),
    );
    this.children.set(id, child);
    this.holdIfNeeded();
    this.post({ t: 'spawn', id, ...request, env: process.env });
    return child;
  }

  private post(m: ToHelper): void {
    // A send that fails (the helper is gone) shows as the child's end through lost().
    if (this.process.connected) this.process.send(m, undefined, undefined, () => undefined);
  }

  private receive(m: FromHelper, handle: unknown): void {
    if (m.t === 'ready') {
      this.ready = true;
      return;
    }
    const child = this.children.get(m.id);
    if (!child) {
      if (handle instanceof Socket) handle.destroy();
      return;
    }
    child.receive(m, handle);
    if (m.t === 'close') {
      this.children.delete(m.id);
      this.holdIfNeeded();
    }
  }

  /** The helper died (or never started): its children fail, and the next start forks a new one. */
  private lost(): void {
    if (helper === this) {
      helper = null;
      // A helper that never came up will not on the next try either.
      if (!this.ready) helperDisabled = true;
    }
    for (const child of this.children.values()) {
      child.receive({ t: 'error', id: 0, message: 'the spawn helper exited', code: 'EHELPER' });
      child.finish(null, 'SIGKILL');
    }
    this.children.clear();
  }

  async close(timeoutMs: number): Promise<void> {
    if (this.process.exitCode !== null || this.process.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => this.process.once('exit', () => resolve()));
    // Its channel closing is what makes the helper kill its children and leave.
    if (this.process.connected) this.process.disconnect();
    const timer = setTimeout(() => this.process.kill('SIGKILL'), timeoutMs);
    await exited;
    clearTimeout(timer);
  }

  // The helper and its channel keep the event loop alive only while a child runs (one not unref'd).
  private holdIfNeeded(): void {
    if ([...this.children.values()].some((c) => c.held)) {
      this.process.ref();
      this.process.channel?.ref();
    } else {
      this.idle();
    }
  }
  private idle(): void {
    this.process.unref();
    this.process.channel?.unref();
  }
}

let helper: SpawnHelper | null = null;
