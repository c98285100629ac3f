// The mouth warp on yuv420p planes against the rgb warp it replaces for large frames (convert the
// region to rgb, warp, convert back): the same picture within a level or two, nothing written
// outside the region, identity when the target is the source, and a dark opening painted.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { meshLayout } from '../../src/engines/cpu/face-models.js';
import { facePoints, texturedPicture } from '../helpers/warp-scene.js';
import { MouthRig, buildTopology, type RigTopology } from '../../src/engines/cpu/mouth-rig.js';
import { MouthInterior, warpInPlace } from '../../src/engines/cpu/mouth-warp.js';
import { warpYuvInPlace } from '../../src/engines/cpu/mouth-warp-yuv.js';
import { clamped, rgbToYuv, yuvToRgb } from '../../src/engines/cpu/yuv.js';

const W = 320;
const H = 320;
const ALL = { x0: 0, y0: 0, x1: W, y1: H };

describe('mouth warp on yuv420p planes', () => {
  let topo: RigTopology;
  before(() => {
    const { triangulation, uv } = meshLayout();
    topo = buildTopology(triangulation, uv);
  });

  /** The picture as yuv420p, the rgb it stands for, and one deformation with its interior look. */
  function setupCase(open: number, weight: number) {
    const yuv = new Uint8Array(W * H * 1.5);
    rgbToYuv(texturedPicture(W, H), W, H, clamped(yuv), ALL);
    const rgb = new Uint8Array(W * H * 3);
    yuvToRgb(yuv, W, H, clamped(rgb), ALL);
    const points = facePoints();
    const g = new MouthRig(topo, { fps: 25 }).deform(points, { open, width: 0.2, round: 0 }, weight);
    const interior = new MouthInterior();
    interior.observe(rgb, W, H, points, g.sourceGap, g.scale);
    return { yuv, rgb, g, look: interior.look() };
  }

  function planar(c: ReturnType<typeof setupCase>): Uint8Array {
    const out = Uint8Array.from(c.yuv);
    const canvases = { source: new Uint8Array(W * H * 3), target: new Uint8Array(W * H * 3) };
    warpYuvInPlace(out, new Uint8Array(out.length), W, H, c.g, c.look, canvases);
    return out;
  }

  it('draws what the rgb warp drew, within a level or two', () => {
    const c = setupCase(0.8, 1);
    const viaRgb = Uint8Array.from(c.rgb);
    warpInPlace(viaRgb, new Uint8Array(viaRgb.length), W, H, c.g, c.look);
    const reference = Uint8Array.from(c.yuv);
    const [x0, y0, x1, y1] = c.g.bounds;
    rgbToYuv(viaRgb, W, H, clamped(reference), { x0: x0 - 3, y0: y0 - 3, x1: x1 + 3, y1: y1 + 3 });
    const out = planar(c);
    const stats = (from: number, to: number) => {
      let sum = 0;
      let changed = 0;
      let worst = 0;
      for (let i = from; i < to; i++) {
        if (reference[i] === c.yuv[i] && out[i] === c.yuv[i]) continue;
        const d = Math.abs(out[i] - reference[i]);
        changed++;
        sum += d;
        if (d > worst) worst = d;
      }
      return { mean: sum / Math.max(1, changed), worst, changed };
    };
    const luma = stats(0, W * H);
    const chroma = stats(W * H, out.length);
    assert.ok(luma.changed > 2000, `the warp changed ${luma.changed} luma samples`);
    assert.ok(luma.mean < 1.5, `luma: mean difference ${luma.mean} over the changed samples`);
    assert.ok(chroma.mean < 2.5, `chroma: mean difference ${chroma.mean} over the changed samples`);
    assert.ok(luma.worst <= 40, `luma: largest difference ${luma.worst}`);
  });

  it('writes nothing outside the region, and nothing at all when the target is the source', () => {
    const c = setupCase(0.8, 1);
    const out = planar(c);
    const [bx0, by0, bx1, by1] = c.g.bounds;
    let outside = 0;
    for (let y = 0; y < H; y++)
      for (let x = 0; x < W; x++) {
        if (x >= bx0 - 10 && x <= bx1 + 10 && y >= by0 - 10 && y <= by1 + 10) continue;
        outside++;
        assert.equal(out[y * W + x], c.yuv[y * W + x], `luma at ${x},${y}`);
      }
    assert.ok(outside > 1000);
    const still = setupCase(0.8, 0);
    assert.deepEqual(planar(still), still.yuv);
  });

  it('opens the mouth with a dark interior', () => {
    const c = setupCase(1, 1);
    assert.ok(c.g.targetGap > 15, `target gap ${c.g.targetGap}`);
    const out = planar(c);
    const cx = Math.round((c.g.dst[2 * 13] + c.g.dst[2 * 14]) / 2);
    const cy = Math.round((c.g.dst[2 * 13 + 1] + c.g.dst[2 * 14 + 1]) / 2);
    assert.ok(out[cy * W + cx] < 90, `luma in the mouth ${out[cy * W + cx]}`);
  });
});
