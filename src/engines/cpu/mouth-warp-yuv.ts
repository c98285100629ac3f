// The mouth warp on a yuv420p frame, plane by plane: the same piecewise-affine warp and feathered
// blend as renderWarp, on the luma plane at full size and on each chroma plane at half size (the
// warp is linear in the samples, so it needs no colour conversion). Only the opening, which is
// painted from colours learned in rgb, is painted in rgb, over the small boxes of the cavity's
// source and target, and converted back. Before this, the whole region was converted to rgb and
// back around the rgb warp: two conversions and three channels at full size per re-drawn pixel.
import { EPS, paintInterior, rowSpan, setup, type InteriorLook } from './mouth-warp.js';
import type { WarpGeometry } from './mouth-rig.js';
import { clamped, rgbToYuv, yuvToRgb, type Rect } from './yuv.js';

const span = new Int32Array(2);

/**
 * Warps one 8-bit plane of `src` into `out` (a copy of `src` at least over the region). `scale` maps
 * the geometry's frame pixels to the plane's (1 for luma, 0.5 for a chroma plane of yuv420p: a
 * chroma sample's centre is the centre of its 2x2 luma block).
 */
export function renderPlane(
  src: Uint8Array,
  out: Uint8Array,
  width: number,
  height: number,
  g: WarpGeometry,
  scale: number,
): void {
  const { src: sp, dst: dp, alpha } = g;
  const tris = g.topology.triangles;
  const maxX = width - 1.001;
  const maxY = height - 1.001;
  for (let t = 0; t < tris.length; t += 3) {
    const i0 = tris[t];
    const i1 = tris[t + 1];
    const i2 = tris[t + 2];
    const a0 = alpha[i0];
    const a1v = alpha[i1];
    const a2v = alpha[i2];
    if (a0 === 0 && a1v === 0 && a2v === 0) continue;
    const r = setup(
      dp[2 * i0] * scale,
      dp[2 * i0 + 1] * scale,
      dp[2 * i1] * scale,
      dp[2 * i1 + 1] * scale,
      dp[2 * i2] * scale,
      dp[2 * i2 + 1] * scale,
      width,
      height,
    );
    if (!r) continue;
    const s0x = sp[2 * i0] * scale;
    const s0y = sp[2 * i0 + 1] * scale;
    const s1x = sp[2 * i1] * scale;
    const s1y = sp[2 * i1 + 1] * scale;
    const s2x = sp[2 * i2] * scale;
    const s2y = sp[2 * i2 + 1] * scale;
    const { a1: ra1, b1: rb1, c1: rc1, a2: ra2, b2: rb2, c2: rc2 } = r;
    // The barycentric weights, the blend weight and the source position are affine in x: stepped
    // along each row by their x-derivatives instead of evaluated per pixel.
    const da = ra1 * (a1v - a0) + ra2 * (a2v - a0);
    const dfx = ra1 * (s1x - s0x) + ra2 * (s2x - s0x);
    const dfy = ra1 * (s1y - s0y) + ra2 * (s2y - s0y);
    for (let y = r.y0; y <= r.y1; y++) {
      const cy = y + 0.5;
      if (!rowSpan(r, cy, span)) continue;
      const xStart = span[0];
      const xEnd = span[1];
      const cx = xStart + 0.5;
      let l1 = ra1 * cx + rb1 * cy + rc1;
      let l2 = ra2 * cx + rb2 * cy + rc2;
      let a = a0 + l1 * (a1v - a0) + l2 * (a2v - a0);
      let sx = s0x + l1 * (s1x - s0x) + l2 * (s2x - s0x) - 0.5;
      let sy = s0y + l1 * (s1y - s0y) + l2 * (s2y - s0y) - 0.5;
      const row = y * width;
      for (let x = xStart; x <= xEnd; x++, l1 += ra1, l2 += ra2, a += da, sx += dfx, sy += dfy) {
        if (l1 < EPS || l2 < EPS || 1 - l1 - l2 < EPS || a <= 0.002) continue;
        const fx = sx < 0 ? 0 : sx > maxX ? maxX : sx;
        const fy = sy < 0 ? 0 : sy > maxY ? maxY : sy;
        const x0 = fx | 0;
        const y0 = fy | 0;
        const ax = fx - x0;
        const ay = fy - y0;
        const i00 = y0 * width + x0;
        const i01 = i00 + width;
        const top = src[i00] + ax * (src[i00 + 1] - src[i00]);
        const bottom = src[i01] + ax * (src[i01 + 1] - src[i01]);
        const p = top + ay * (bottom - top);
        const o = row + x;
        const v = src[o] + a * (p - src[o]) + 0.5;
        out[o] = v < 0 ? 0 : v > 255 ? 255 : v;
      }
    }
  }
}

/** The box around some of the geometry's vertices (frame pixels), widened by `margin`. */
function boxOf(points: Float32Array, vertices: Iterable<number>, margin: number): Rect {
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  for (const v of vertices) {
    const x = points[2 * v];
    const y = points[2 * v + 1];
    if (x < x0) x0 = x;
    if (x > x1) x1 = x;
    if (y < y0) y0 = y;
    if (y > y1) y1 = y;
  }
  return { x0: x0 - margin, y0: y0 - margin, x1: x1 + margin, y1: y1 + margin };
}

/** rgb24 canvases of the frame's size for the opening (valid only inside the boxes just converted). */
export interface YuvWarpCanvases {
  source: Uint8Array;
  target: Uint8Array;
}

/**
 * Warps a yuv420p `frame` in place: the region's pixels of the three planes (its bounding box plus a
 * margin) are copied to `scratch` (a buffer of the frame's size, reused from frame to frame), each
 * plane is re-drawn from there, and the opening is painted in rgb over its own small boxes.
 */
export function warpYuvInPlace(
  frame: Uint8Array,
  scratch: Uint8Array,
  width: number,
  height: number,
  g: WarpGeometry,
  interior: InteriorLook,
  canvases: YuvWarpCanvases,
): void {
  const [bx0, by0, bx1, by1] = g.bounds;
  // Even corners, so the chroma rows and columns copied cover the luma box, with a margin for the
  // taps and for the opening's boxes (even-widened by the conversions).
  const x0 = Math.max(0, (Math.floor(bx0) - 6) & ~1);
  const y0 = Math.max(0, (Math.floor(by0) - 6) & ~1);
  const x1 = Math.min(width, (Math.ceil(bx1) + 8) & ~1);
  const y1 = Math.min(height, (Math.ceil(by1) + 8) & ~1);
  if (x0 >= x1 || y0 >= y1) return;
  const lumaSize = width * height;
  const cw = width >> 1;
  const ch = height >> 1;
  const uAt = lumaSize;
  const vAt = lumaSize + cw * ch;
  for (let y = y0; y < y1; y++) {
    const a = y * width;
    scratch.set(frame.subarray(a + x0, a + x1), a + x0);
  }
  for (let y = y0 >> 1; y < y1 >> 1; y++) {
    const a = y * cw;
    scratch.set(frame.subarray(uAt + a + (x0 >> 1), uAt + a + (x1 >> 1)), uAt + a + (x0 >> 1));
    scratch.set(frame.subarray(vAt + a + (x0 >> 1), vAt + a + (x1 >> 1)), vAt + a + (x0 >> 1));
  }
  renderPlane(scratch.subarray(0, lumaSize), frame.subarray(0, lumaSize), width, height, g, 1);
  renderPlane(scratch.subarray(uAt, vAt), frame.subarray(uAt, vAt), cw, ch, g, 0.5);
  renderPlane(scratch.subarray(vAt, vAt + cw * ch), frame.subarray(vAt, vAt + cw * ch), cw, ch, g, 0.5);
  // paintInterior paints nothing on a gap this small (its own first test).
  if (g.targetGap < 0.75) return;
  const cavity = g.topology.cavity;
  const source = boxOf(g.src, cavity, 3);
  const target = boxOf(g.dst, cavity, 3);
  yuvToRgb(scratch, width, height, clamped(canvases.source), source);
  yuvToRgb(frame, width, height, clamped(canvases.target), target);
  paintInterior(canvases.source, canvases.target, width, height, g, interior);
  rgbToYuv(canvases.target, width, height, clamped(frame), target);
}
