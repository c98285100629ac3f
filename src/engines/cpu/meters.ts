// Meters for what a viewer notices up close (issue 36), pure functions over decoded frames and the
// face's landmarks, shared by `npm run quality` and the engine's per-generation report:
//  - seam: the colour step across the outline of the re-drawn region (a ring of that shape around
//    the mouth on any clip) over the step across parallel rings outside it; a pasted hard-edged patch
//    scores well above 1, a real face about 1;
//  - jitter: the mouth region's change from the previous frame that the landmarks' motion does not
//    explain (each pixel is looked up where the nearby landmarks were), mean absolute luma difference;
//  - dark holes: the share of open-mouth frames whose inner-lip area shows no teeth-like (bright,
//    little saturated) or tongue-like (red, not dark) pixels, only dark ones.
// A `MeterStream` accumulates them over the frames of one video; comparing two streams (an output and
// its source) gives the figures relative to the source's own. docs/engine.md, "Meters".
import { INNER_LIP_POLYGON, LIPS, interocular, mouthOpening } from './landmarks.js';
import type { RigTopology } from './mouth-rig.js';

/**
 * A frame, or a crop of one: `data` holds `width` x `height` pixels whose top-left corner is at
 * (`left`, `top`) of the frame (default 0, 0); coordinates given to the readers are the frame's.
 */
export interface FrameView {
  data: Uint8Array;
  width: number;
  height: number;
  format: 'rgb24' | 'yuv420p';
  left?: number;
  top?: number;
}

/** Opening (inner-lip gap over the eye distance) from which a frame counts as an open mouth. */
export const OPEN_MOUTH = 0.12;
/** Share of the opening's pixels that must look like teeth or tongue for it not to be a dark hole. */
export const VISIBLE_SHARE = 0.06;

const clamp255 = (v: number) => (v < 0 ? 0 : v > 255 ? 255 : v);

/**
 * A copy of the rectangle [x0, x1) x [y0, y1) of a whole frame (row by row; widened to even corners
 * for yuv420p): what the meters keep of a frame instead of all of it.
 */
export function cropFrame(f: FrameView, x0: number, y0: number, x1: number, y1: number): FrameView {
  const even = f.format === 'yuv420p' ? ~1 : ~0;
  const l = Math.max(0, Math.floor(x0) & even);
  const t = Math.max(0, Math.floor(y0) & even);
  const r = Math.min(f.width, (Math.ceil(x1) + 1) & even);
  const b = Math.min(f.height, (Math.ceil(y1) + 1) & even);
  const w = Math.max(0, r - l);
  const h = Math.max(0, b - t);
  if (f.format === 'rgb24') {
    const data = new Uint8Array(w * h * 3);
    for (let y = 0; y < h; y++) {
      const a = ((t + y) * f.width + l) * 3;
      data.set(f.data.subarray(a, a + w * 3), y * w * 3);
    }
    return { data, width: w, height: h, format: 'rgb24', left: l, top: t };
  }
  const data = new Uint8Array(w * h + 2 * (w >> 1) * (h >> 1));
  for (let y = 0; y < h; y++) {
    const a = (t + y) * f.width + l;
    data.set(f.data.subarray(a, a + w), y * w);
  }
  const fw = f.width >> 1;
  const cw = w >> 1;
  const planes = [f.width * f.height, f.width * f.height + fw * (f.height >> 1)];
  const into = [w * h, w * h + cw * (h >> 1)];
  for (let k = 0; k < 2; k++) {
    for (let y = 0; y < h >> 1; y++) {
      const a = planes[k] + ((t >> 1) + y) * fw + (l >> 1);
      data.set(f.data.subarray(a, a + cw), into[k] + y * cw);
    }
  }
  return { data, width: w, height: h, format: 'yuv420p', left: l, top: t };
}

/** Colour (full-range rgb, BT.601 limited range for yuv420p as the engine converts) of the pixel at (x, y). */
export function rgbAt(f: FrameView, x: number, y: number, out: Float32Array): void {
  const xi = Math.min(f.width - 1, Math.max(0, Math.floor(x) - (f.left ?? 0)));
  const yi = Math.min(f.height - 1, Math.max(0, Math.floor(y) - (f.top ?? 0)));
  if (f.format === 'rgb24') {
    const i = (yi * f.width + xi) * 3;
    out[0] = f.data[i];
    out[1] = f.data[i + 1];
    out[2] = f.data[i + 2];
    return;
  }
  const lumaBytes = f.width * f.height;
  const cw = f.width >> 1;
  const ci = (yi >> 1) * cw + (xi >> 1);
  const Y = 1.164 * (f.data[yi * f.width + xi] - 16);
  const U = f.data[lumaBytes + ci] - 128;
  const V = f.data[lumaBytes + (lumaBytes >> 2) + ci] - 128;
  out[0] = clamp255(Y + 1.596 * V);
  out[1] = clamp255(Y - 0.392 * U - 0.813 * V);
  out[2] = clamp255(Y + 2.017 * U);
}

/** Luma of the pixel at (x, y) of `data` (crop coordinates). */
function lumaPx(f: FrameView, x: number, y: number): number {
  if (f.format === 'yuv420p') return clamp255(1.164 * (f.data[y * f.width + x] - 16));
  const i = (y * f.width + x) * 3;
  return 0.299 * f.data[i] + 0.587 * f.data[i + 1] + 0.114 * f.data[i + 2];
}

/** Bilinear luma (full range) at frame position (x, y), pixel centres at +0.5, edge-clamped. */
export function lumaAt(f: FrameView, x: number, y: number): number {
  const fx = Math.min(f.width - 1.001, Math.max(0, x - 0.5 - (f.left ?? 0)));
  const fy = Math.min(f.height - 1.001, Math.max(0, y - 0.5 - (f.top ?? 0)));
  const x0 = fx | 0;
  const y0 = fy | 0;
  const ax = fx - x0;
  const ay = fy - y0;
  return (
    lumaPx(f, x0, y0) * (1 - ax) * (1 - ay) +
    lumaPx(f, x0 + 1, y0) * ax * (1 - ay) +
    lumaPx(f, x0, y0 + 1) * (1 - ax) * ay +
    lumaPx(f, x0 + 1, y0 + 1) * ax * ay
  );
}

// ---------------------------------------------------------------------------------------------- seam

/**
 * The outer boundary of the rig's region as a loop of vertex ids: the edges that only one triangle
 * has, chained, the longest loop (the others are the mouth's own hole).
 */
export function regionOutlineLoop(topology: Pick<RigTopology, 'triangles'>): number[] {
  const count = new Map<string, number>();
  const key = (a: number, b: number) => (a < b ? `${a},${b}` : `${b},${a}`);
  const tris = topology.triangles;
  for (let t = 0; t < tris.length; t += 3) {
    for (const [a, b] of [
      [tris[t], tris[t + 1]],
      [tris[t + 1], tris[t + 2]],
      [tris[t + 2], tris[t]],
    ]) {
      count.set(key(a, b), (count.get(key(a, b)) ?? 0) + 1);
    }
  }
  const next = new Map<number, number[]>();
  for (const [k, n] of count) {
    if (n !== 1) continue;
    const [a, b] = k.split(',').map(Number);
    next.set(a, [...(next.get(a) ?? []), b]);
    next.set(b, [...(next.get(b) ?? []), a]);
  }
  const seen = new Set<number>();
  let best: number[] = [];
  for (const start of next.keys()) {
    if (seen.has(start)) continue;
    const loop = [start];
    seen.add(start);
    let prev = -1;
    let cur = start;
    for (;;) {
      const nb = (next.get(cur) ?? []).find((v) => v !== prev && !seen.has(v));
      if (nb === undefined) break;
      loop.push(nb);
      seen.add(nb);
      prev = cur;
      cur = nb;
    }
    if (loop.length > best.length) best = loop;
  }
  return best;
}

/** The loop's positions (x, y pairs) from per-vertex positions such as a WarpGeometry's `src`. */
export function outlinePoints(loop: readonly number[], positions: ArrayLike<number>): Float32Array {
  const out = new Float32Array(loop.length * 2);
  loop.forEach((v, i) => {
    out[2 * i] = positions[2 * v];
    out[2 * i + 1] = positions[2 * v + 1];
  });
  return out;
}

export interface RingSample {
  /** Points along the closed outline, every `step` pixels, and their outward unit normals. */
  x: Float32Array;
  y: Float32Array;
  nx: Float32Array;
  ny: Float32Array;
}

/** Resamples a closed polygon every `step` pixels with outward normals (away from its centroid). */
export function sampleRing(polygon: ArrayLike<number>, step = 3): RingSample {
  const n = polygon.length / 2;
  let cx = 0;
  let cy = 0;
  for (let i = 0; i < n; i++) {
    cx += polygon[2 * i] / n;
    cy += polygon[2 * i + 1] / n;
  }
  const xs: number[] = [];
  const ys: number[] = [];
  const nxs: number[] = [];
  const nys: number[] = [];
  for (let i = 0; i < n; i++) {
    const ax = polygon[2 * i];
    const ay = polygon[2 * i + 1];
    const bx = polygon[2 * ((i + 1) % n)];
    const by = polygon[2 * ((i + 1) % n) + 1];
    const len = Math.hypot(bx - ax, by - ay);
    if (len < 1e-6) continue;
    let nx = (by - ay) / len;
    let ny = -(bx - ax) / len;
    if (nx * ((ax + bx) / 2 - cx) + ny * ((ay + by) / 2 - cy) < 0) {
      nx = -nx;
      ny = -ny;
    }
    for (let s = 0; s < len; s += step) {
      xs.push(ax + ((bx - ax) * s) / len);
      ys.push(ay + ((by - ay) * s) / len);
      nxs.push(nx);
      nys.push(ny);
    }
  }
  return {
    x: Float32Array.from(xs),
    y: Float32Array.from(ys),
    nx: Float32Array.from(nxs),
    ny: Float32Array.from(nys),
  };
}

const pxA = new Float32Array(3);
const pxB = new Float32Array(3);

/**
 * Mean colour step (mean absolute rgb difference) across the ring moved `offset` pixels outward: the
 * pixels `h` pixels outside and inside each point. Points off the frame are skipped.
 */
export function ringContrast(f: FrameView, ring: RingSample, offset: number, h: number): number {
  let sum = 0;
  let n = 0;
  for (let i = 0; i < ring.x.length; i++) {
    const x = ring.x[i] + ring.nx[i] * offset;
    const y = ring.y[i] + ring.ny[i] * offset;
    const ox = ring.nx[i] * h;
    const oy = ring.ny[i] * h;
    const l = f.left ?? 0;
    const t = f.top ?? 0;
    if (x - h < l || y - h < t || x + h >= l + f.width || y + h >= t + f.height) continue;
    rgbAt(f, x + ox, y + oy, pxA);
    rgbAt(f, x - ox, y - oy, pxB);
    sum += (Math.abs(pxA[0] - pxB[0]) + Math.abs(pxA[1] - pxB[1]) + Math.abs(pxA[2] - pxB[2])) / 3;
    n++;
  }
  return n > 0 ? sum / n : NaN;
}

export interface SeamFrame {
  /** Step across the outline itself. */
  edge: number;
  /**
   * Mean step across two rings outside it (0.15 and 0.3 eye distances out): the picture's own texture,
   * which the engine never changes (inside, a feathered blend would itself raise the steps).
   */
  around: number;
}

/** The seam measures of one frame along `ring`; `scale` is the face's eye distance in pixels. */
export function seamFrame(f: FrameView, ring: RingSample, scale: number): SeamFrame {
  const h = Math.max(1.5, 0.03 * scale);
  const edge = ringContrast(f, ring, 0, h);
  const around = (ringContrast(f, ring, 0.15 * scale, h) + ringContrast(f, ring, 0.3 * scale, h)) / 2;
  return { edge, around };
}

// -------------------------------------------------------------------------------------------- jitter

/** The lip landmarks whose motion explains the mouth region's motion (outer and inner contours). */
const MOUTH_POINTS: readonly number[] = [
  ...LIPS.upperOuter,
  ...LIPS.upperInner,
  ...LIPS.lowerOuter,
  ...LIPS.lowerInner,
];

/**
 * Mean absolute luma change of the mouth region (the outer lips' box and 0.25 eye distances around
 * it) from `prev` to `cur`, each pixel of `cur` compared with `prev` where the nearby lip landmarks
 * were (inverse-distance weighting of their motion): what the landmarks' motion does not explain.
 */
export function mouthResidual(
  prev: FrameView,
  prevPoints: ArrayLike<number>,
  cur: FrameView,
  curPoints: ArrayLike<number>,
): number {
  const scale = interocular(curPoints);
  if (!(scale > 0)) return NaN;
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  const k = MOUTH_POINTS.length;
  const px = new Float32Array(k);
  const py = new Float32Array(k);
  const dx = new Float32Array(k);
  const dy = new Float32Array(k);
  MOUTH_POINTS.forEach((v, i) => {
    px[i] = curPoints[2 * v];
    py[i] = curPoints[2 * v + 1];
    dx[i] = prevPoints[2 * v] - px[i];
    dy[i] = prevPoints[2 * v + 1] - py[i];
    x0 = Math.min(x0, px[i]);
    x1 = Math.max(x1, px[i]);
    y0 = Math.min(y0, py[i]);
    y1 = Math.max(y1, py[i]);
  });
  const m = 0.25 * scale;
  x0 = Math.max(cur.left ?? 0, x0 - m);
  y0 = Math.max(cur.top ?? 0, y0 - m);
  x1 = Math.min((cur.left ?? 0) + cur.width - 1, x1 + m);
  y1 = Math.min((cur.top ?? 0) + cur.height - 1, y1 + m);
  // About 30 samples per eye distance whatever the face's size.
  const step = Math.max(1, scale / 30);
  const s2 = (0.1 * scale) ** 2;
  let sum = 0;
  let n = 0;
  for (let y = y0; y <= y1; y += step) {
    for (let x = x0; x <= x1; x += step) {
      let wx = 0;
      let wy = 0;
      let ws = 0;
      for (let i = 0; i < k; i++) {
        const w = 1 / ((x - px[i]) ** 2 + (y - py[i]) ** 2 + s2);
        wx += w * dx[i];
        wy += w * dy[i];
        ws += w;
      }
      sum += Math.abs(lumaAt(cur, x, y) - lumaAt(prev, x + wx / ws, y + wy / ws));
      n++;
    }
  }
  return n > 0 ? sum / n : NaN;
}

// ---------------------------------------------------------------------------------------- dark holes

function insidePolygon(poly: Float32Array, x: number, y: number): boolean {
  let inside = false;
  const n = poly.length / 2;
  for (let i = 0, j = n - 1; i < n; j = i++) {
    const xi = poly[2 * i];
    const yi = poly[2 * i + 1];
    const xj = poly[2 * j];
    const yj = poly[2 * j + 1];
    if (yi > y !== yj > y && x < ((xj - xi) * (y - yi)) / (yj - yi) + xi) inside = !inside;
  }
  return inside;
}

export interface MouthInside {
  /** The opening (inner-lip gap over the eye distance). */
  opening: number;
  /** Pixels looked at inside the opening, and the share of them like teeth or tongue. */
  pixels: number;
  visibleShare: number;
}

const lipPx = new Float32Array(3);

/**
 * What the open mouth shows: the inner-lip polygon shrunk by a fifth towards its centre (off the
 * lips' edge) is sampled; a pixel is teeth-like when bright (at least 0.85 of the lips' luma) and
 * little saturated, tongue-like when red (r above g by 15 %, and above b) and not dark (at least 0.55
 * of the lips' luma). The lips' luma is the median over the lip landmarks between the rings.
 */
export function mouthInside(f: FrameView, points: ArrayLike<number>): MouthInside {
  const opening = mouthOpening(points);
  const n = INNER_LIP_POLYGON.length;
  let cx = 0;
  let cy = 0;
  for (const v of INNER_LIP_POLYGON) {
    cx += points[2 * v] / n;
    cy += points[2 * v + 1] / n;
  }
  const poly = new Float32Array(2 * n);
  let x0 = Infinity;
  let y0 = Infinity;
  let x1 = -Infinity;
  let y1 = -Infinity;
  INNER_LIP_POLYGON.forEach((v, i) => {
    poly[2 * i] = cx + 0.8 * (points[2 * v] - cx);
    poly[2 * i + 1] = cy + 0.8 * (points[2 * v + 1] - cy);
    x0 = Math.min(x0, poly[2 * i]);
    x1 = Math.max(x1, poly[2 * i]);
    y0 = Math.min(y0, poly[2 * i + 1]);
    y1 = Math.max(y1, poly[2 * i + 1]);
  });
  const lips: number[] = [];
  for (const v of [...LIPS.upperSemiOuter, ...LIPS.lowerSemiOuter]) {
    rgbAt(f, points[2 * v], points[2 * v + 1], lipPx);
    lips.push(0.299 * lipPx[0] + 0.587 * lipPx[1] + 0.114 * lipPx[2]);
  }
  lips.sort((a, b) => a - b);
  const lipY = Math.max(8, lips[lips.length >> 1]);
  let pixels = 0;
  let visible = 0;
  const c = new Float32Array(3);
  // About 50 samples per eye distance (every pixel of a small face).
  const step = Math.max(1, interocular(points) / 50);
  for (let y = Math.floor(y0) + 0.5; y <= y1; y += step) {
    for (let x = Math.floor(x0) + 0.5; x <= x1; x += step) {
      if (!insidePolygon(poly, x, y)) continue;
      rgbAt(f, x, y, c);
      const Y = 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2];
      const max = Math.max(c[0], c[1], c[2]);
      const sat = max > 0 ? (max - Math.min(c[0], c[1], c[2])) / max : 0;
      const teeth = Y >= 0.85 * lipY && sat < 0.35;
      const tongue = c[0] > 1.15 * c[1] && c[0] > c[2] && Y >= 0.55 * lipY;
      pixels++;
      if (teeth || tongue) visible++;
    }
  }
  return { opening, pixels, visibleShare: pixels > 0 ? visible / pixels : 0 };
}

/** An open mouth (above OPEN_MOUTH, with a few pixels to judge) that shows only dark. */
export function isDarkHole(m: MouthInside): boolean | null {
  if (!(m.opening >= OPEN_MOUTH) || m.pixels < 12) return null;
  return m.visibleShare < VISIBLE_SHARE;
}

// -------------------------------------------------------------------------------------------- stream

export interface StreamMeters {
  /** Frames measured (with a face). */
  frames: number;
  /** Median over frames of the outline's step over the step around it (about 1 on a real face). */
  seam: number | null;
  /** Sum of the outline's steps over the frames (for comparing two streams on the same frames). */
  seamEdgeSum: number;
  /** Mean unexplained luma change of the mouth region between consecutive frames (0..255). */
  jitter: number | null;
  jitterPairs: number;
  /** Open-mouth frames, and how many of them showed only dark. */
  openFrames: number;
  darkHoleFrames: number;
  darkHoleShare: number | null;
}

/** One video's meters, frame by frame (frames in order; `consecutive` false after a skipped frame). */
export class MeterStream {
  private frames = 0;
  private readonly seams: number[] = [];
  private seamEdgeSum = 0;
  private jitterSum = 0;
  private jitterPairs = 0;
  private openFrames = 0;
  private darkHoles = 0;
  private prev: { frame: FrameView; points: Float32Array } | null = null;

  /**
   * `outline`: the re-drawn region's outline (x, y pairs; null to skip the seam); `previous`: the
   * frame before this one and its landmarks when jitter should be measured on this pair.
   */
  add(
    f: FrameView,
    points: ArrayLike<number>,
    outline: ArrayLike<number> | null,
    previous: { frame: FrameView; points: ArrayLike<number> } | null = null,
  ): void {
    this.frames++;
    const scale = interocular(points);
    if (outline && outline.length >= 6 && scale > 0) {
      const s = seamFrame(f, sampleRing(outline), scale);
      if (Number.isFinite(s.edge) && Number.isFinite(s.around)) {
        this.seamEdgeSum += s.edge;
        this.seams.push(s.edge / Math.max(0.5, s.around));
      }
    }
    if (previous) {
      const r = mouthResidual(previous.frame, previous.points, f, points);
      if (Number.isFinite(r)) {
        this.jitterSum += r;
        this.jitterPairs++;
      }
    }
    const dark = isDarkHole(mouthInside(f, points));
    if (dark !== null) {
      this.openFrames++;
      if (dark) this.darkHoles++;
    }
  }

  summary(): StreamMeters {
    const s = [...this.seams].sort((a, b) => a - b);
    return {
      frames: this.frames,
      seam: s.length ? round3(s[s.length >> 1]) : null,
      seamEdgeSum: this.seamEdgeSum,
      jitter: this.jitterPairs ? round3(this.jitterSum / this.jitterPairs) : null,
      jitterPairs: this.jitterPairs,
      openFrames: this.openFrames,
      darkHoleFrames: this.darkHoles,
      darkHoleShare: this.openFrames ? round3(this.darkHoles / this.openFrames) : null,
    };
  }
}

function round3(x: number): number {
  return Math.round(x * 1000) / 1000;
}

export interface ComparedMeters {
  output: Omit<StreamMeters, 'seamEdgeSum'>;
  source: Omit<StreamMeters, 'seamEdgeSum'>;
  /** The output's step across the outline over the source's on the same ring and frames (1: no seam added). */
  seamVsSource: number | null;
  /** The output's jitter over the source's own. */
  jitterVsSource: number | null;
}

/** An output's meters next to its source's, measured on the same frames. */
export function compareMeters(output: StreamMeters, source: StreamMeters): ComparedMeters {
  const strip = ({ seamEdgeSum: _, ...m }: StreamMeters) => m;
  return {
    output: strip(output),
    source: strip(source),
    seamVsSource: source.seamEdgeSum > 0 ? round3(output.seamEdgeSum / source.seamEdgeSum) : null,
    jitterVsSource:
      output.jitter !== null && source.jitter !== null && source.jitter > 0
        ? round3(output.jitter / source.jitter)
        : null,
  };
}
