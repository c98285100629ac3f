// Dynamic time warping between two sequences of feature frames, and carrying times from one sequence
// onto the other through the warping path. Used to give a voice that reports no phone times (SVOX
// Pico, pico.ts) the phone times of a reference rendering of the same text whose times are known.
// Pure: numbers in, numbers out.

/** A warping path: pairs (a[k], b[k]) from (0, 0) to (n - 1, m - 1), each step +1 in a, b or both. */
export interface WarpPath {
  a: Int32Array;
  b: Int32Array;
  /** Summed frame distance along the path. */
  cost: number;
}

/** The most cells the cost table may hold (a 300-character chunk is about 2,500 x 2,500 frames). */
export const MAX_DTW_CELLS = 16_000_000;

/** Euclidean distance between frame i of `x` and frame j of `y` (both `dim` wide, row-major). */
function distance(x: Float32Array, i: number, y: Float32Array, j: number, dim: number): number {
  let s = 0;
  const xo = i * dim;
  const yo = j * dim;
  for (let k = 0; k < dim; k++) {
    const d = x[xo + k] - y[yo + k];
    s += d * d;
  }
  return Math.sqrt(s);
}

/**
 * The cheapest monotone path between `x` (n frames) and `y` (m frames) of `dim` features each:
 * steps (1, 0), (0, 1) and (1, 1), every visited cell adding its distance. Ties prefer the diagonal.
 * With `band` (frames), only cells within that distance of the straight line from (0, 0) to
 * (n - 1, m - 1) are considered (a Sakoe-Chiba band): for sequences already of the same length the
 * path stays near it, and the table is then a strip rather than the whole square.
 */
export function dtw(x: Float32Array, y: Float32Array, dim: number, band = Infinity): WarpPath {
  if (dim <= 0 || x.length % dim !== 0 || y.length % dim !== 0) throw new Error('frames must be dim wide');
  const n = x.length / dim;
  const m = y.length / dim;
  if (n === 0 || m === 0) throw new Error('dtw needs at least one frame on each side');
  // Row i covers columns lo[i]..hi[i]; the strip is at least one row's step wide, so rows connect.
  const slope = n > 1 ? (m - 1) / (n - 1) : 0;
  const half = Math.max(band, Math.ceil(slope) + 1);
  const lo = new Int32Array(n);
  const hi = new Int32Array(n);
  const off = new Float64Array(n + 1);
  for (let i = 0; i < n; i++) {
    const centre = i * slope;
    lo[i] = i === 0 ? 0 : Math.max(0, Math.floor(centre - half));
    hi[i] = i === n - 1 ? m - 1 : Math.min(m - 1, Math.ceil(centre + half));
    off[i + 1] = off[i] + (hi[i] - lo[i] + 1);
  }
  const cells = off[n];
  if (cells > MAX_DTW_CELLS) throw new Error(`dtw table too large (${n} x ${m} frames)`);
  const acc = new Float64Array(cells);
  // 0: diagonal, 1: from (i - 1, j), 2: from (i, j - 1).
  const step = new Uint8Array(cells);
  const at = (i: number, j: number) => (j < lo[i] || j > hi[i] ? Infinity : acc[off[i] + j - lo[i]]);
  for (let i = 0; i < n; i++) {
    for (let j = lo[i]; j <= hi[i]; j++) {
      const d = distance(x, i, y, j, dim);
      const c = off[i] + j - lo[i];
      if (i === 0 && j === 0) {
        acc[c] = d;
        continue;
      }
      let best = Infinity;
      let from = 0;
      if (i > 0 && j > 0) best = at(i - 1, j - 1);
      if (i > 0 && at(i - 1, j) < best) [best, from] = [at(i - 1, j), 1];
      if (j > lo[i] && acc[c - 1] < best) [best, from] = [acc[c - 1], 2];
      acc[c] = best + d;
      step[c] = from;
    }
  }
  const a: number[] = [];
  const b: number[] = [];
  for (let i = n - 1, j = m - 1; ;) {
    a.push(i);
    b.push(j);
    if (i === 0 && j === 0) break;
    const s = step[off[i] + j - lo[i]];
    if (s === 0) {
      i--;
      j--;
    } else if (s === 1) i--;
    else j--;
  }
  return { a: Int32Array.from(a.reverse()), b: Int32Array.from(b.reverse()), cost: acc[cells - 1] };
}

/**
 * For each frame of the first sequence, its position in the second: the middle of the frames the path
 * pairs it with. Non-decreasing, since the path is monotone.
 */
export function warpPositions(path: WarpPath): Float64Array {
  const n = path.a[path.a.length - 1] + 1;
  const lo = new Float64Array(n).fill(Infinity);
  const hi = new Float64Array(n).fill(-Infinity);
  for (let k = 0; k < path.a.length; k++) {
    const i = path.a[k];
    lo[i] = Math.min(lo[i], path.b[k]);
    hi[i] = Math.max(hi[i], path.b[k]);
  }
  const pos = new Float64Array(n);
  for (let i = 0; i < n; i++) pos[i] = (lo[i] + hi[i]) / 2;
  return pos;
}

/**
 * Carries times (ms, non-decreasing) of the first sequence onto the second. Frame f covers the audio
 * from f * hopMs for a window of `windowMs`, and stands for its centre; times between centres are
 * interpolated, and results are clamped to [0, toDurationMs]. Order is kept.
 */
export function warpTimes(
  timesMs: readonly number[],
  positions: Float64Array,
  opts: { hopMs: number; windowMs: number; toDurationMs: number },
): number[] {
  const half = opts.windowMs / 2;
  const last = positions.length - 1;
  let prev = 0;
  return timesMs.map((t) => {
    const x = Math.min(last, Math.max(0, (t - half) / opts.hopMs));
    const i = Math.floor(x);
    const f = x - i;
    const p = i >= last ? positions[last] : positions[i] * (1 - f) + positions[i + 1] * f;
    let ms = p * opts.hopMs + half;
    // The ends of the audio are the ends: half a window of each side is outside any frame's centre.
    if (t <= half) ms = (t / half) * Math.min(ms, half);
    ms = Math.min(opts.toDurationMs, Math.max(prev, ms));
    prev = ms;
    return ms;
  });
}
