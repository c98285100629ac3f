// The CPU engine's mouth rig and warp on synthetic images: a textured picture with a face's landmarks
// laid out from the mesh's canonical layout. Identity when the target is the source; nothing outside
// the warped region changes; the mouth opens where it should; the region's edge is feathered.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { meshLayout, MESH_POINTS } from '../../src/engines/cpu/face-models.js';
import { facePoints, texturedPicture } from '../helpers/warp-scene.js';
import { LIPS, mouthOpening } from '../../src/engines/cpu/landmarks.js';
import {
  MouthRig,
  buildTopology,
  FIXED,
  type RigTopology,
  type WarpGeometry,
} from '../../src/engines/cpu/mouth-rig.js';
import { MouthInterior, renderWarp, warpInPlace } from '../../src/engines/cpu/mouth-warp.js';

const W = 320;
const H = 320;

function diffCount(a: Buffer, b: Buffer): number {
  let n = 0;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) n++;
  return n;
}

describe('mouth rig and warp', () => {
  let topo: RigTopology;
  before(() => {
    const { triangulation, uv } = meshLayout();
    topo = buildTopology(triangulation, uv);
  });

  function deform(open: number, weight = 1): { g: WarpGeometry; out: Buffer; src: Buffer } {
    const rig = new MouthRig(topo, { fps: 25 });
    const points = facePoints();
    const g = rig.deform(points, { open, width: 0, round: 0 }, weight);
    const src = texturedPicture(W, H);
    const out = Buffer.from(src);
    const interior = new MouthInterior();
    interior.observe(src, W, H, points, g.sourceGap, g.scale);
    renderWarp(src, out, W, H, g, interior.look());
    return { g, out, src };
  }

  it('builds a closed region: lips driven, border fixed, a ring under the jaw', () => {
    for (const v of [...LIPS.upperInner, ...LIPS.lowerOuter]) assert.notEqual(topo.role[v], FIXED);
    assert.ok(topo.ring.length >= 10);
    assert.ok(topo.triangles.length / 3 > 100);
    assert.equal(topo.cavity.length / 3, 2 * (LIPS.upperInner.length - 1) + 2);
  });

  it('leaves the picture unchanged when the target is the source (weight 0)', () => {
    const { g, out, src } = deform(0.8, 0);
    assert.deepEqual(g.dst, g.src);
    assert.equal(diffCount(out, src), 0);
  });

  it('leaves the picture unchanged when the target matches the source mouth (closed on closed)', () => {
    const { g, out, src } = deform(0);
    // Closed target on a nearly closed source: sub-pixel motion only, so the picture hardly changes.
    assert.ok(g.sourceGap < 1.5 && g.targetGap === 0);
    let sum = 0;
    for (let i = 0; i < out.length; i++) sum += Math.abs(out[i] - src[i]);
    const [x0, y0, x1, y1] = g.bounds;
    const mean = sum / ((x1 - x0) * (y1 - y0) * 3);
    assert.ok(mean < 2, `mean difference over the region ${mean}`);
  });

  it('changes no pixel outside the warped region', () => {
    const { g, out, src } = deform(1);
    const [x0, y0, x1, y1] = g.bounds;
    let changed = 0;
    for (let y = 0; y < H; y++) {
      for (let x = 0; x < W; x++) {
        const i = (y * W + x) * 3;
        if (out[i] === src[i] && out[i + 1] === src[i + 1] && out[i + 2] === src[i + 2]) continue;
        changed++;
        assert.ok(
          x >= Math.floor(x0) - 1 &&
            x <= Math.ceil(x1) + 1 &&
            y >= Math.floor(y0) - 1 &&
            y <= Math.ceil(y1) + 1,
          `pixel ${x},${y} changed`,
        );
      }
    }
    assert.ok(changed > 500, `only ${changed} pixels changed`);
    // The region is the lower face: nothing above the nose base changes.
    const noseBase = facePoints()[2 * 2 + 1];
    for (let y = 0; y < Math.floor(noseBase) - 6; y++) {
      for (let x = 0; x < W; x++) {
        const i = (y * W + x) * 3;
        assert.ok(
          out[i] === src[i] && out[i + 1] === src[i + 1] && out[i + 2] === src[i + 2],
          `pixel ${x},${y} above the nose changed`,
        );
      }
    }
  });

  it('feathers the edge: pixels next to the fixed border barely change', () => {
    const { g, out, src } = deform(1);
    let sum = 0;
    let n = 0;
    for (const v of topo.vertices) {
      if (topo.role[v] !== FIXED || v >= MESH_POINTS) continue;
      const x = Math.round(g.src[2 * v]);
      const y = Math.round(g.src[2 * v + 1]);
      if (x < 0 || y < 0 || x >= W || y >= H) continue;
      const i = (y * W + x) * 3;
      sum +=
        Math.abs(out[i] - src[i]) + Math.abs(out[i + 1] - src[i + 1]) + Math.abs(out[i + 2] - src[i + 2]);
      n += 3;
    }
    assert.ok(n > 0);
    assert.ok(sum / n < 6, `mean difference on the border ${sum / n}`);
  });

  it('opens the mouth to the target gap and paints a dark interior', () => {
    const points = facePoints();
    const closedGap = mouthOpening(points);
    const { g, out } = deform(1);
    assert.ok(g.targetGap > 15, `target gap ${g.targetGap}`);
    // The warped landmarks open: the inner lips move apart.
    const moved = Float32Array.from(g.dst.subarray(0, MESH_POINTS * 2));
    assert.ok(mouthOpening(moved) > closedGap + 0.2, `${mouthOpening(moved)} vs ${closedGap}`);
    // The middle of the opening is darker than the picture around it on average.
    const cx = Math.round((g.dst[2 * 13] + g.dst[2 * 14]) / 2);
    const cy = Math.round((g.dst[2 * 13 + 1] + g.dst[2 * 14 + 1]) / 2);
    const i = (cy * W + cx) * 3;
    const luma = 0.299 * out[i] + 0.587 * out[i + 1] + 0.114 * out[i + 2];
    assert.ok(luma < 90, `luma in the mouth ${luma}`);
  });

  it('warps in place exactly as into a copy', () => {
    const { out } = deform(0.7);
    const points = facePoints();
    const g = new MouthRig(topo, { fps: 25 }).deform(points, { open: 0.7, width: 0, round: 0 }, 1);
    const frame = texturedPicture(W, H);
    const interior = new MouthInterior();
    interior.observe(frame, W, H, points, g.sourceGap, g.scale);
    warpInPlace(frame, new Uint8Array(frame.length), W, H, g, interior.look());
    assert.equal(diffCount(frame, out), 0);
  });

  it('is stable: the same input gives the same output', () => {
    const a = deform(0.6).out;
    const b = deform(0.6).out;
    assert.equal(diffCount(a, b), 0);
  });

  it('widens the region with pads', () => {
    const points = facePoints();
    const plain = new MouthRig(topo, { fps: 25 }).deform(points, { open: 1, width: 0, round: 0 }, 1);
    const padded = new MouthRig(topo, { fps: 25, pads: [0, 30, 20, 20] }).deform(
      points,
      { open: 1, width: 0, round: 0 },
      1,
    );
    assert.ok(padded.bounds[3] > plain.bounds[3] + 20, `${padded.bounds[3]} vs ${plain.bounds[3]}`);
    assert.ok(padded.bounds[0] < plain.bounds[0] - 5 || padded.bounds[2] > plain.bounds[2] + 5);
  });
});
