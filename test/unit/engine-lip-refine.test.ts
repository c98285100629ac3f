// The inner-lip refinement of the CPU engine on synthetic pictures: when teeth show between the lips
// and the landmarks sit on the teeth, the inner lip points move out to the lips' red edge; when the
// landmarks already sit on the lips, nothing moves.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { meshLayout, MESH_POINTS } from '../../src/engines/cpu/face-models.js';
import { LIPS, interocular, mouthDown } from '../../src/engines/cpu/landmarks.js';
import { LipRefiner } from '../../src/engines/cpu/lip-refine.js';

const W = 320;
const H = 320;

/** A face from the canonical layout, its mouth parted by `gap` pixels (inner points moved apart). */
function face(gap: number): Float32Array {
  const { uv } = meshLayout();
  const p = new Float32Array(MESH_POINTS * 2);
  for (let i = 0; i < MESH_POINTS; i++) {
    p[2 * i] = 40 + uv[i][0] * 240;
    p[2 * i + 1] = 10 + uv[i][1] * 250;
  }
  for (const ring of [LIPS.upperOuter, LIPS.upperSemiOuter, LIPS.upperSemiInner, LIPS.upperInner])
    for (const v of ring) p[2 * v + 1] -= gap / 2;
  for (const ring of [LIPS.lowerOuter, LIPS.lowerSemiOuter, LIPS.lowerSemiInner, LIPS.lowerInner])
    for (const v of ring.slice(1, -1)) p[2 * v + 1] += gap / 2;
  return p;
}

/** Skin, red lips between the outer and the inner lip points, and white teeth `teeth` px into each lip. */
function picture(p: Float32Array, teeth: number): Buffer {
  const img = Buffer.alloc(W * H * 3);
  const y = (v: number) => p[2 * v + 1];
  const top = y(LIPS.upperOuter[4]);
  const upperInner = y(LIPS.upperInner[4]);
  const lowerInner = y(LIPS.lowerInner[5]);
  const bottom = y(LIPS.lowerOuter[5]);
  const left = p[2 * 61];
  const right = p[2 * 291];
  for (let yy = 0; yy < H; yy++) {
    for (let x = 0; x < W; x++) {
      const i = (yy * W + x) * 3;
      const cy = yy + 0.5;
      let c = [225, 180, 150];
      if (x >= left && x <= right && cy >= top && cy <= bottom) {
        c = [180, 60, 80];
        if (cy > upperInner - teeth && cy < lowerInner + teeth) c = [235, 232, 225];
      }
      img[i] = c[0];
      img[i + 1] = c[1];
      img[i + 2] = c[2];
    }
  }
  return img;
}

describe('LipRefiner', () => {
  it('moves the inner lip points off the teeth onto the lips', () => {
    const p = face(8);
    const img = picture(p, 5);
    const out = new LipRefiner().refine(img, W, H, p, mouthDown(p), interocular(p));
    for (const j of [3, 4, 5]) {
      const u = LIPS.upperInner[j];
      const l = LIPS.lowerInner[j + 1];
      const du = p[2 * u + 1] - out[2 * u + 1];
      const dl = out[2 * l + 1] - p[2 * l + 1];
      assert.ok(du > 3 && du < 7, `upper column ${j} moved ${du}`);
      assert.ok(dl > 3 && dl < 7, `lower column ${j} moved ${dl}`);
    }
    // The outer ring stays where it was.
    const o = LIPS.upperOuter[4];
    assert.ok(Math.abs(out[2 * o + 1] - p[2 * o + 1]) < 0.5);
  });

  it('leaves points that already sit on the lips alone', () => {
    const p = face(8);
    const img = picture(p, 0);
    const out = new LipRefiner().refine(img, W, H, p, mouthDown(p), interocular(p));
    let moved = 0;
    for (let i = 0; i < out.length; i++) moved = Math.max(moved, Math.abs(out[i] - p[i]));
    assert.ok(moved <= 2, `moved ${moved}`);
  });

  it('does nothing when the lips are not redder than the teeth', () => {
    const p = face(8);
    const img = picture(p, 5);
    for (let i = 0; i < img.length; i += 3) img[i + 1] = img[i];
    const out = new LipRefiner().refine(img, W, H, p, mouthDown(p), interocular(p));
    assert.deepEqual(out, p);
  });
});
