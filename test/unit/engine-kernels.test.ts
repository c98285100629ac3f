// The engine's tight pixel kernels give the same bytes as the plain versions they replaced (kept here
// as references): the warp visits only each row's span of a triangle and inlines its bilinear sample;
// the shrinking crop inlines its four taps. Same bytes means the landmarks and the output do not move.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { meshLayout, MESH_POINTS } from '../../src/engines/cpu/face-models.js';
import { cropRotated } from '../../src/engines/cpu/image-ops.js';
import { MouthRig, buildTopology, type WarpGeometry } from '../../src/engines/cpu/mouth-rig.js';
import { MouthInterior, renderWarp } from '../../src/engines/cpu/mouth-warp.js';
import { texturedPicture } from '../helpers/warp-scene.js';

const W = 480;
const H = 360;

/** The warp as it was: every pixel of each triangle's bounding box tested, a sample call per pixel. */
function referenceWarp(src: Uint8Array, out: Uint8Array, g: WarpGeometry): void {
  const px = new Float32Array(3);
  const sample = (x: number, y: number): void => {
    let fx = x - 0.5;
    let fy = y - 0.5;
    if (fx < 0) fx = 0;
    if (fy < 0) fy = 0;
    if (fx > W - 1.001) fx = W - 1.001;
    if (fy > H - 1.001) fy = H - 1.001;
    const x0 = fx | 0;
    const y0 = fy | 0;
    const ax = fx - x0;
    const ay = fy - y0;
    const i00 = (y0 * W + x0) * 3;
    const i01 = i00 + W * 3;
    const w = [(1 - ax) * (1 - ay), ax * (1 - ay), (1 - ax) * ay, ax * ay];
    for (let c = 0; c < 3; c++)
      px[c] = src[i00 + c] * w[0] + src[i00 + 3 + c] * w[1] + src[i01 + c] * w[2] + src[i01 + 3 + c] * w[3];
  };
  const { src: sp, dst: dp, alpha } = g;
  const tris = g.topology.triangles;
  for (let t = 0; t < tris.length; t += 3) {
    const [i0, i1, i2] = [tris[t], tris[t + 1], tris[t + 2]];
    const [ax, ay, bx, by, cx, cy] = [
      dp[2 * i0],
      dp[2 * i0 + 1],
      dp[2 * i1],
      dp[2 * i1 + 1],
      dp[2 * i2],
      dp[2 * i2 + 1],
    ];
    const det = (bx - ax) * (cy - ay) - (cx - ax) * (by - ay);
    if (Math.abs(det) < 0.25) continue;
    const x0 = Math.max(0, Math.floor(Math.min(ax, bx, cx)));
    const x1 = Math.min(W - 1, Math.ceil(Math.max(ax, bx, cx)));
    const y0 = Math.max(0, Math.floor(Math.min(ay, by, cy)));
    const y1 = Math.min(H - 1, Math.ceil(Math.max(ay, by, cy)));
    if (x0 > x1 || y0 > y1) continue;
    const a1 = (cy - ay) / det;
    const b1 = -(cx - ax) / det;
    const c1 = -(a1 * ax + b1 * ay);
    const a2 = -(by - ay) / det;
    const b2 = (bx - ax) / det;
    const c2 = -(a2 * ax + b2 * ay);
    if (alpha[i0] === 0 && alpha[i1] === 0 && alpha[i2] === 0) continue;
    for (let y = y0; y <= y1; y++) {
      for (let x = x0; x <= x1; x++) {
        const l1 = a1 * (x + 0.5) + b1 * (y + 0.5) + c1;
        const l2 = a2 * (x + 0.5) + b2 * (y + 0.5) + c2;
        const l0 = 1 - l1 - l2;
        if (l0 < -1e-4 || l1 < -1e-4 || l2 < -1e-4) continue;
        const a = l0 * alpha[i0] + l1 * alpha[i1] + l2 * alpha[i2];
        if (a <= 0.002) continue;
        sample(
          l0 * sp[2 * i0] + l1 * sp[2 * i1] + l2 * sp[2 * i2],
          l0 * sp[2 * i0 + 1] + l1 * sp[2 * i1 + 1] + l2 * sp[2 * i2 + 1],
        );
        const o = (y * W + x) * 3;
        for (let c = 0; c < 3; c++)
          out[o + c] = Math.min(255, Math.max(0, src[o + c] + a * (px[c] - src[o + c]) + 0.5));
      }
    }
  }
}

describe('engine pixel kernels', () => {
  it('the warp gives the bytes of the plain per-pixel version, over faces of several sizes and rolls', () => {
    const { triangulation, uv } = meshLayout();
    const topo = buildTopology(triangulation, uv);
    const src = texturedPicture(W, H);
    let changed = 0;
    for (let k = 0; k < 12; k++) {
      const rig = new MouthRig(topo, { fps: 25 });
      const roll = (k - 6) * 0.06;
      const size = 150 + k * 17;
      const p = new Float32Array(MESH_POINTS * 2);
      for (let i = 0; i < MESH_POINTS; i++) {
        const u = (uv[i][0] - 0.5) * size;
        const v = (uv[i][1] - 0.5) * size;
        p[2 * i] = 240 + k * 0.37 + u * Math.cos(roll) - v * Math.sin(roll);
        p[2 * i + 1] = 170 + u * Math.sin(roll) + v * Math.cos(roll);
      }
      // A closed target paints no opening, so the whole difference is the warp's.
      const g = rig.deform(p, { open: 0, width: (k % 3) - 1, round: (k % 4) / 4 }, 1);
      g.targetGap = 0;
      const fast = Buffer.from(src);
      const plain = Buffer.from(src);
      const interior = new MouthInterior();
      renderWarp(src, fast, W, H, g, interior.look());
      referenceWarp(src, plain, g);
      for (let i = 0; i < src.length; i++) if (plain[i] !== src[i]) changed++;
      assert.ok(fast.equals(plain), `face ${k}: the warp differs from the reference`);
    }
    assert.ok(changed > 1000, `the warp barely moved anything (${changed} bytes)`);
  });

  it('the shrinking crop gives the values of its four-tap reference', () => {
    const src = texturedPicture(W, H);
    const img = { data: src, width: W, height: H };
    for (const [cx, cy, size, angle] of [
      [240, 180, 300, 0.1],
      [100, 90, 420, -0.4],
      [-20, 300, 500, 1.2],
    ]) {
      const out = 64;
      let inexact = 0;
      const got = cropRotated(img, cx, cy, size, angle, out);
      const cos = Math.cos(angle);
      const sin = Math.sin(angle);
      const step = size / out;
      const [ax, ay, bx, by] = [cos * step, sin * step, -sin * step, cos * step];
      const ox = cx - (size / 2) * (cos - sin) + (ax + bx) / 2 - 0.5;
      const oy = cy - (size / 2) * (sin + cos) + (ay + by) / 2 - 0.5;
      const taps = [
        [0.25 * (ax + bx), 0.25 * (ay + by)],
        [-0.25 * (ax + bx), -0.25 * (ay + by)],
        [0.25 * (ax - bx), 0.25 * (ay - by)],
        [-0.25 * (ax - bx), -0.25 * (ay - by)],
      ];
      for (let v = 0; v < out; v++) {
        for (let u = 0; u < out; u++) {
          const x = ox + v * bx + u * ax;
          const y = oy + v * by + u * ay;
          const sum = [0, 0, 0];
          for (const [dx, dy] of taps) {
            const xi = Math.floor(x + dx + 0.5);
            const yi = Math.floor(y + dy + 0.5);
            if (xi < 0 || yi < 0 || xi >= W || yi >= H) continue;
            for (let c = 0; c < 3; c++) sum[c] += src[(yi * W + xi) * 3 + c];
          }
          for (let c = 0; c < 3; c++) {
            const o = (v * out + u) * 3 + c;
            // The kernel walks positions incrementally, the reference multiplies: a tap may round to
            // the neighbouring pixel now and then, nothing more.
            const d = Math.abs(got[o] - (sum[c] / 4) * (1 / 255));
            if (d > 1e-6) inexact++;
            assert.ok(d <= 256 / 255 / 4 + 1e-6, `crop ${u},${v}`);
          }
        }
      }
      assert.ok(inexact < out * out * 3 * 0.01, `${inexact} values differ from the reference`);
    }
  });
});
