// test-database: none
// yuv420p <-> rgb24 conversion of rectangles (src/engines/cpu/yuv.ts): only the rectangle (widened to
// even corners) is touched, a round trip changes a pixel by at most a level or two, and known colours
// convert to their BT.601 limited-range values.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cropRotatedYuvBilinear, cropRotatedYuvLarge } from '../../src/engines/cpu/crop-yuv.js';
import { cropRotated } from '../../src/engines/cpu/image-ops.js';
import { clamped, evenRect, rgbToYuv, yuvFrameBytes, yuvToRgb } from '../../src/engines/cpu/yuv.js';

const W = 8;
const H = 6;

function yuvFrame(fill: (x: number, y: number) => [number, number, number]): Uint8Array {
  const f = new Uint8Array(yuvFrameBytes(W, H));
  const u0 = W * H;
  const v0 = u0 + (W / 2) * (H / 2);
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      const [Y, U, V] = fill(x, y);
      f[y * W + x] = Y;
      f[u0 + (y >> 1) * (W / 2) + (x >> 1)] = U;
      f[v0 + (y >> 1) * (W / 2) + (x >> 1)] = V;
    }
  }
  return f;
}

describe('yuv420p rectangles', () => {
  it('sizes a frame and widens rectangles to even corners inside the frame', () => {
    assert.equal(yuvFrameBytes(W, H), 72);
    assert.deepEqual(evenRect({ x0: 1.5, y0: -3, x1: 4.2, y1: 3 }, W, H), { x0: 0, y0: 0, x1: 6, y1: 4 });
    assert.deepEqual(evenRect({ x0: 6, y0: 4, x1: 20, y1: 20 }, W, H), { x0: 6, y0: 4, x1: 8, y1: 6 });
    assert.equal(evenRect({ x0: 9, y0: 0, x1: 12, y1: 2 }, W, H), null);
  });

  it('converts black, white and grey to their limited-range values and back', () => {
    for (const [Y, rgb] of [
      [16, 0],
      [235, 255],
      [126, 128],
    ] as const) {
      const f = yuvFrame(() => [Y, 128, 128]);
      const canvas = new Uint8Array(W * H * 3);
      yuvToRgb(f, W, H, clamped(canvas), { x0: 0, y0: 0, x1: W, y1: H });
      assert.ok(
        canvas.every((c) => Math.abs(c - rgb) <= 1),
        `Y ${Y}: ${canvas.slice(0, 3).join(',')}`,
      );
      const back = new Uint8Array(f.length);
      rgbToYuv(canvas, W, H, clamped(back), { x0: 0, y0: 0, x1: W, y1: H });
      assert.ok(back.every((b, i) => Math.abs(b - f[i]) <= 1));
    }
  });

  it('round-trips colours within two levels and leaves everything outside the rectangle alone', () => {
    const f = yuvFrame((x, y) => [40 + 20 * x, 90 + 10 * y, 160 - 12 * x]);
    const canvas = new Uint8Array(W * H * 3).fill(7);
    const rect = { x0: 2, y0: 2, x1: 6, y1: 4 };
    yuvToRgb(f, W, H, clamped(canvas), rect);
    // Outside the rectangle the canvas is as it was.
    for (let y = 0; y < H; y++) {
      for (let x = 0; x < W; x++) {
        const inside = x >= 2 && x < 6 && y >= 2 && y < 4;
        if (!inside) assert.deepEqual([...canvas.subarray((y * W + x) * 3, (y * W + x) * 3 + 3)], [7, 7, 7]);
      }
    }
    const back = Uint8Array.from(f);
    // Scribble outside the rectangle of the canvas: it must not reach the frame.
    canvas.fill(255, 0, 2 * W * 3);
    rgbToYuv(canvas, W, H, clamped(back), rect);
    let worst = 0;
    for (let i = 0; i < f.length; i++) worst = Math.max(worst, Math.abs(back[i] - f[i]));
    assert.ok(worst <= 2, `round trip moved a sample by ${worst}`);
    // Rows 0-1 (outside) are unchanged exactly.
    for (let i = 0; i < 2 * W; i++) assert.equal(back[i], f[i]);
  });
});

describe('cropRotatedYuvLarge and cropRotatedYuvBilinear', () => {
  it('reads a yuv420p frame as cropRotated reads its rgb24 conversion, within a level', () => {
    const w = 64;
    const h = 48;
    const f = new Uint8Array(yuvFrameBytes(w, h));
    let seed = 7;
    const next = () => (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24;
    // Colours inside the gamut (chroma within 40 of neutral): the taps' colours do not saturate, so
    // averaging them in yuv or in rgb gives the same up to rounding.
    for (let i = 0; i < w * h; i++) f[i] = 60 + (next() % 120);
    for (let i = w * h; i < f.length; i++) f[i] = 108 + (next() % 40);
    const canvas = new Uint8Array(w * h * 3);
    yuvToRgb(f, w, h, clamped(canvas), { x0: 0, y0: 0, x1: w, y1: h });
    // Crops larger than twice the output (four nearest pixels per sample) and from 1.2x to 2x
    // (bilinear), one of each partly outside the frame (its outside samples are black).
    for (const [cx, cy, size, angle] of [
      [32, 24, 40, 0.3],
      [10, 40, 50, -0.7],
      [30, 22, 15, 0.2],
      [20, 30, 19, -0.4],
      [6, 40, 24, 0.9],
    ]) {
      const want = cropRotated({ data: canvas, width: w, height: h }, cx, cy, size, angle, 12);
      const crop = size > 24 ? cropRotatedYuvLarge : cropRotatedYuvBilinear;
      const got = crop(f, w, h, cx, cy, size, angle, 12, new Float32Array(12 * 12 * 3));
      let black = 0;
      for (let i = 0; i < want.length; i++) {
        assert.ok(
          Math.abs(want[i] - got[i]) <= 1.5 / 255,
          `sample ${i}: ${want[i] * 255} vs ${got[i] * 255}`,
        );
        if (want[i] === 0) black++;
      }
      if (cx < 12) assert.ok(black > 0, 'the crop reaching outside the frame has black samples');
    }
  });
});

describe('CpuEngine.pixelFormatFor', () => {
  it('takes yuv420p from 1280x720 up, rgb24 below, and the setting when given', async () => {
    const { CpuEngine } = await import('../../src/engines/cpu/index.js');
    const e = new CpuEngine();
    assert.equal(e.pixelFormatFor(1280, 720, {}), 'yuv420p');
    assert.equal(e.pixelFormatFor(1080, 1920, {}), 'yuv420p');
    assert.equal(e.pixelFormatFor(720, 720, {}), 'rgb24');
    assert.equal(e.pixelFormatFor(590, 590, { pixelFormat: 'yuv420p' }), 'yuv420p');
    assert.equal(e.pixelFormatFor(1920, 1080, { pixelFormat: 'rgb24' }), 'rgb24');
    assert.equal(e.pixelFormatFor(1920, 1080, { pixelFormat: 'bgr0' }), 'yuv420p');
  });
});
