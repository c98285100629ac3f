// Pixel helpers of the CPU engine: the rotated crop that feeds FaceMesh and the detector's downscale.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { cropRotated, downscale } from '../../src/engines/cpu/image-ops.js';

function image(w: number, h: number): { data: Uint8Array; width: number; height: number } {
  const data = new Uint8Array(w * h * 3);
  for (let y = 0; y < h; y++)
    for (let x = 0; x < w; x++) data.set([x % 256, y % 256, (x * y) % 256], (y * w + x) * 3);
  return { data, width: w, height: h };
}

describe('cropRotated', () => {
  it('copies pixels exactly at scale 1 without rotation', () => {
    const img = image(64, 48);
    const out = cropRotated(img, 32, 24, 16, 0, 16);
    // Crop centred on (32, 24): its first pixel is image pixel (24, 16).
    for (let v = 0; v < 16; v++) {
      for (let u = 0; u < 16; u++) {
        const o = (v * 16 + u) * 3;
        assert.ok(Math.abs(out[o] * 255 - (24 + u)) < 1e-3);
        assert.ok(Math.abs(out[o + 1] * 255 - (16 + v)) < 1e-3);
      }
    }
  });

  it('rotates: a quarter turn maps the crop x axis onto the image y axis', () => {
    const img = image(64, 64);
    const out = cropRotated(img, 32, 32, 8, Math.PI / 2, 8);
    // Walking along the crop's x axis walks down the image: red (x) constant, green (y) rising.
    const red = (u: number) => out[(3 * 8 + u) * 3] * 255;
    const green = (u: number) => out[(3 * 8 + u) * 3 + 1] * 255;
    assert.ok(Math.abs(red(0) - red(7)) < 1e-3);
    assert.ok(Math.abs(green(7) - green(0) - 7) < 1e-3);
  });

  it('averages when shrinking, and is black outside the image', () => {
    const img = image(64, 64);
    const out = cropRotated(img, 32, 32, 32, 0, 8);
    // 4 image pixels per output pixel: values are averages of nearby columns.
    assert.ok(Math.abs(out[0] * 255 - 17.5) < 1.5, `${out[0] * 255}`);
    const outside = cropRotated(img, -100, -100, 16, 0, 4);
    assert.ok(outside.every((v) => v === 0));
  });
});

describe('downscale', () => {
  it('box-averages by an integer factor', () => {
    const img = image(8, 4);
    const small = downscale(img, 2);
    assert.equal(small.width, 4);
    assert.equal(small.height, 2);
    assert.equal(small.data[0], Math.floor((0 + 1 + 0 + 1) / 4));
    assert.equal(small.data[3], Math.floor((2 + 3 + 2 + 3) / 4));
    assert.equal(downscale(img, 1), img);
  });
});
