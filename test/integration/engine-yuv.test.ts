// test-database: none
// The engine's own yuv420p -> rgb24 conversion agrees with ffmpeg's on real frames (face_2, whose
// colours span skin, hair and background): the face tracker and the warp see the same pixels as when
// ffmpeg converted the whole frame.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { clamped, yuvToRgb } from '../../src/engines/cpu/yuv.js';
import { decodeFrames, type PixelFormat } from '../../src/media/frames.js';
import { fixture } from '../helpers/paths.js';

const SIZE = 420;

async function frames(pixelFormat: PixelFormat): Promise<Buffer[]> {
  const all: Buffer[] = [];
  const spec = { inputArgs: ['-i', fixture('media/face_2.mp4')], width: SIZE, height: SIZE, maxFrames: 3 };
  for await (const f of decodeFrames({ ...spec, pixelFormat })) all.push(Buffer.from(f));
  return all;
}

describe('yuv420p frames converted by the engine', () => {
  it('match ffmpeg rgb24 conversion within a couple of levels', async () => {
    const [rgb, yuv] = [await frames('rgb24'), await frames('yuv420p')];
    assert.equal(rgb.length, 3);
    assert.equal(yuv.length, 3);
    assert.equal(yuv[0].length, SIZE * SIZE * 1.5);
    for (let k = 0; k < 3; k++) {
      const canvas = new Uint8Array(SIZE * SIZE * 3);
      yuvToRgb(yuv[k], SIZE, SIZE, clamped(canvas), { x0: 0, y0: 0, x1: SIZE, y1: SIZE });
      let sum = 0;
      let big = 0;
      for (let i = 0; i < canvas.length; i++) {
        const d = Math.abs(canvas[i] - rgb[k][i]);
        sum += d;
        if (d > 12) big++;
      }
      const mean = sum / canvas.length;
      // ffmpeg interpolates chroma between samples; this takes the nearest one, so edges differ a bit.
      assert.ok(mean < 2.5, `frame ${k}: mean difference ${mean.toFixed(2)} levels`);
      assert.ok(big / canvas.length < 0.02, `frame ${k}: ${big} samples differ by more than 12 levels`);
    }
  });
});
