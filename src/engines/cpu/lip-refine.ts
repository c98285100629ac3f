// Refines the inner lip contour from the pixels. On a parted mouth FaceMesh often places the inner lip
// points on the edge of the teeth (or of the dark inside) rather than on the lips' own edge: the
// teeth are then counted as lip, the measured opening is too small, and a warp that closes the mouth
// would press slivers of teeth together. For each column of the mouth, the refiner walks from the
// inner lip point outwards (up for the upper lip, down for the lower) until the pixels look like lip
// (red enough against this face's own lip colour, not too dark), and moves that lip's rings so its
// inner edge sits there. The shifts are smoothed over time so the contour does not flicker.
import { LIPS } from './landmarks.js';

const UPPER = [LIPS.upperOuter, LIPS.upperSemiOuter, LIPS.upperSemiInner, LIPS.upperInner] as const;
const LOWER = [LIPS.lowerOuter, LIPS.lowerSemiOuter, LIPS.lowerSemiInner, LIPS.lowerInner] as const;

export class LipRefiner {
  private upShift: Float32Array | null = null;
  private downShift: Float32Array | null = null;

  reset(): void {
    this.upShift = null;
    this.downShift = null;
  }

  /**
   * Returns refined landmarks (a copy; `points` is not changed). `down` is the unit vector down the
   * face and `scale` the face scale in pixels.
   */
  refine(
    frame: Uint8Array,
    width: number,
    height: number,
    points: Float32Array,
    down: [number, number],
    scale: number,
  ): Float32Array {
    const out = Float32Array.from(points);
    const ref = lipReference(frame, width, height, points);
    const cols = LIPS.upperInner.length;
    const up = new Float32Array(cols);
    const dn = new Float32Array(cols);
    if (ref) {
      for (let j = 0; j < cols; j++) {
        // Upper lip: from the inner point up past the outer ring; lower lip: down.
        up[j] = edgeDistance(
          frame,
          width,
          height,
          points,
          LIPS.upperInner[j],
          LIPS.upperOuter[j],
          ref,
          scale,
        );
        dn[j] = edgeDistance(
          frame,
          width,
          height,
          points,
          LIPS.lowerInner[j + 1],
          LIPS.lowerOuter[j + 1],
          ref,
          scale,
        );
      }
      // A lone column is noise: limit each shift to its neighbours' largest plus a little.
      limitSpikes(up, 0.03 * scale);
      limitSpikes(dn, 0.03 * scale);
    }
    this.upShift = blendShift(this.upShift, up);
    this.downShift = blendShift(this.downShift, dn);
    const [nx, ny] = down;
    for (let j = 0; j < cols; j++) {
      moveRings(
        out,
        points,
        UPPER.map((r) => r[j]),
        this.upShift[j],
        -nx,
        -ny,
      );
      moveRings(
        out,
        points,
        LOWER.map((r) => r[j + 1]),
        this.downShift[j],
        nx,
        ny,
      );
    }
    return out;
  }
}

/**
 * Moves one column of a lip (ring points from outer to inner) so its inner edge is `shift` pixels
 * further out along (ux, uy): the rings are squeezed between the new inner edge and the outer ring, or,
 * when the edge lies past the outer ring (the whole lip was drawn over the teeth), moved out with it.
 */
function moveRings(
  out: Float32Array,
  p: Float32Array,
  column: number[],
  shift: number,
  ux: number,
  uy: number,
): void {
  if (shift <= 0) return;
  const inner = column[column.length - 1];
  const outer = column[0];
  const dOuter = Math.max(
    1e-3,
    (p[2 * outer] - p[2 * inner]) * ux + (p[2 * outer + 1] - p[2 * inner + 1]) * uy,
  );
  for (const v of column) {
    const d = Math.max(0, (p[2 * v] - p[2 * inner]) * ux + (p[2 * v + 1] - p[2 * inner + 1]) * uy);
    const target = shift <= dOuter ? shift + (d / dOuter) * (dOuter - shift) : shift + 0.6 * d;
    const move = target - d;
    out[2 * v] += ux * move;
    out[2 * v + 1] += uy * move;
  }
}

interface LipColour {
  /** (r - g) / (r + g + b): red against grey, whatever the brightness. */
  redness: number;
  luma: number;
}

function px(
  frame: Uint8Array,
  width: number,
  height: number,
  x: number,
  y: number,
): [number, number, number] {
  const xi = Math.min(width - 1, Math.max(0, Math.round(x - 0.5)));
  const yi = Math.min(height - 1, Math.max(0, Math.round(y - 0.5)));
  const i = (yi * width + xi) * 3;
  return [frame[i], frame[i + 1], frame[i + 2]];
}

/** The face's lip colour: the middle of the outer half of the lower lip (the most reliable band). */
function lipReference(frame: Uint8Array, width: number, height: number, p: Float32Array): LipColour | null {
  const reds: number[] = [];
  const lumas: number[] = [];
  for (let i = 2; i <= 8; i++) {
    const a = LIPS.lowerOuter[i];
    const b = LIPS.lowerSemiOuter[i];
    const [r, g, bl] = px(frame, width, height, (p[2 * a] + p[2 * b]) / 2, (p[2 * a + 1] + p[2 * b + 1]) / 2);
    reds.push((r - g) / (r + g + bl + 1));
    lumas.push(0.299 * r + 0.587 * g + 0.114 * bl);
  }
  reds.sort((x, y) => x - y);
  lumas.sort((x, y) => x - y);
  const redness = reds[reds.length >> 1];
  // Lips that are not redder than teeth cannot be told apart by colour: leave the contour alone.
  if (redness < 0.05) return null;
  return { redness, luma: lumas[lumas.length >> 1] };
}

/**
 * Pixels from the inner point `from`, towards `to` and a little past it, to the lip's real inner edge:
 * 0 when the point already sits on lip; else the strongest rise of redness along the way, provided the
 * pixels before it are not lip-like (teeth, the dark inside) and those after it are.
 */
function edgeDistance(
  frame: Uint8Array,
  width: number,
  height: number,
  p: Float32Array,
  from: number,
  to: number,
  ref: LipColour,
  scale: number,
): number {
  const x0 = p[2 * from];
  const y0 = p[2 * from + 1];
  const dx = p[2 * to] - x0;
  const dy = p[2 * to + 1] - y0;
  const len = Math.hypot(dx, dy);
  if (len < 1) return 0;
  const maxDist = Math.min(len + 0.1 * scale, 0.3 * scale);
  const ux = dx / len;
  const uy = dy / len;
  const step = 0.75;
  const n = Math.max(0, Math.floor(maxDist / step)) + 1;
  const red = new Float32Array(n);
  const lipLike = new Uint8Array(n);
  for (let k = 0; k < n; k++) {
    const c = px(frame, width, height, x0 + ux * k * step, y0 + uy * k * step);
    const sum = c[0] + c[1] + c[2] + 1;
    red[k] = (c[0] - c[1]) / sum;
    lipLike[k] =
      red[k] >= 0.75 * ref.redness && 0.299 * c[0] + 0.587 * c[1] + 0.114 * c[2] >= 0.4 * ref.luma ? 1 : 0;
  }
  if (n < 4 || (lipLike[0] && lipLike[1])) return 0;
  let best = -1;
  let bestRise = 0.25 * ref.redness;
  for (let k = 2; k + 2 < n; k++) {
    const rise = (red[k + 1] + red[k + 2]) / 2 - (red[k - 1] + red[k - 2]) / 2;
    if (rise > bestRise && lipLike[k + 1] && lipLike[k + 2]) {
      bestRise = rise;
      best = k;
    }
  }
  if (best < 0) return 0;
  let before = 0;
  for (let k = 0; k < best; k++) before += lipLike[k];
  if (before > best / 2) return 0;
  return best * step;
}

function limitSpikes(v: Float32Array, slack: number): void {
  const c = Float32Array.from(v);
  for (let j = 0; j < v.length; j++) {
    const left = j > 0 ? c[j - 1] : c[j + 1];
    const right = j + 1 < v.length ? c[j + 1] : c[j - 1];
    v[j] = Math.min(c[j], Math.max(left, right) + slack);
  }
}

function blendShift(prev: Float32Array | null, next: Float32Array): Float32Array {
  if (!prev) return Float32Array.from(next);
  for (let j = 0; j < next.length; j++) prev[j] += 0.6 * (next[j] - prev[j]);
  return prev;
}
