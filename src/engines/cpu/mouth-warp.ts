// Re-drawing the mouth: a piecewise-affine warp of the lower face over the rig's triangles (each
// output pixel takes the colour of its pre-image in the same source frame, so colours match by
// construction), blended with per-vertex weights that fall to zero at the region's border (a feathered
// mask: no visible box), and the mouth opening painted over: the source's own mouth interior where the
// source is open about as wide as the target, otherwise a synthesised one (a dark cavity shaded from
// the middle, the upper and lower teeth where the source has shown teeth), with soft edges on the lips.
// Only the region's bounding box is visited; pixels outside the warped triangles are never written.
import { CORNER_INNER, LIPS } from './landmarks.js';
import type { WarpGeometry } from './mouth-rig.js';

export type Rgb = [number, number, number];

/**
 * The inside of the source's mouth as seen when it was widest open: colours on a grid across the
 * opening (corner to corner) and down it (upper inner lip to lower inner lip).
 */
export interface InteriorTexture {
  across: number;
  down: number;
  /** across*down*3 colours, row by row from the upper lip. */
  rgb: Float32Array;
  /** The opening it was taken at, in face scales (inter-ocular distances). */
  gap: number;
}

/** What the inside of this face's mouth looks like (learned from frames where the source is open). */
export interface InteriorLook {
  dark: Rgb;
  /** Null until the source has shown its teeth. */
  teeth: Rgb | null;
  lip: Rgb;
  /** Null until the source has been seen clearly open. */
  texture: InteriorTexture | null;
}

function clamp255(v: number): number {
  return v < 0 ? 0 : v > 255 ? 255 : v;
}

/** Bilinear sample of an rgb24 image at (x, y) (pixel centres at +0.5), edge-clamped, into `out`. */
function sample(
  img: Uint8Array,
  width: number,
  height: number,
  x: number,
  y: number,
  out: Float32Array,
): void {
  let fx = x - 0.5;
  let fy = y - 0.5;
  if (fx < 0) fx = 0;
  if (fy < 0) fy = 0;
  if (fx > width - 1.001) fx = width - 1.001;
  if (fy > height - 1.001) fy = height - 1.001;
  const x0 = fx | 0;
  const y0 = fy | 0;
  const ax = fx - x0;
  const ay = fy - y0;
  const i00 = (y0 * width + x0) * 3;
  const i01 = i00 + width * 3;
  const w00 = (1 - ax) * (1 - ay);
  const w10 = ax * (1 - ay);
  const w01 = (1 - ax) * ay;
  const w11 = ax * ay;
  out[0] = img[i00] * w00 + img[i00 + 3] * w10 + img[i01] * w01 + img[i01 + 3] * w11;
  out[1] = img[i00 + 1] * w00 + img[i00 + 4] * w10 + img[i01 + 1] * w01 + img[i01 + 4] * w11;
  out[2] = img[i00 + 2] * w00 + img[i00 + 5] * w10 + img[i01 + 2] * w01 + img[i01 + 5] * w11;
}

export interface Raster {
  x0: number;
  x1: number;
  y0: number;
  y1: number;
  /** Barycentric coordinates as affine functions of (x, y): l = a*x + b*y + c. */
  a1: number;
  b1: number;
  c1: number;
  a2: number;
  b2: number;
  c2: number;
}

/** Set-up for a triangle in output pixels; null when it is degenerate or off the image. */
export function setup(
  ax: number,
  ay: number,
  bx: number,
  by: number,
  cx: number,
  cy: number,
  width: number,
  height: number,
): Raster | null {
  const det = (bx - ax) * (cy - ay) - (cx - ax) * (by - ay);
  if (Math.abs(det) < 0.25) return null;
  const x0 = Math.max(0, Math.floor(Math.min(ax, bx, cx)));
  const x1 = Math.min(width - 1, Math.ceil(Math.max(ax, bx, cx)));
  const y0 = Math.max(0, Math.floor(Math.min(ay, by, cy)));
  const y1 = Math.min(height - 1, Math.ceil(Math.max(ay, by, cy)));
  if (x0 > x1 || y0 > y1) return null;
  // l1 (weight of b) and l2 (weight of c); l0 = 1 - l1 - l2.
  const a1 = (cy - ay) / det;
  const b1 = -(cx - ax) / det;
  const c1 = -(a1 * ax + b1 * ay);
  const a2 = -(by - ay) / det;
  const b2 = (bx - ax) / det;
  const c2 = -(a2 * ax + b2 * ay);
  return { x0, x1, y0, y1, a1, b1, c1, a2, b2, c2 };
}

export const EPS = -1e-4;
const fround = Math.fround;

/** Reused by the kernels (they run to completion on one thread, so one buffer serves every call). */
const rowSpanBuffer = new Int32Array(2);
const paintPx = new Float32Array(3);
const paintPx2 = new Float32Array(3);

/**
 * The columns of row `cy` (pixel centre) where the triangle may cover pixels: solves the three
 * barycentric inequalities for x with a pixel of margin (the per-pixel test still decides), so the
 * loops skip the empty half of the triangle's bounding box. Returns false when the row is empty.
 */
export function rowSpan(r: Raster, cy: number, span: Int32Array): boolean {
  let lo = r.x0;
  let hi = r.x1;
  const k1 = r.b1 * cy + r.c1;
  const k2 = r.b2 * cy + r.c2;
  const a0 = -(r.a1 + r.a2);
  const k0 = 1 - k1 - k2;
  // l = a * cx + k >= EPS, cx = x + 0.5; nearly flat rows (|a| tiny) are left to the per-pixel test.
  for (let i = 0; i < 3; i++) {
    const a = i === 0 ? a0 : i === 1 ? r.a1 : r.a2;
    const k = i === 0 ? k0 : i === 1 ? k1 : k2;
    if (a > 1e-6) {
      const x = Math.floor((EPS - k) / a - 0.5) - 1;
      if (x > lo) lo = x;
    } else if (a < -1e-6) {
      const x = Math.ceil((EPS - k) / a - 0.5) + 1;
      if (x < hi) hi = x;
    }
  }
  span[0] = lo;
  span[1] = hi;
  return lo <= hi;
}

/**
 * Warps the region of `src` described by `g` into `out` (which must already hold a copy of `src`).
 * `interior` paints the mouth opening; `realInterior` (0..1) is how much of the source's own interior
 * to show there instead.
 */
export function renderWarp(
  src: Uint8Array,
  out: Uint8Array,
  width: number,
  height: number,
  g: WarpGeometry,
  interior: InteriorLook,
): void {
  const { src: sp, dst: dp, alpha } = g;
  const tris = g.topology.triangles;
  const span = rowSpanBuffer;
  const maxX = width - 1.001;
  const maxY = height - 1.001;
  const rowBytes = width * 3;
  for (let t = 0; t < tris.length; t += 3) {
    const i0 = tris[t];
    const i1 = tris[t + 1];
    const i2 = tris[t + 2];
    const r = setup(
      dp[2 * i0],
      dp[2 * i0 + 1],
      dp[2 * i1],
      dp[2 * i1 + 1],
      dp[2 * i2],
      dp[2 * i2 + 1],
      width,
      height,
    );
    if (!r) continue;
    const a0 = alpha[i0];
    const a1v = alpha[i1];
    const a2v = alpha[i2];
    if (a0 === 0 && a1v === 0 && a2v === 0) continue;
    const s0x = sp[2 * i0];
    const s0y = sp[2 * i0 + 1];
    const s1x = sp[2 * i1];
    const s1y = sp[2 * i1 + 1];
    const s2x = sp[2 * i2];
    const s2y = sp[2 * i2 + 1];
    const { a1: ra1, b1: rb1, c1: rc1, a2: ra2, b2: rb2, c2: rc2 } = r;
    for (let y = r.y0; y <= r.y1; y++) {
      const cy = y + 0.5;
      if (!rowSpan(r, cy, span)) continue;
      const xEnd = span[1];
      for (let x = span[0]; x <= xEnd; x++) {
        const cx = x + 0.5;
        const l1 = ra1 * cx + rb1 * cy + rc1;
        const l2 = ra2 * cx + rb2 * cy + rc2;
        const l0 = 1 - l1 - l2;
        if (l0 < EPS || l1 < EPS || l2 < EPS) continue;
        const a = l0 * a0 + l1 * a1v + l2 * a2v;
        if (a <= 0.002) continue;
        // The bilinear sample of `sample` inlined (same arithmetic and float32 rounding: the same bytes).
        let fx = l0 * s0x + l1 * s1x + l2 * s2x - 0.5;
        let fy = l0 * s0y + l1 * s1y + l2 * s2y - 0.5;
        if (fx < 0) fx = 0;
        if (fy < 0) fy = 0;
        if (fx > maxX) fx = maxX;
        if (fy > maxY) fy = maxY;
        const x0 = fx | 0;
        const y0 = fy | 0;
        const ax = fx - x0;
        const ay = fy - y0;
        const i00 = (y0 * width + x0) * 3;
        const i01 = i00 + rowBytes;
        const w00 = (1 - ax) * (1 - ay);
        const w10 = ax * (1 - ay);
        const w01 = (1 - ax) * ay;
        const w11 = ax * ay;
        const p0 = fround(src[i00] * w00 + src[i00 + 3] * w10 + src[i01] * w01 + src[i01 + 3] * w11);
        const p1 = fround(src[i00 + 1] * w00 + src[i00 + 4] * w10 + src[i01 + 1] * w01 + src[i01 + 4] * w11);
        const p2 = fround(src[i00 + 2] * w00 + src[i00 + 5] * w10 + src[i01 + 2] * w01 + src[i01 + 5] * w11);
        const o = (y * width + x) * 3;
        const v0 = src[o] + a * (p0 - src[o]) + 0.5;
        const v1 = src[o + 1] + a * (p1 - src[o + 1]) + 0.5;
        const v2 = src[o + 2] + a * (p2 - src[o + 2]) + 0.5;
        out[o] = v0 < 0 ? 0 : v0 > 255 ? 255 : v0;
        out[o + 1] = v1 < 0 ? 0 : v1 > 255 ? 255 : v1;
        out[o + 2] = v2 < 0 ? 0 : v2 > 255 ? 255 : v2;
      }
    }
  }
  paintInterior(src, out, width, height, g, interior);
}

/**
 * Warps `frame` in place: the region's pixels (its bounding box plus a margin) are first copied to
 * `scratch` (a buffer of the frame's size, reused from frame to frame), then re-drawn from there, so
 * no full-frame copy is made.
 */
export function warpInPlace(
  frame: Uint8Array,
  scratch: Uint8Array,
  width: number,
  height: number,
  g: WarpGeometry,
  interior: InteriorLook,
): void {
  const [bx0, by0, bx1, by1] = g.bounds;
  const x0 = Math.max(0, Math.floor(bx0) - 2);
  const y0 = Math.max(0, Math.floor(by0) - 2);
  const x1 = Math.min(width, Math.ceil(bx1) + 3);
  const y1 = Math.min(height, Math.ceil(by1) + 3);
  if (x0 >= x1 || y0 >= y1) return;
  for (let y = y0; y < y1; y++) {
    const a = (y * width + x0) * 3;
    scratch.set(frame.subarray(a, (y * width + x1) * 3), a);
  }
  renderWarp(scratch, frame, width, height, g, interior);
}

/** The mouth opening: the source's interior, a synthesised one, or a mix of both (rgb24). */
export function paintInterior(
  src: Uint8Array,
  out: Uint8Array,
  width: number,
  height: number,
  g: WarpGeometry,
  look: InteriorLook,
): void {
  const gap = g.targetGap;
  if (gap < 0.75) return;
  const { src: sp, dst: dp } = g;
  const { cavity, cavityDepth, cavityAcross } = g.topology;
  // The source's own interior is right where it is about as open as the target.
  const real = Math.min(1, Math.max(0, (g.sourceGap / gap - 0.55) / 0.35));
  const W = Math.max(1, g.mouthWidth);
  // Teeth: the upper ones hang from the upper lip, the lower ones show only when wide open.
  const upperTeeth = look.teeth ? Math.min(0.13 * W, 0.5 * gap) / gap : 0;
  const lowerTeeth = look.teeth ? Math.max(0, Math.min(0.07 * W, 0.3 * (gap - 0.13 * W))) / gap : 0;
  const soft = Math.min(0.5, 1.2 / gap);
  const teeth = look.teeth ?? look.dark;
  const tex = look.texture;
  // Target gap in texture units: > 1 when the target is wider open than the texture.
  const texRatio = tex ? gap / Math.max(1e-3, tex.gap * g.scale) : 1;
  const px = paintPx;
  const px2 = paintPx2;
  for (let t = 0; t < cavity.length; t += 3) {
    const i0 = cavity[t];
    const i1 = cavity[t + 1];
    const i2 = cavity[t + 2];
    const r = setup(
      dp[2 * i0],
      dp[2 * i0 + 1],
      dp[2 * i1],
      dp[2 * i1 + 1],
      dp[2 * i2],
      dp[2 * i2 + 1],
      width,
      height,
    );
    if (!r) continue;
    // Where the lips are pressed together the opening's triangles fold over: nothing to paint.
    const dd1 = cavityDepth[i1] - cavityDepth[i0];
    const dd2 = cavityDepth[i2] - cavityDepth[i0];
    if ((r.a1 * dd1 + r.a2 * dd2) * g.down[0] + (r.b1 * dd1 + r.b2 * dd2) * g.down[1] <= 0) continue;
    for (let y = r.y0; y <= r.y1; y++) {
      const cy = y + 0.5;
      if (!rowSpan(r, cy, rowSpanBuffer)) continue;
      const xEnd = rowSpanBuffer[1];
      for (let x = rowSpanBuffer[0]; x <= xEnd; x++) {
        const cx = x + 0.5;
        const l1 = r.a1 * cx + r.b1 * cy + r.c1;
        const l2 = r.a2 * cx + r.b2 * cy + r.c2;
        const l0 = 1 - l1 - l2;
        if (l0 < EPS || l1 < EPS || l2 < EPS) continue;
        const depth = l0 * cavityDepth[i0] + l1 * cavityDepth[i1] + l2 * cavityDepth[i2];
        const acr = l0 * cavityAcross[i0] + l1 * cavityAcross[i1] + l2 * cavityAcross[i2];
        // What the source has there (its interior, or the lip line when it is closed).
        sample(
          src,
          width,
          height,
          l0 * sp[2 * i0] + l1 * sp[2 * i1] + l2 * sp[2 * i2],
          l0 * sp[2 * i0 + 1] + l1 * sp[2 * i1 + 1] + l2 * sp[2 * i2 + 1],
          px,
        );
        // Synthesised interior: dark, darkest in the middle, teeth at top and bottom.
        const centrality = (1 - acr * acr) * (1 - Math.abs(2 * depth - 1));
        const side = 1 - 0.45 * acr * acr;
        let sr: number;
        let sg: number;
        let sb: number;
        if (tex) {
          // The source's own interior. Narrower than when it was captured: squeezed (the lips cover more
          // of the teeth). Wider: the upper half hangs from the upper lip and the lower half stands on the
          // lower lip, both at their real size, and the middle (the dark back of the mouth) grows.
          const fromTop = depth * texRatio;
          const fromBottom = (1 - depth) * texRatio;
          let d: number;
          let beyond = 0;
          if (texRatio <= 1) {
            d = depth;
          } else if (depth <= 0.5) {
            d = fromTop;
            if (d > 0.5) {
              beyond = Math.min(1, (d - 0.5) * 4);
              d = 0.5;
            }
          } else {
            d = 1 - fromBottom;
            if (d < 0.5) {
              beyond = Math.min(1, (0.5 - d) * 4);
              d = 0.5;
            }
          }
          texel(tex, acr, d, px2);
          // Past the texture: the back of the mouth, as dark as it gets.
          const deep = 0.85 + 0.3 * (1 - centrality);
          sr = px2[0] + beyond * (look.dark[0] * deep - px2[0]);
          sg = px2[1] + beyond * (look.dark[1] * deep - px2[1]);
          sb = px2[2] + beyond * (look.dark[2] * deep - px2[2]);
        } else {
          const inUpper = upperTeeth > 0 ? 1 - smooth(upperTeeth - soft, upperTeeth + soft, depth) : 0;
          const inLower = lowerTeeth > 0 ? smooth(1 - lowerTeeth - soft, 1 - lowerTeeth + soft, depth) : 0;
          const teethW = Math.max(inUpper, inLower) * smooth(0.95, 0.7, Math.abs(acr));
          // Lighter (the lips' own inner side) near the edges, darkest in the depth of the mouth.
          const shade = 1.1 - 0.5 * centrality;
          const rim = 1 - smooth(0, Math.min(0.3, 3 / gap), Math.min(depth, 1 - depth));
          sr = look.dark[0] * shade + rim * 0.25 * (look.lip[0] - look.dark[0]);
          sg = look.dark[1] * shade + rim * 0.25 * (look.lip[1] - look.dark[1]);
          sb = look.dark[2] * shade + rim * 0.25 * (look.lip[2] - look.dark[2]);
          if (teethW > 0) {
            const tShade =
              side * (inUpper > inLower ? 0.8 + 0.2 * Math.min(1, depth / Math.max(0.01, upperTeeth)) : 0.85);
            sr += teethW * (teeth[0] * tShade - sr);
            sg += teethW * (teeth[1] * tShade - sg);
            sb += teethW * (teeth[2] * tShade - sb);
          }
        }
        // Soft edges: blend into the lips' inner edge over about a pixel.
        const edge = smooth(0, soft, depth) * smooth(0, soft, 1 - depth);
        const synth = 1 - real;
        const fr = px[0] + edge * synth * (sr - px[0]);
        const fg = px[1] + edge * synth * (sg - px[1]);
        const fb = px[2] + edge * synth * (sb - px[2]);
        const o = (y * width + x) * 3;
        out[o] = clamp255(fr + 0.5);
        out[o + 1] = clamp255(fg + 0.5);
        out[o + 2] = clamp255(fb + 0.5);
      }
    }
  }
}

/** Bilinear lookup of an interior texture at (across -1..1, down 0..1). */
function texel(tex: InteriorTexture, across: number, down: number, out: Float32Array): void {
  const fx = Math.min(tex.across - 1.001, Math.max(0, ((across + 1) / 2) * tex.across - 0.5));
  const fy = Math.min(tex.down - 1.001, Math.max(0, down * tex.down - 0.5));
  const x0 = fx | 0;
  const y0 = fy | 0;
  const ax = fx - x0;
  const ay = fy - y0;
  const i00 = (y0 * tex.across + x0) * 3;
  const i01 = i00 + tex.across * 3;
  const rgb = tex.rgb;
  for (let c = 0; c < 3; c++) {
    out[c] =
      (rgb[i00 + c] * (1 - ax) + rgb[i00 + 3 + c] * ax) * (1 - ay) +
      (rgb[i01 + c] * (1 - ax) + rgb[i01 + 3 + c] * ax) * ay;
  }
}

function smooth(e0: number, e1: number, x: number): number {
  const t = Math.min(1, Math.max(0, (x - e0) / (e1 - e0)));
  return t * t * (3 - 2 * t);
}

/**
 * Learns the colours of the mouth's inside from the source frames: the dark cavity and, when the
 * source shows them, the teeth (bright, unsaturated pixels inside an open mouth). Also follows the lip
 * colour, from which the cavity is derived until the source has been seen open.
 */
export class MouthInterior {
  private dark: Rgb | null = null;
  private teeth: Rgb | null = null;
  private lip: Rgb = [150, 90, 90];
  private teethSightings = 0;
  private texture: InteriorTexture | null = null;
  private readonly px = new Float32Array(3);

  /** Looks at a source frame; `gap` is the source's inner-lip gap and `scale` the face scale, pixels. */
  observe(
    frame: Uint8Array,
    width: number,
    height: number,
    points: Float32Array,
    gap: number,
    scale: number,
  ): void {
    // Lip colour: the middle of both lips.
    let lr = 0;
    let lg = 0;
    let lb = 0;
    const lipPoints = [...LIPS.upperSemiOuter.slice(2, 7), ...LIPS.lowerSemiOuter.slice(3, 8)];
    for (const v of lipPoints) {
      sample(frame, width, height, points[2 * v], points[2 * v + 1], this.px);
      lr += this.px[0];
      lg += this.px[1];
      lb += this.px[2];
    }
    const n = lipPoints.length;
    this.lip = blend(this.lip, [lr / n, lg / n, lb / n], 0.1);
    if (gap < 0.07 * scale) return;
    this.capture(frame, width, height, points, gap / scale);

    // Inside the open mouth: a column of samples down the middle third.
    const lumas: { l: number; c: Rgb; sat: number }[] = [];
    for (let j = 2; j <= 6; j++) {
      const u = LIPS.upperInner[j];
      const l = LIPS.lowerInner[j + 1];
      for (let s = 0.1; s < 0.95; s += 0.1) {
        const x = points[2 * u] + s * (points[2 * l] - points[2 * u]);
        const y = points[2 * u + 1] + s * (points[2 * l + 1] - points[2 * u + 1]);
        sample(frame, width, height, x, y, this.px);
        const c: Rgb = [this.px[0], this.px[1], this.px[2]];
        const mx = Math.max(c[0], c[1], c[2]);
        const mn = Math.min(c[0], c[1], c[2]);
        lumas.push({ l: 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2], c, sat: mx > 0 ? (mx - mn) / mx : 0 });
      }
    }
    lumas.sort((a, b) => a.l - b.l);
    const darkPart = lumas.slice(0, Math.max(1, Math.floor(lumas.length * 0.4)));
    this.dark = blend(this.dark, mean(darkPart.map((p) => p.c)), 0.2);
    const bright = lumas.slice(Math.floor(lumas.length * 0.85));
    const darkL = darkPart[Math.floor(darkPart.length / 2)].l;
    const teethLike = bright.filter((p) => p.l > Math.max(90, darkL * 1.8) && p.sat < 0.4);
    if (teethLike.length >= Math.max(2, bright.length / 2)) {
      this.teethSightings++;
      this.teeth = blend(this.teeth, mean(teethLike.map((p) => p.c)), 0.2);
    }
  }

  /** Keeps the interior of the widest-open frames seen so far (blended, so one bad frame does not stick). */
  private capture(frame: Uint8Array, width: number, height: number, points: Float32Array, gap: number): void {
    const cur = this.texture;
    if (cur && gap < cur.gap * 0.85) return;
    const across = 24;
    const down = 12;
    const rgb = new Float32Array(across * down * 3);
    const upper = [CORNER_INNER[0], ...LIPS.upperInner, CORNER_INNER[1]];
    const lower = LIPS.lowerInner;
    const seg = upper.length - 1;
    for (let a = 0; a < across; a++) {
      const pos = ((a + 0.5) / across) * seg;
      const k = Math.min(seg - 1, Math.floor(pos));
      const f = pos - k;
      const ux = points[2 * upper[k]] * (1 - f) + points[2 * upper[k + 1]] * f;
      const uy = points[2 * upper[k] + 1] * (1 - f) + points[2 * upper[k + 1] + 1] * f;
      const lx = points[2 * lower[k]] * (1 - f) + points[2 * lower[k + 1]] * f;
      const ly = points[2 * lower[k] + 1] * (1 - f) + points[2 * lower[k + 1] + 1] * f;
      for (let d = 0; d < down; d++) {
        const s = (d + 0.5) / down;
        sample(frame, width, height, ux + s * (lx - ux), uy + s * (ly - uy), this.px);
        const o = (d * across + a) * 3;
        rgb[o] = this.px[0];
        rgb[o + 1] = this.px[1];
        rgb[o + 2] = this.px[2];
      }
    }
    if (!cur || gap > cur.gap * 1.25) {
      this.texture = { across, down, rgb, gap };
      return;
    }
    const k = 0.3;
    for (let i = 0; i < rgb.length; i++) cur.rgb[i] += k * (rgb[i] - cur.rgb[i]);
    cur.gap += k * (gap - cur.gap);
  }

  look(): InteriorLook {
    // A dark, slightly red shade of the lips; what the source showed when it is darker still (an
    // interior full of teeth is not the back of the mouth).
    const luma = 0.299 * this.lip[0] + 0.587 * this.lip[1] + 0.114 * this.lip[2];
    const shade: Rgb = [
      luma * 0.3 + this.lip[0] * 0.08,
      luma * 0.2 + this.lip[1] * 0.04,
      luma * 0.2 + this.lip[2] * 0.04,
    ];
    const lumaOf = (c: Rgb) => 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2];
    const dark = this.dark && lumaOf(this.dark) < lumaOf(shade) ? this.dark : shade;
    return {
      dark,
      teeth: this.teethSightings >= 2 ? this.teeth : null,
      lip: this.lip,
      texture: this.texture,
    };
  }
}

function mean(cs: Rgb[]): Rgb {
  const m: Rgb = [0, 0, 0];
  for (const c of cs) for (let k = 0; k < 3; k++) m[k] += c[k] / cs.length;
  return m;
}

function blend(prev: Rgb | null, next: Rgb, k: number): Rgb {
  if (!prev) return next;
  return [
    prev[0] + k * (next[0] - prev[0]),
    prev[1] + k * (next[1] - prev[1]),
    prev[2] + k * (next[2] - prev[2]),
  ];
}
