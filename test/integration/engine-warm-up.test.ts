// test-database: none
// The CPU engine's warm-up: tracking threads load their models before any job, stay loaded while
// idle, and a job takes a warm (or still loading) thread instead of starting one of its own. The
// engine registry warms one thread per job that may run at once.
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { EngineRegistry } from '../../src/engines/registry.js';
import {
  closeIdleTrackers,
  trackerPool,
  trackInWorker,
  warmTrackers,
  type TrackerStats,
} from '../../src/engines/cpu/tracker-thread.js';
import { decodeFrames } from '../../src/media/frames.js';
import { fixture } from '../helpers/paths.js';

const SIZE = 176;

/** A few real frames of a face through a tracking thread; the number of frames with a face. */
async function trackSome(): Promise<number> {
  const frames = decodeFrames({
    inputArgs: ['-i', fixture('media/face_1.mp4')],
    width: SIZE,
    height: SIZE,
    maxFrames: 5,
  });
  const stats: TrackerStats = { detections: 0, multiFaceFrames: 0, lost: 0, interpolated: 0 };
  let withFace = 0;
  for await (const t of trackInWorker(frames, SIZE, SIZE, { fps: 25 }, stats)) if (t.obs) withFace++;
  return withFace;
}

describe('engine warm-up', { timeout: 180_000 }, () => {
  afterEach(() => closeIdleTrackers());

  it('loads a tracking thread before any job, and the next job uses it', async () => {
    await closeIdleTrackers();
    const before = trackerPool().threadsStarted;
    await warmTrackers(1);
    assert.deepEqual(trackerPool(), { idle: 1, keptLoaded: 1, threadsStarted: before + 1 });

    assert.equal(await trackSome(), 5);
    // The job took the warm thread and gave it back: no thread of its own.
    assert.deepEqual(trackerPool(), { idle: 1, keptLoaded: 1, threadsStarted: before + 1 });

    await warmTrackers(1); // already warm: nothing new
    assert.equal(trackerPool().threadsStarted, before + 1);
  });

  it('a job that arrives while the thread still loads waits for that thread', async () => {
    await closeIdleTrackers();
    const before = trackerPool().threadsStarted;
    const warming = warmTrackers(1);
    assert.equal(await trackSome(), 5);
    await warming;
    assert.deepEqual(trackerPool(), { idle: 1, keptLoaded: 1, threadsStarted: before + 1 });
  });

  it('the registry warms one thread per job at once for the cpu engine, none for passthrough', async () => {
    await closeIdleTrackers();
    const before = trackerPool().threadsStarted;
    assert.deepEqual(await new EngineRegistry({}, 'passthrough').warmUp({ jobsAtOnce: 2 }), []);
    assert.equal(trackerPool().threadsStarted, before);

    assert.deepEqual(await new EngineRegistry({}, 'cpu').warmUp({ jobsAtOnce: 2 }), ['cpu']);
    assert.deepEqual(trackerPool(), { idle: 2, keptLoaded: 2, threadsStarted: before + 2 });
    await closeIdleTrackers();
    assert.deepEqual(trackerPool(), { idle: 0, keptLoaded: 0, threadsStarted: before + 2 });
  });
});
