// The worker thread of tracker-thread.ts: loads the face models once, then tracks the frames of one
// job after another (read in place from the job's shared frame slots), answering each with its
// observation. Messages are handled strictly in
// order (tracking depends on the previous frame).
import { parentPort } from 'node:worker_threads';
import { frameBytes } from '../../media/frames.js';
import { faceModels, MESH_INPUT, type FaceModels } from './face-models.js';
import { FaceTracker, type FaceObservation, type FaceTrackerOptions } from './face-tracker.js';

type Request =
  | {
      type: 'start';
      width: number;
      height: number;
      opts: FaceTrackerOptions;
      shared: SharedArrayBuffer;
      slots: number;
    }
  | { type: 'frame'; seq: number }
  /** No frame follows: a frame held back for a pair is tracked alone. */
  | { type: 'flush' }
  | { type: 'end' }
  /** The stream stopped early: drop it (every frame before this message has been answered). */
  | { type: 'abandon' };

const port = parentPort;
if (!port) throw new Error('tracker-worker runs as a worker thread');

let models: FaceModels | null = null;
let tracker: FaceTracker | null = null;
let slots: Uint8Array[] = [];
/**
 * A frame held back until the next one arrives, so that the two are tracked as a pair (FaceMesh may
 * then run on the second only). The caller keeps its slot untouched until it is answered: it sends
 * the next frame before it waits for this one.
 */
let held: number | null = null;
let chain: Promise<void> = Promise.resolve();

async function handle(m: Request): Promise<void> {
  if (m.type === 'start') {
    tracker = new FaceTracker(models as FaceModels, m.width, m.height, m.opts);
    const size = frameBytes({ width: m.width, height: m.height, pixelFormat: m.opts.pixelFormat });
    const { shared } = m;
    slots = Array.from({ length: m.slots }, (_, k) => new Uint8Array(shared, k * size, size));
  } else if (m.type === 'frame') {
    if (!tracker) throw new Error('frame before start');
    // A slot is the caller's again once its frame's answer is posted (tracking reads it within the
    // await; nothing keeps a reference afterwards).
    if (held !== null) {
      const first = held;
      held = null;
      const [a, b] = await tracker.trackPair(slotOf(first), slotOf(m.seq));
      answer(first, a);
      answer(m.seq, b);
    } else if (tracker.canInterpolateNext()) {
      held = m.seq;
    } else {
      answer(m.seq, await tracker.track(slotOf(m.seq)));
    }
  } else if (m.type === 'flush') {
    await flush();
  } else if (m.type === 'abandon') {
    tracker = null;
    slots = [];
    held = null;
    port?.postMessage({ type: 'abandoned' });
  } else {
    await flush();
    port?.postMessage({
      type: 'stats',
      stats: tracker?.stats ?? { detections: 0, multiFaceFrames: 0, lost: 0, interpolated: 0 },
    });
    tracker = null;
    slots = [];
    held = null;
  }
}

function slotOf(seq: number): Uint8Array {
  return slots[seq % slots.length];
}

function answer(seq: number, obs: FaceObservation | null): void {
  const transfer: ArrayBuffer[] = [];
  if (obs) transfer.push(obs.points.buffer as ArrayBuffer, obs.raw.buffer as ArrayBuffer);
  port?.postMessage({ type: 'tracked', seq, obs }, transfer);
}

async function flush(): Promise<void> {
  if (held === null || !tracker) return;
  const seq = held;
  held = null;
  answer(seq, await tracker.track(slotOf(seq)));
}

async function load(): Promise<FaceModels> {
  const m = await faceModels();
  // The networks' first runs (allocations, kernel choices) here, not in a job's first frames.
  await new FaceTracker(m, 64, 64, { fps: 25 }).track(new Uint8Array(64 * 64 * 3));
  await m.landmarks(new Float32Array(MESH_INPUT * MESH_INPUT * 3));
  return m;
}

load().then(
  (m) => {
    models = m;
    port.on('message', (m: Request) => {
      chain = chain.then(
        () => handle(m),
        () => undefined,
      );
      chain.catch((err: unknown) => {
        port.postMessage({ type: 'error', message: err instanceof Error ? err.message : String(err) });
      });
    });
    port.postMessage({ type: 'ready' });
  },
  (err: unknown) =>
    port.postMessage({ type: 'error', message: err instanceof Error ? err.message : String(err) }),
);
