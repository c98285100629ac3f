// The worker thread of tracker-thread.ts: loads the face models once, then tracks the frames of one
// job after another, handing each frame back with its observation. Messages are handled strictly in
// order (tracking depends on the previous frame).
import { parentPort } from 'node:worker_threads';
import { faceModels, type FaceModels } from './face-models.js';
import { FaceTracker, type FaceTrackerOptions } from './face-tracker.js';

type Request =
  | { type: 'start'; width: number; height: number; opts: FaceTrackerOptions }
  | { type: 'frame'; seq: number; data: ArrayBuffer }
  | { type: 'end' };

const port = parentPort;
if (!port) throw new Error('tracker-worker runs as a worker thread');

let models: FaceModels | null = null;
let tracker: FaceTracker | null = null;
let chain: Promise<void> = Promise.resolve();

async function handle(m: Request): Promise<void> {
  if (m.type === 'start') {
    tracker = new FaceTracker(models as FaceModels, m.width, m.height, m.opts);
  } else if (m.type === 'frame') {
    if (!tracker) throw new Error('frame before start');
    const obs = await tracker.track(new Uint8Array(m.data));
    const transfer: ArrayBuffer[] = [m.data];
    if (obs) transfer.push(obs.points.buffer as ArrayBuffer, obs.raw.buffer as ArrayBuffer);
    port?.postMessage({ type: 'tracked', seq: m.seq, data: m.data, obs }, transfer);
  } else {
    port?.postMessage({
      type: 'stats',
      stats: tracker?.stats ?? { detections: 0, multiFaceFrames: 0, lost: 0 },
    });
    tracker = null;
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
