// The spawn helper: a small process, forked once, that starts the service's child processes (ffmpeg,
// ffprobe, the speech tools) on its behalf. Starting a process means fork(), and after a fork every
// page the large parent writes costs it a copy-on-write fault; from this small process that cost is
// a few pages (ADR 18). It imports nothing of the project: it stays small and starts fast.
//
// When its parent goes (exit, crash, kill -9), the IPC channel closes and the helper kills every
// child it started, so no ffmpeg outlives the worker that wanted it.
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import { open, type FileHandle } from 'node:fs/promises';
import type { Socket } from 'node:net';
import type { FromHelper, StdioRequest, ToHelper } from './spawn-protocol.js';

interface Entry {
  child: ChildProcess | null;
  pendingKill: NodeJS.Signals | null;
}

const entries = new Map<number, Entry>();

function send(message: FromHelper, done?: () => void, handle?: Socket): void {
  if (!process.connected) return;
  process.send?.(message, handle, undefined, () => done?.());
}

/** A FIFO opened for the child: its read end as stdin, its write end as stdout. */
async function openFifo(request: StdioRequest, flags: 'r' | 'w'): Promise<FileHandle | null> {
  return typeof request === 'object' ? open(request.fifo, flags) : null;
}

function stdioOf(request: StdioRequest, file: FileHandle | null): 'ignore' | 'pipe' | number {
  return file ? file.fd : (request as 'ignore' | 'pipe');
}

/**
 * Forwards a child's output, reading on only once the parent's channel has taken each chunk. (Its
 * socket cannot be handed over like stdin's: this process would already have read from it.)
 */
function relay(id: number, fd: 1 | 2, stream: NodeJS.ReadableStream | null): void {
  stream?.on('data', (chunk: Buffer) => {
    stream.pause();
    send({ t: 'out', id, fd, data: chunk }, () => stream.resume());
  });
}

async function start(m: Extract<ToHelper, { t: 'spawn' }>): Promise<void> {
  const entry: Entry = { child: null, pendingKill: null };
  entries.set(m.id, entry);
  let stdinFile: FileHandle | null = null;
  let stdoutFile: FileHandle | null = null;
  try {
    // The caller holds the other end of each FIFO open, so these opens return at once.
    [stdinFile, stdoutFile] = await Promise.all([openFifo(m.stdin, 'r'), openFifo(m.stdout, 'w')]);
    const stdio: StdioOptions = [stdioOf(m.stdin, stdinFile), stdioOf(m.stdout, stdoutFile), m.stderr];
    const child = spawn(m.cmd, m.args, { cwd: m.cwd, env: m.env, stdio });
    entry.child = child;
    child.on('spawn', () => {
      // Handed over, and closed here once sent; messages after it wait for the parent to take it.
      if (child.stdin) send({ t: 'stdin', id: m.id }, undefined, child.stdin as Socket);
      send({ t: 'spawned', id: m.id, pid: child.pid ?? -1 });
    });
    child.on('error', (err: NodeJS.ErrnoException) => {
      send({ t: 'error', id: m.id, message: err.message, code: err.code });
    });
    child.on('close', (code, signal) => {
      entries.delete(m.id);
      send({ t: 'close', id: m.id, code, signal });
    });
    relay(m.id, 1, child.stdout);
    relay(m.id, 2, child.stderr);
    if (entry.pendingKill) child.kill(entry.pendingKill);
  } catch (err) {
    entries.delete(m.id);
    const e = err as NodeJS.ErrnoException;
    send({ t: 'error', id: m.id, message: e.message, code: e.code });
    send({ t: 'close', id: m.id, code: null, signal: null });
  } finally {
    // The child holds its own copies.
    await stdinFile?.close();
    await stdoutFile?.close();
  }
}

process.on('message', (m: ToHelper) => {
  if (m.t === 'spawn') {
    void start(m);
    return;
  }
  const entry = entries.get(m.id);
  if (!entry) return;
  if (m.t === 'kill') {
    if (entry.child) entry.child.kill(m.signal);
    else entry.pendingKill = m.signal;
  }
});

process.on('disconnect', () => {
  for (const { child } of entries.values()) child?.kill('SIGKILL');
  process.exit(0);
});

// A terminal's Ctrl-C reaches the whole process group; the parent decides when its work stops, and
// the helper leaves when the parent does.
process.on('SIGINT', () => undefined);
process.on('SIGTERM', () => undefined);

send({ t: 'ready' });
