// test-database: none
// BlazeFace on onnxruntime (the graph converted from the npm package's tfjs weights, with the
// detector's pre- and post-processing in blazeface.ts) against Human's detector on tfjs: the same
// boxes, scores and key points on frames of the fixture clips, at the sizes the tracker gives it,
// including a frame with two faces (the order of the faces included); nothing on a blank frame.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { faceModels, type DetectedFace } from '../../src/engines/cpu/face-models.js';
import { decodeFrames } from '../../src/media/frames.js';
import { fixture } from '../helpers/paths.js';

async function framesOf(
  inputArgs: string[],
  width: number,
  height: number,
  count: number,
): Promise<Buffer[]> {
  const frames: Buffer[] = [];
  for await (const f of decodeFrames({ inputArgs, width, height, maxFrames: count }))
    frames.push(Buffer.from(f));
  return frames;
}

function assertSameFaces(onnx: DetectedFace[], tfjs: DetectedFace[], what: string): void {
  assert.equal(onnx.length, tfjs.length, `${what}: ${onnx.length} faces on onnx, ${tfjs.length} on tfjs`);
  for (let i = 0; i < onnx.length; i++) {
    assert.deepEqual(onnx[i].box, tfjs[i].box, `${what}, face ${i}: boxes differ`);
    assert.equal(onnx[i].score, tfjs[i].score, `${what}, face ${i}: scores differ`);
    for (let k = 0; k < 6; k++) {
      for (let c = 0; c < 2; c++) {
        const d = Math.abs(onnx[i].keypoints[k][c] - tfjs[i].keypoints[k][c]);
        assert.ok(d < 0.01, `${what}, face ${i}, key point ${k}: ${d} px apart`);
      }
    }
  }
}

describe('BlazeFace on onnxruntime', () => {
  it("finds Human's faces on the fixture clips", async () => {
    const models = await faceModels();
    assert.equal(models.onnxError, null, `onnxruntime did not load: ${models.onnxError}`);
    let found = 0;
    // Square clips at their own size, and a face padded into a wide frame (the detector stretches it).
    const cases: { clip: string; width: number; height: number; filter?: string }[] = [
      { clip: 'face_1', width: 700, height: 700 },
      { clip: 'face_3', width: 590, height: 590 },
      { clip: 'face_5', width: 524, height: 524 },
      { clip: 'face_2', width: 640, height: 360, filter: 'scale=-2:360,pad=640:360:(ow-iw)/2:0' },
    ];
    for (const c of cases) {
      const input = ['-i', fixture(`media/${c.clip}.mp4`), ...(c.filter ? ['-vf', c.filter] : [])];
      const frames = await framesOf(input, c.width, c.height, 3);
      for (const [n, frame] of frames.entries()) {
        const onnx = await models.detect(frame, c.width, c.height, 'onnx');
        const tfjs = await models.detect(frame, c.width, c.height, 'tfjs');
        assertSameFaces(onnx, tfjs, `${c.clip} frame ${n}`);
        found += onnx.length;
      }
    }
    assert.ok(found >= 10, `only ${found} faces found in 12 frames`);
  });

  it('finds two faces side by side in the same order, and none on a blank frame', async () => {
    const models = await faceModels();
    const graph = '[0:v]scale=-2:360,crop=320:360[a];[1:v]scale=-2:360,crop=320:360[b];[a][b]hstack';
    const [frame] = await framesOf(
      [
        '-i',
        fixture('media/wda_speaker_a.mp4'),
        '-i',
        fixture('media/wda_speaker_b.mp4'),
        '-filter_complex',
        graph,
      ],
      640,
      360,
      1,
    );
    const onnx = await models.detect(frame, 640, 360, 'onnx');
    assert.equal(onnx.length, 2);
    assertSameFaces(onnx, await models.detect(frame, 640, 360, 'tfjs'), 'two speakers');
    const blank = new Uint8Array(640 * 360 * 3).fill(128);
    assert.deepEqual(await models.detect(blank, 640, 360, 'onnx'), []);
  });
});
