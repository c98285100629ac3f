// A streaming band-limited resampler for mono float samples: Kaiser-windowed sinc taps, one filter
// per phase of the rates' ratio (44.1 kHz -> 16 kHz has 160 phases; 48 kHz -> 16 kHz one), the
// cut-off just below the lower rate's Nyquist frequency. Memory is the filter bank plus a block's
// worth of history, whatever the length. Rates whose ratio would need more than MAX_PHASES filters
// are refused (`canResample`), and the caller decodes through ffmpeg instead.

/** The filter's shape; the defaults suit analysis (voice activity, features), not listening. */
export interface ResamplerShape {
  /** Zero crossings of the sinc on each side of a tap's centre, in periods of the lower rate. */
  readonly zeroCrossings: number;
  /** The pass band's edge as a fraction of the lower rate's Nyquist frequency. */
  readonly cutoff: number;
}

const FOR_ANALYSIS: ResamplerShape = { zeroCrossings: 8, cutoff: 0.92 };
const KAISER_BETA = 8;
const MAX_PHASES = 1024;

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

/** I0, the modified Bessel function of the first kind (its series converges fast for these arguments). */
function besselI0(x: number): number {
  let sum = 1;
  let term = 1;
  for (let k = 1; k < 50; k++) {
    term *= (x / (2 * k)) ** 2;
    sum += term;
    if (term < sum * 1e-12) break;
  }
  return sum;
}

export function canResample(fromRate: number, toRate: number): boolean {
  if (!Number.isInteger(fromRate) || !Number.isInteger(toRate) || fromRate <= 0 || toRate <= 0) return false;
  return toRate / gcd(fromRate, toRate) <= MAX_PHASES;
}

export class Resampler {
  /** Input samples per output sample, as a ratio of integers: `up` phases, `down` input steps. */
  private readonly up: number;
  private readonly down: number;
  /** Taps on each side of an output's position (input samples). */
  private readonly half: number;
  /** `up` filters of 2 * half taps; filter p serves outputs whose position is p / up past an input. */
  private readonly bank: Float32Array;
  private history = new Float32Array(0);
  /** Global index of history[0]. */
  private historyStart = 0;
  private received = 0;
  private produced = 0;

  constructor(
    readonly fromRate: number,
    readonly toRate: number,
    shape: ResamplerShape = FOR_ANALYSIS,
  ) {
    if (!canResample(fromRate, toRate))
      throw new RangeError(`cannot resample ${fromRate} Hz to ${toRate} Hz`);
    const g = gcd(fromRate, toRate);
    this.up = toRate / g;
    this.down = fromRate / g;
    // Cut-off in cycles per input sample, below both rates' Nyquist frequencies.
    const fc = (shape.cutoff * Math.min(fromRate, toRate)) / (2 * fromRate);
    this.half = Math.ceil(shape.zeroCrossings / (2 * fc));
    const taps = 2 * this.half;
    this.bank = new Float32Array(this.up * taps);
    const i0Beta = besselI0(KAISER_BETA);
    for (let p = 0; p < this.up; p++) {
      const frac = p / this.up;
      let sum = 0;
      for (let j = 0; j < taps; j++) {
        // Tap j reads input (base - half + 1 + j); d is the output's distance from it.
        const d = frac + this.half - 1 - j;
        const x = 2 * fc * d;
        const sinc = x === 0 ? 1 : Math.sin(Math.PI * x) / (Math.PI * x);
        const r = d / this.half;
        const w = Math.abs(r) >= 1 ? 0 : besselI0(KAISER_BETA * Math.sqrt(1 - r * r)) / i0Beta;
        const v = sinc * w;
        this.bank[p * taps + j] = v;
        sum += v;
      }
      // Unity gain at DC for every phase.
      for (let j = 0; j < taps; j++) this.bank[p * taps + j] /= sum;
    }
  }

  /** The output samples that `samples` (the next input) completes. */
  push(samples: Float32Array): Float32Array {
    const joined = new Float32Array(this.history.length + samples.length);
    joined.set(this.history);
    joined.set(samples, this.history.length);
    this.history = joined;
    this.received += samples.length;
    return this.drain(this.received);
  }

  /** The rest of the output, reading silence past the input's end. */
  finish(): Float32Array {
    // As many as ffmpeg gives for the same input (the nearest whole number).
    const total = Math.round((this.received * this.up) / this.down);
    const out = this.drain(Number.POSITIVE_INFINITY, total);
    this.history = new Float32Array(0);
    return out;
  }

  private drain(available: number, limit = Number.POSITIVE_INFINITY): Float32Array {
    const taps = 2 * this.half;
    const h = this.history;
    const bank = this.bank;
    // Outputs n with floor(n * down / up) + half < available, up to `limit`.
    const ready = Math.min(limit, Math.ceil(((available - this.half) * this.up) / this.down));
    const out = new Float32Array(Math.max(0, ready - this.produced));
    for (let k = 0; k < out.length; k++) {
      const pos = (this.produced + k) * this.down;
      const base = Math.floor(pos / this.up);
      const f = (pos - base * this.up) * taps;
      const first = base - this.half + 1 - this.historyStart;
      let acc = 0;
      if (first >= 0 && first + taps <= h.length) {
        for (let j = 0; j < taps; j++) acc += h[first + j] * bank[f + j];
      } else {
        // At either end: silence outside the input.
        for (let j = 0; j < taps; j++) {
          const i = first + j;
          if (i >= 0 && i < h.length) acc += h[i] * bank[f + j];
        }
      }
      out[k] = acc;
    }
    this.produced += out.length;
    // Keep only what later outputs can still read.
    const nextBase = Math.floor((this.produced * this.down) / this.up);
    const keepFrom = nextBase - this.half + 1 - this.historyStart;
    if (keepFrom > 0 && keepFrom <= h.length) {
      this.history = h.slice(keepFrom);
      this.historyStart += keepFrom;
    }
    return out;
  }
}
