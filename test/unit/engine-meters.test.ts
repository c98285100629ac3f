// The realism meters (src/engines/cpu/meters.ts) on synthetic frames whose answer is known: a
// hard-edged pasted patch shows a seam and a feathered one much less; a flickering mouth region shows
// jitter while a face that only moves does not; a black open mouth is a dark hole, one with a white
// band of teeth (or a red tongue) is not.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { meshLayout } from '../../src/engines/cpu/face-models.js';
import { INNER_LIP_POLYGON, LIPS, OUTER_LIP_POLYGON } from '../../src/engines/cpu/landmarks.js';
import {
  MeterStream,
  cropFrame,
  isDarkHole,
  lumaAt,
  rgbAt,
  mouthInside,
  mouthResidual,
  regionOutlineLoop,
  sampleRing,
  seamFrame,
  type FrameView,
} from '../../src/engines/cpu/meters.js';
import { FIXED, MouthRig, buildTopology, type RigTopology } from '../../src/engines/cpu/mouth-rig.js';
import { clamped, rgbToYuv } from '../../src/engines/cpu/yuv.js';
import { facePoints, texturedPicture } from '../helpers/warp-scene.js';

const W = 320;
const H = 320;
const rgb = (data: Uint8Array): FrameView => ({ data, width: W, height: H, format: 'rgb24' });

/** Skin with gentle shading and fine noise, like a cheek. */
function skin(seed = 1): Buffer {
  const img = Buffer.alloc(W * H * 3);
  let s = seed;
  for (let y = 0; y < H; y++) {
    for (let x = 0; x < W; x++) {
      s = (s * 1103515245 + 12345) & 0x7fffffff;
      const n = ((s >> 8) % 9) - 4;
      const i = (y * W + x) * 3;
      img[i] = 190 + n + 10 * Math.sin(x / 40);
      img[i + 1] = 140 + n + 8 * Math.cos(y / 50);
      img[i + 2] = 120 + n;
    }
  }
  return img;
}

function inside(poly: number[], x: number, y: number): boolean {
  let c = false;
  for (let i = 0, j = poly.length / 2 - 1; i < poly.length / 2; j = i++) {
    const [xi, yi, xj, yj] = [poly[2 * i], poly[2 * i + 1], poly[2 * j], poly[2 * j + 1]];
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) c = !c;
  }
  return c;
}

function polygon(points: ArrayLike<number>, ids: readonly number[]): number[] {
  return ids.flatMap((v) => [points[2 * v], points[2 * v + 1]]);
}

describe('realism meters', () => {
  let topo: RigTopology;
  before(() => {
    const { triangulation, uv } = meshLayout();
    topo = buildTopology(triangulation, uv);
  });

  it('finds the outline of the re-drawn region: its fixed border, around the mouth', () => {
    const loop = regionOutlineLoop(topo);
    assert.ok(loop.length > 20, `outline of ${loop.length} vertices`);
    assert.equal(new Set(loop).size, loop.length);
    // The virtual ring under the chin is its lower part; no lip point is on it (the mouth's own hole
    // is the other, shorter loop).
    for (const r of topo.ring) assert.ok(loop.includes(r), `ring vertex ${r}`);
    for (const v of Object.values(LIPS).flat()) assert.ok(!loop.includes(v), `lip point ${v}`);
    for (const v of loop) assert.equal(topo.role[v], FIXED, `outline vertex ${v} is fixed (blend weight 0)`);
  });

  describe('seam', () => {
    // A circle of radius 60 about the picture's centre, and a patch inside it 40 levels brighter.
    const R = 60;
    const circle = Array.from({ length: 90 }, (_, k) => [
      160 + R * Math.cos((2 * Math.PI * k) / 90),
      160 + R * Math.sin((2 * Math.PI * k) / 90),
    ]).flat();
    const ring = sampleRing(circle);
    /** The patch's weight at distance d from the centre: 1 inside, falling to 0 over `feather` pixels at the edge. */
    function pasted(feather: number): Buffer {
      const img = skin();
      for (let y = 0; y < H; y++) {
        for (let x = 0; x < W; x++) {
          const d = Math.hypot(x + 0.5 - 160, y + 0.5 - 160);
          const a = feather > 0 ? Math.min(1, Math.max(0, (R - d) / feather)) : d < R ? 1 : 0;
          const i = (y * W + x) * 3;
          for (let c = 0; c < 3; c++) img[i + c] = Math.min(255, img[i + c] + 40 * a);
        }
      }
      return img;
    }
    const ratio = (img: Uint8Array) => {
      const s = seamFrame(rgb(img), ring, 100);
      return s.edge / s.around;
    };

    it('scores a hard-edged pasted patch well above a real-looking picture, a feathered one in between', (t) => {
      const plain = ratio(skin());
      const hard = ratio(pasted(0));
      const soft = ratio(pasted(24));
      t.diagnostic(`untouched ${plain.toFixed(2)}, hard ${hard.toFixed(2)}, feathered ${soft.toFixed(2)}`);
      assert.ok(plain > 0.7 && plain < 1.4, `untouched skin ${plain}`);
      assert.ok(hard > 3, `hard-edged patch ${hard}`);
      assert.ok(soft < hard / 2, `feathered ${soft} vs hard ${hard}`);
      assert.ok(soft > plain, `feathered ${soft} vs none ${plain}`);
    });

    it('reads yuv420p frames as the rgb ones', () => {
      const img = pasted(0);
      const yuv = new Uint8Array((W * H * 3) / 2);
      rgbToYuv(img, W, H, clamped(yuv), { x0: 0, y0: 0, x1: W, y1: H });
      const a = seamFrame(rgb(img), ring, 100);
      const b = seamFrame({ data: yuv, width: W, height: H, format: 'yuv420p' }, ring, 100);
      assert.ok(Math.abs(a.edge - b.edge) < 0.15 * a.edge, `rgb ${a.edge} yuv ${b.edge}`);
    });
  });

  it('reads a crop of a frame as the frame itself (rgb24 and yuv420p)', () => {
    const img = texturedPicture(W, H);
    const yuv = new Uint8Array((W * H * 3) / 2);
    rgbToYuv(img, W, H, clamped(yuv), { x0: 0, y0: 0, x1: W, y1: H });
    for (const f of [rgb(img), { data: yuv, width: W, height: H, format: 'yuv420p' as const }]) {
      const c = cropFrame(f, 101, 57, 203, 150);
      assert.ok(c.width < W && c.height < H);
      const a = new Float32Array(3);
      const b = new Float32Array(3);
      for (const [x, y] of [
        [102.5, 58.5],
        [150.2, 100.7],
        [200, 148],
      ]) {
        rgbAt(f, x, y, a);
        rgbAt(c, x, y, b);
        assert.deepEqual(b, a, `${f.format} at ${x},${y}`);
        assert.equal(lumaAt(c, x, y), lumaAt(f, x, y));
      }
    }
  });

  describe('jitter', () => {
    const points = facePoints();
    const shifted = (img: Buffer, dx: number) => {
      const out = Buffer.alloc(img.length);
      for (let y = 0; y < H; y++)
        for (let x = 0; x < W; x++) {
          const sx = Math.min(W - 1, Math.max(0, x - dx));
          img.copy(out, (y * W + x) * 3, (y * W + sx) * 3, (y * W + sx) * 3 + 3);
        }
      return out;
    };

    it('is near zero for a still mouth and for one that moves with its landmarks', () => {
      const a = texturedPicture(W, H);
      assert.ok(mouthResidual(rgb(a), points, rgb(a), points) < 0.01);
      const moved = points.map((v, i) => (i % 2 === 0 ? v + 4 : v));
      const followed = mouthResidual(rgb(a), points, rgb(shifted(a, 4)), moved);
      const unexplained = mouthResidual(rgb(a), points, rgb(shifted(a, 4)), points);
      assert.ok(followed < 2, `motion the landmarks explain: ${followed}`);
      assert.ok(unexplained > 5 * Math.max(0.5, followed), `motion they do not: ${unexplained}`);
    });

    it('scores a flickering mouth region, frame after frame, against a steady one', () => {
      const outer = polygon(points, OUTER_LIP_POLYGON);
      const flicker = (k: number) => {
        const img = texturedPicture(W, H);
        for (let y = 0; y < H; y++)
          for (let x = 0; x < W; x++)
            if (inside(outer, x + 0.5, y + 0.5)) {
              const i = (y * W + x) * 3;
              for (let c = 0; c < 3; c++)
                img[i + c] = Math.max(0, Math.min(255, img[i + c] + (k % 2 ? 25 : -25)));
            }
        return img;
      };
      const steady = new MeterStream();
      const flickering = new MeterStream();
      const still = texturedPicture(W, H);
      for (let k = 0; k < 4; k++) {
        steady.add(rgb(still), points, null, k ? { frame: rgb(still), points } : null);
        flickering.add(rgb(flicker(k)), points, null, k ? { frame: rgb(flicker(k - 1)), points } : null);
      }
      const s = steady.summary();
      const f = flickering.summary();
      assert.equal(f.jitterPairs, 3);
      assert.ok(s.jitter !== null && s.jitter < 0.01, `steady ${s.jitter}`);
      assert.ok(f.jitter !== null && f.jitter > 5, `flickering ${f.jitter}`);
    });
  });

  describe('dark holes', () => {
    // An open mouth: the rig's target landmarks with the jaw dropped.
    const open = () =>
      new MouthRig(topo, { fps: 25 }).deform(facePoints(), { open: 1, width: 0, round: 0 }, 1).dst;

    /** Skin, pink lips, and the opening painted by `inner(x, y, top, bottom)`. */
    function face(points: Float32Array, inner: (y: number, top: number, bottom: number) => number[]): Buffer {
      const img = skin();
      const outer = polygon(points, OUTER_LIP_POLYGON);
      const hole = polygon(points, INNER_LIP_POLYGON);
      let top = Infinity;
      let bottom = -Infinity;
      for (let i = 1; i < hole.length; i += 2) {
        top = Math.min(top, hole[i]);
        bottom = Math.max(bottom, hole[i]);
      }
      for (let y = 0; y < H; y++)
        for (let x = 0; x < W; x++) {
          const i = (y * W + x) * 3;
          const c = inside(hole, x + 0.5, y + 0.5)
            ? inner(y + 0.5, top, bottom)
            : inside(outer, x + 0.5, y + 0.5)
              ? [170, 90, 95]
              : null;
          if (c) [img[i], img[i + 1], img[i + 2]] = c;
        }
      return img;
    }

    it('counts a black open mouth as a dark hole', () => {
      const points = open();
      const m = mouthInside(rgb(face(points, () => [12, 8, 10])), points);
      assert.ok(m.opening > 0.12, `opening ${m.opening}`);
      assert.ok(m.pixels > 100, `${m.pixels} pixels`);
      assert.equal(isDarkHole(m), true);
    });

    it('does not count one with a white band of teeth or a red tongue', () => {
      const points = open();
      const teeth = face(points, (y, top, bottom) =>
        y < top + 0.35 * (bottom - top) ? [235, 230, 220] : [12, 8, 10],
      );
      const tongue = face(points, (y, top, bottom) =>
        y > top + 0.6 * (bottom - top) ? [190, 80, 90] : [12, 8, 10],
      );
      assert.equal(isDarkHole(mouthInside(rgb(teeth), points)), false);
      assert.equal(isDarkHole(mouthInside(rgb(tongue), points)), false);
    });

    it('does not judge a closed mouth, and counts open frames and dark holes over a stream', () => {
      const closed = facePoints();
      assert.equal(isDarkHole(mouthInside(rgb(face(closed, () => [12, 8, 10])), closed)), null);
      const points = open();
      const stream = new MeterStream();
      stream.add(rgb(face(closed, () => [12, 8, 10])), closed, null);
      stream.add(rgb(face(points, () => [12, 8, 10])), points, null);
      stream.add(
        rgb(face(points, (y, t, b) => (y < t + 0.35 * (b - t) ? [235, 230, 220] : [12, 8, 10]))),
        points,
        null,
      );
      const s = stream.summary();
      assert.equal(s.frames, 3);
      assert.equal(s.openFrames, 2);
      assert.equal(s.darkHoleFrames, 1);
      assert.equal(s.darkHoleShare, 0.5);
    });
  });
});
