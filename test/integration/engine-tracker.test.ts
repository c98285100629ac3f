// test-database: none
// Face tracking with interpolated landmarks on a real clip: FaceMesh is spared on some frames of a
// face that holds still (face_1 is the stillest fixture), every frame still gets an observation (an
// odd number of frames, so the last one is held back for a pair that never comes), the interpolated
// frames are the midpoint of their neighbours and stay close to what FaceMesh measures on them, and
// the tracking thread gives the same landmarks as tracking on the calling thread.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { faceModels } from '../../src/engines/cpu/face-models.js';
import type { FaceObservation } from '../../src/engines/cpu/face-tracker.js';
import { interocular, LIPS } from '../../src/engines/cpu/landmarks.js';
import {
  trackInProcess,
  trackInWorker,
  type TrackerStats,
  type TrackedFrame,
} from '../../src/engines/cpu/tracker-thread.js';
import { decodeFrames } from '../../src/media/frames.js';
import { fixture } from '../helpers/paths.js';

const VIDEO = fixture('media/face_1.mp4');
const SIZE = 350; // face_1 is 700x700; half size keeps the test short
const FRAMES = 61;
const LIP_POINTS = [...new Set(Object.values(LIPS).flat())];

type Run = { obs: (FaceObservation | null)[]; stats: TrackerStats };

async function run(where: 'thread' | 'process', interpolate: boolean): Promise<Run> {
  const frames = decodeFrames({ inputArgs: ['-i', VIDEO], width: SIZE, height: SIZE, maxFrames: FRAMES });
  const stats: TrackerStats = { detections: 0, multiFaceFrames: 0, lost: 0, interpolated: 0 };
  const opts = { fps: 25, smooth: false, interpolate };
  const tracked: AsyncIterable<TrackedFrame> =
    where === 'thread'
      ? trackInWorker(frames, SIZE, SIZE, opts, stats)
      : trackInProcess(await faceModels(), frames, SIZE, SIZE, opts, stats);
  const obs: (FaceObservation | null)[] = [];
  for await (const t of tracked) {
    assert.equal(t.frame.length, SIZE * SIZE * 3);
    obs.push(t.obs);
  }
  return { obs, stats };
}

function isMidpoint(o: FaceObservation, prev: FaceObservation, next: FaceObservation): boolean {
  for (let i = 0; i < o.raw.length; i++) {
    if (Math.abs(o.raw[i] - (prev.raw[i] + next.raw[i]) / 2) > 1e-3) return false;
  }
  return true;
}

describe('face tracking with interpolated landmarks', { timeout: 240_000 }, () => {
  it('spares FaceMesh on still frames, answers every frame, and stays close to FaceMesh', async () => {
    const [reference, threaded, inProcess] = [
      await run('thread', false),
      await run('thread', true),
      await run('process', true),
    ];
    for (const r of [reference, threaded, inProcess]) {
      assert.equal(r.obs.length, FRAMES);
      assert.ok(
        r.obs.every((o, t) => o !== null && o.frame === t),
        'a face in every frame, in order',
      );
    }
    assert.equal(reference.stats.interpolated, 0);
    assert.ok(threaded.stats.interpolated > 0, 'face_1 holds still often enough to interpolate');
    assert.ok(threaded.stats.interpolated <= FRAMES / 2);

    // The thread and the calling thread track alike.
    assert.equal(inProcess.stats.interpolated, threaded.stats.interpolated);
    for (let t = 0; t < FRAMES; t++) {
      const a = threaded.obs[t]!;
      const b = inProcess.obs[t]!;
      for (let i = 0; i < a.raw.length; i++) assert.ok(Math.abs(a.raw[i] - b.raw[i]) < 1e-3, `frame ${t}`);
    }

    // Interpolated frames: the midpoint of their neighbours, near FaceMesh's own landmarks.
    let interpolated = 0;
    let errorSum = 0;
    for (let t = 1; t + 1 < FRAMES; t++) {
      const o = threaded.obs[t]!;
      if (!isMidpoint(o, threaded.obs[t - 1]!, threaded.obs[t + 1]!)) continue;
      interpolated++;
      const ref = reference.obs[t]!;
      const scale = interocular(ref.raw);
      for (const i of LIP_POINTS) {
        errorSum += Math.hypot(o.raw[2 * i] - ref.raw[2 * i], o.raw[2 * i + 1] - ref.raw[2 * i + 1]) / scale;
      }
    }
    assert.equal(interpolated, threaded.stats.interpolated);
    const meanError = errorSum / (interpolated * LIP_POINTS.length);
    // FaceMesh itself differs by about 0.005 eye distances between two crops of one frame.
    assert.ok(
      meanError < 0.02,
      `mean lip error of interpolated frames ${meanError.toFixed(4)} eye distances`,
    );
  });
});
