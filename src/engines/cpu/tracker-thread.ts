// Face tracking off the main thread: FaceMesh is the largest cost per frame (about 13 ms of WASM on
// one core), and tracking only needs the previous frame's landmarks, so a worker thread tracks frames
// ahead while the main thread re-draws the mouth of the frame before. Frames are copied into a small
// ring of shared-memory slots that the worker reads in place; only the landmarks come back. (Moving
// each frame to the worker and back by transfer made every frame a fresh external allocation on both
// threads, which V8 answered with a full mark-compact every few frames.) Workers are pooled: the
// models load once per worker, not once per job; an idle worker is closed after a minute.
import { Worker } from 'node:worker_threads';
import { frameBytes } from '../../media/frames.js';
import type { FaceModels } from './face-models.js';
import { FaceTracker, type FaceObservation, type FaceTrackerOptions } from './face-tracker.js';

export interface TrackedFrame {
  frame: Buffer;
  obs: FaceObservation | null;
}

export type TrackerStats = FaceTracker['stats'];

/**
 * Frames sent to the worker before the first result is awaited: at least 2, since the worker may hold
 * a frame back until the next one arrives (FaceTracker.trackPair).
 */
const IN_FLIGHT = 3;
const IDLE_CLOSE_MS = 60_000;

/** Tracking on the calling thread (the reference behaviour, and the fallback). */
export async function* trackInProcess(
  models: FaceModels,
  frames: AsyncIterable<Buffer>,
  width: number,
  height: number,
  opts: FaceTrackerOptions,
  stats: TrackerStats,
): AsyncGenerator<TrackedFrame> {
  const tracker = new FaceTracker(models, width, height, opts);
  // As on the worker: a frame that may be interpolated waits for the next one (FaceTracker.trackPair).
  let held: Buffer | null = null;
  try {
    for await (const frame of frames) {
      if (held) {
        const first = held;
        held = null;
        const [a, b] = await tracker.trackPair(first, frame);
        yield { frame: first, obs: a };
        yield { frame, obs: b };
      } else if (tracker.canInterpolateNext()) {
        held = frame;
      } else {
        yield { frame, obs: await tracker.track(frame) };
      }
    }
    if (held) yield { frame: held, obs: await tracker.track(held) };
  } finally {
    Object.assign(stats, tracker.stats);
  }
}

type Reply =
  | { type: 'ready' }
  | { type: 'abandoned' }
  | { type: 'tracked'; seq: number; obs: FaceObservation | null }
  | { type: 'stats'; stats: TrackerStats }
  | { type: 'error'; message: string };

interface PooledWorker {
  worker: Worker;
  ready: Promise<void>;
  idleTimer: NodeJS.Timeout | null;
}

const idle: PooledWorker[] = [];
/** Idle workers kept loaded instead of closed after IDLE_CLOSE_MS (warmTrackers raises it). */
let keepLoaded = 0;
let threadsStarted = 0;

/** The pool as it stands: idle threads (loaded or loading), how many are kept, how many ever started. */
export function trackerPool(): { idle: number; keptLoaded: number; threadsStarted: number } {
  return { idle: idle.length, keptLoaded: keepLoaded, threadsStarted };
}

function spawnWorker(): PooledWorker {
  threadsStarted++;
  // Under tsx (tests, benchmarks) this module is the .ts source and the worker needs tsx's loader
  // too (a worker does not take it from --import); built, both are plain .js.
  const source = import.meta.url.endsWith('.ts');
  const url = new URL(`./tracker-worker${source ? '.ts' : '.js'}`, import.meta.url);
  // A short script registers tsx in the worker, then imports the entry.
  const worker = source
    ? new Worker(
        `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(url.href)}); });`,
        { eval: true },
      )
    : new Worker(url);
  const ready = new Promise<void>((resolve, reject) => {
    const onMessage = (m: Reply) => {
      if (m.type === 'ready') resolve();
      else if (m.type === 'error') reject(new Error(`face tracker thread: ${m.message}`));
      worker.off('message', onMessage);
      worker.off('error', reject);
    };
    worker.on('message', onMessage);
    worker.once('error', reject);
  });
  ready.catch(() => worker.terminate());
  return { worker, ready, idleTimer: null };
}

function acquire(): PooledWorker {
  const w = idle.pop() ?? spawnWorker();
  if (w.idleTimer) clearTimeout(w.idleTimer);
  w.idleTimer = null;
  w.worker.ref();
  return w;
}

function release(w: PooledWorker): void {
  w.worker.unref();
  idle.push(w);
  scheduleIdleClose(w);
}

function scheduleIdleClose(w: PooledWorker): void {
  w.idleTimer = setTimeout(() => {
    w.idleTimer = null;
    const i = idle.indexOf(w);
    if (i < 0) return;
    // The kept ones stay loaded; the timer looks again later in case more become idle meanwhile.
    if (idle.length <= keepLoaded) return scheduleIdleClose(w);
    idle.splice(i, 1);
    void w.worker.terminate();
  }, IDLE_CLOSE_MS);
  w.idleTimer.unref();
}

/**
 * Loads `count` tracking threads now and keeps that many loaded while idle, so that no job pays for
 * the models (about a second of one core) or the first run of each network. Resolves once they are
 * ready; rejects when a thread cannot load its models (the next job then tries again).
 */
export async function warmTrackers(count = 1): Promise<void> {
  keepLoaded = Math.max(keepLoaded, count);
  // Loading ones wait in the pool: a job that comes meanwhile takes one and waits for it to be ready
  // (trackInWorker) instead of loading a thread of its own.
  const loading: Promise<void>[] = [];
  while (idle.length < count) {
    const w = spawnWorker();
    idle.push(w);
    scheduleIdleClose(w);
    loading.push(w.ready);
    // Loading holds the process open like any work in progress; a loaded idle thread does not. One that
    // failed to load leaves the pool (a job must not take it).
    w.ready.then(
      () => {
        if (idle.includes(w)) w.worker.unref();
      },
      () => {
        const i = idle.indexOf(w);
        if (i >= 0) idle.splice(i, 1);
        if (w.idleTimer) clearTimeout(w.idleTimer);
      },
    );
  }
  await Promise.all(loading);
}

/** Closes every idle tracking thread and keeps none loaded (tests). */
export async function closeIdleTrackers(): Promise<void> {
  keepLoaded = 0;
  const closing = idle.splice(0);
  for (const w of closing) if (w.idleTimer) clearTimeout(w.idleTimer);
  await Promise.all(closing.map((w) => w.worker.terminate()));
}

/** How long a worker stopped mid-stream gets to finish the frames it holds before it is terminated. */
const RETIRE_TIMEOUT_MS = 30_000;

/**
 * Takes back a worker whose stream stopped early (abort, error). It may be inside onnxruntime's
 * `run` for a frame already sent, and terminating a thread there aborts the whole process (the
 * addon throws from native code), so it is asked to drop the stream once the frames it holds are
 * done; it then goes back to the pool. Only a worker that does not answer in RETIRE_TIMEOUT_MS
 * (hung, not busy) is terminated.
 */
function retire(w: PooledWorker): void {
  const { worker } = w;
  const finish = (reuse: boolean) => {
    clearTimeout(timer);
    worker.off('message', onMessage);
    worker.off('exit', onExit);
    if (reuse) release(w);
  };
  const onMessage = (m: Reply) => {
    if (m.type === 'abandoned') finish(true);
  };
  const onExit = () => finish(false);
  const timer = setTimeout(() => {
    finish(false);
    void worker.terminate();
  }, RETIRE_TIMEOUT_MS);
  timer.unref();
  worker.on('message', onMessage);
  worker.once('exit', onExit);
  worker.postMessage({ type: 'abandon' });
}

/**
 * Shared frame slots: frame n goes to slot n % SLOTS. When frame n is posted, every frame up to
 * n - IN_FLIGHT has come back, so a slot is never written while the worker still reads it.
 */
const SLOTS = IN_FLIGHT + 1;

/**
 * Tracks frames on a worker thread, up to IN_FLIGHT frames ahead of the consumer. Yields each frame
 * (the caller's own buffer, untouched) with its observation, in order.
 */
export async function* trackInWorker(
  frames: AsyncIterable<Buffer>,
  width: number,
  height: number,
  opts: FaceTrackerOptions,
  stats: TrackerStats,
): AsyncGenerator<TrackedFrame> {
  const pooled = acquire();
  const { worker } = pooled;
  let healthy = false;
  const pending = new Map<
    number,
    { frame: Buffer; resolve: (v: TrackedFrame) => void; reject: (e: Error) => void }
  >();
  let statsWaiter: { resolve: (s: TrackerStats) => void; reject: (e: Error) => void } | null = null;
  let failure: Error | null = null;
  const fail = (err: Error) => {
    failure ??= err;
    for (const p of pending.values()) p.reject(err);
    pending.clear();
    statsWaiter?.reject(err);
  };
  const onMessage = (m: Reply) => {
    if (m.type === 'tracked') {
      const p = pending.get(m.seq);
      pending.delete(m.seq);
      p?.resolve({ frame: p.frame, obs: m.obs });
    } else if (m.type === 'stats') {
      statsWaiter?.resolve(m.stats);
    } else if (m.type === 'error') {
      fail(new Error(`face tracker thread: ${m.message}`));
    }
  };
  const onError = (err: Error) => fail(err);
  const onExit = (code: number) => fail(new Error(`face tracker thread exited (${code})`));
  worker.on('message', onMessage);
  worker.on('error', onError);
  worker.on('exit', onExit);

  try {
    await pooled.ready;
    const frameSize = frameBytes({ width, height, pixelFormat: opts.pixelFormat });
    const shared = new SharedArrayBuffer(frameSize * SLOTS);
    const slots = Array.from({ length: SLOTS }, (_, k) => new Uint8Array(shared, k * frameSize, frameSize));
    worker.postMessage({ type: 'start', width, height, opts, shared, slots: SLOTS });
    const queue: Promise<TrackedFrame>[] = [];
    let seq = 0;
    for await (const frame of frames) {
      if (failure) throw failure;
      const n = seq++;
      if (frame.length !== frameSize) {
        throw new RangeError(`frame ${n} has ${frame.length} bytes, expected ${frameSize}`);
      }
      const result = new Promise<TrackedFrame>((resolve, reject) => {
        pending.set(n, { frame, resolve, reject });
      });
      // Awaited in order below; a failure while it waits must not count as unhandled.
      result.catch(() => undefined);
      queue.push(result);
      slots[n % SLOTS].set(frame);
      worker.postMessage({ type: 'frame', seq: n });
      if (queue.length >= IN_FLIGHT) yield await (queue.shift() as Promise<TrackedFrame>);
    }
    // The worker may hold the last frame back for a pair that will not come.
    worker.postMessage({ type: 'flush' });
    while (queue.length > 0) yield await (queue.shift() as Promise<TrackedFrame>);
    if (failure) throw failure;
    const final = new Promise<TrackerStats>((resolve, reject) => (statsWaiter = { resolve, reject }));
    worker.postMessage({ type: 'end' });
    Object.assign(stats, await final);
    healthy = !failure;
  } finally {
    worker.off('message', onMessage);
    worker.off('error', onError);
    worker.off('exit', onExit);
    // A worker stopped mid-stream (abort, error) may still be tracking: see retire.
    if (healthy) release(pooled);
    else retire(pooled);
  }
}
