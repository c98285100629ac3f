// The worker thread of tracker-thread.ts: loads the face models once, then tracks the frames of one
// job after another (read in place from the job's shared frame slots), answering each with its
// observation. Messages are handled strictly in
// order (tracking depends on the previous frame).
import { parentPort } from 'node:worker_threads';
import { faceModels, type FaceModels } from './face-models.js';
import { FaceTracker, type FaceTrackerOptions } from './face-tracker.js';

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
  | { type: 'end' };

const port = parentPort;
if (!port) throw new Error('tracker-worker runs as a worker thread');

let models: FaceModels | null = null;
let tracker: FaceTracker | null = null;
let slots: Uint8Array[] = [];
let chain: Promise<void> = Promise.resolve();

async function handle(m: Request): Promise<void> {
  if (m.type === 'start') {
    tracker = new FaceTracker(models as FaceModels, m.width, m.height, m.opts);
    const size = m.width * m.height * 3;
    const { shared } = m;
    slots = Array.from({ length: m.slots }, (_, k) => new Uint8Array(shared, k * size, size));
  } else if (m.type === 'frame') {
    if (!tracker) throw new Error('frame before start');
    // The slot is the caller's until this frame's answer is posted (tracking reads it synchronously
    // or within this await; nothing keeps a reference afterwards).
    const obs = await tracker.track(slots[m.seq % slots.length]);
    const transfer: ArrayBuffer[] = [];
    if (obs) transfer.push(obs.points.buffer as ArrayBuffer, obs.raw.buffer as ArrayBuffer);
    port?.postMessage({ type: 'tracked', seq: m.seq, obs }, transfer);
  } else {
    port?.postMessage({
      type: 'stats',
      stats: tracker?.stats ?? { detections: 0, multiFaceFrames: 0, lost: 0 },
    });
    tracker = null;
    slots = [];
  }
}

faceModels().then(
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
