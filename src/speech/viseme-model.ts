// Audio -> visemes with a small learned model: cherry-lip-sync's classifier (nwhitehead/cherry-lip-sync,
// MIT/Apache-2.0), an ONNX graph `input` 1xTx26 -> `output` 1xTx12 logits at 100 frames a second.
//
// The features are rebuilt here to match the ones the model was trained on (training/src/data.py
// `AudioMFCC`, and the Rust port in src/input_pipeline.rs that reproduces them):
//   16 kHz mono samples in -1..1; frames of 400 samples (25 ms) every 160 (10 ms), no centring
//   padding (frame j starts at sample 160 j); a periodic Hann window; a 400-point DFT, power |X|^2 of
//   the 201 bins; 13 triangular mel filters (HTK mel scale, 0..8000 Hz, unnormalised: torchaudio's
//   `melscale_fbanks` defaults); 10 log10(max(power, 1e-10)) (no reference, no top_db); then for each
//   band a smoothed slope over the frames, 0.5 (x[t] + x[t+1] - x[t-1] - x[t-2]) with the bands taken
//   as 0 outside the clip. 13 log-mel values + 13 slopes = 26. No mean/variance normalisation: the
//   model's first layer is a BatchNorm with its own statistics.
// The network (BatchNorm, two unidirectional GRUs of 80, a linear layer to 12) is causal and was
// trained with a 3-frame lookahead: its output at frame t + 3 is the viseme at frame t (time 10 t ms).
// Here the output is shifted back so that row t is the viseme at t * 10 ms; the rows of the clip's last
// ~50 ms (a window and the lookahead past the last prediction) repeat the last prediction.
// The GRU state starts at zero and the graph has no state input, so a long clip runs in chunks with a
// few seconds of warm-up audio before each (outputs there are dropped): the recurrence forgets its
// start within a few hundred milliseconds, and chunked results match a single pass to rounding.
import { stat } from 'node:fs/promises';
import ort from 'onnxruntime-node';

/** The sample rate the model's features assume; other rates are resampled (band-limited) first. */
export const VISEME_SAMPLE_RATE = 16000;
export const VISEME_FRAME_MS = 10;
/** Output frames the model looks ahead: its output at frame t + 3 describes frame t. */
export const VISEME_LOOKAHEAD_FRAMES = 3;
export const VISEME_MELS = 13;
export const VISEME_FEATURES = 2 * VISEME_MELS;

const WINDOW = 400;
const HOP = 160;
const BINS = WINDOW / 2 + 1;
const LOG_FLOOR = 1e-10;

/** A mouth shape in the engine's terms (see src/engines/cpu/phoneme-mouth.ts). */
export interface MouthShape {
  /** Jaw opening, 0..1 (1 = "aa"). */
  open: number;
  /** -1 narrow/rounded .. +1 spread ("ee"). */
  width: number;
  /** Lip rounding, 0..1. */
  round: number;
  /** Lips shut (p, b, m). */
  closed: boolean;
}

export interface VisemeClass {
  /** cherry-lip-sync's output letter (Rhubarb-like: A..K, X). */
  label: string;
  /** The name the model was trained with (Adobe Character Animator's visemes). */
  name: string;
  sounds: string;
  shape: MouthShape;
}

const cls = (
  label: string,
  name: string,
  sounds: string,
  open: number,
  width: number,
  round: number,
  closed = false,
): VisemeClass => ({ label, name, sounds, shape: { open, width, round, closed } });

/** The 12 output classes, in the model's output order. */
export const VISEME_CLASSES: readonly VisemeClass[] = [
  cls('D', 'Ah', 'wide open: aa, ah, ay', 1.0, 0.05, 0),
  cls('B', 'D', 'slightly open, teeth together: d, t, k, n, g', 0.2, 0.15, 0),
  cls('I', 'Ee', 'wide, teeth showing: iy, ih, ey', 0.3, 1.0, 0),
  cls('G', 'F', 'lower lip on the upper teeth: f, v', 0.08, 0.3, 0),
  cls('H', 'L', 'tongue on the upper teeth: l', 0.4, 0.1, 0),
  cls('A', 'M', 'lips shut: p, b, m', 0, 0, 0, true),
  cls('X', 'Neutral', 'rest (silence)', 0, 0, 0),
  cls('E', 'Oh', 'rounded open: ow, ao', 0.6, -0.6, 0.75),
  cls('K', 'R', 'rounded, teeth together: r', 0.25, -0.3, 0.4),
  cls('J', 'S', 'teeth together: s, z, sh, ch, jh', 0.15, -0.1, 0.3),
  cls('C', 'Uh', 'open: eh, ah, ae', 0.6, 0.3, 0),
  cls('F', 'Woo', 'puckered: w, uw, uh', 0.2, -1.0, 1.0),
];
/** Output letters in the model's order. */
export const VISEME_LABELS: readonly string[] = VISEME_CLASSES.map((c) => c.label);
export const VISEME_CLOSED_CLASS = VISEME_CLASSES.findIndex((c) => c.shape.closed);
export const VISEME_REST_CLASS = VISEME_CLASSES.findIndex((c) => c.name === 'Neutral');
const CLASSES = VISEME_CLASSES.length;

// ---------------------------------------------------------------------------------------------------
// Features

/** Mixed-radix complex FFT of one fixed size (here 200 = 4 * 2 * 5 * 5), decimation in time. */
class Fft {
  private readonly factors: number[] = [];
  /** Per level: the twiddles W_n^(j k) (j < r, k < m) as [re, im] pairs, k-major. */
  private readonly twiddles: Float64Array[] = [];
  /** Per level: the r-point DFT matrix W_r^(j s) as [re, im] pairs. */
  private readonly roots: Float64Array[] = [];
  private readonly tmp: Float64Array;

  constructor(readonly n: number) {
    let m = n;
    for (let f = 4; m > 1;) {
      if (m % f === 0) {
        this.factors.push(f);
        m /= f;
      } else f = f === 4 ? 2 : f === 2 ? 3 : f + 2;
    }
    let size = n;
    for (const r of this.factors) {
      const sub = size / r;
      const tw = new Float64Array(2 * size);
      for (let k = 0; k < sub; k++) {
        for (let j = 0; j < r; j++) {
          const a = (-2 * Math.PI * j * k) / size;
          tw[2 * (k * r + j)] = Math.cos(a);
          tw[2 * (k * r + j) + 1] = Math.sin(a);
        }
      }
      const w = new Float64Array(2 * r * r);
      for (let s = 0; s < r; s++) {
        for (let j = 0; j < r; j++) {
          const a = (-2 * Math.PI * ((j * s) % r)) / r;
          w[2 * (s * r + j)] = Math.cos(a);
          w[2 * (s * r + j) + 1] = Math.sin(a);
        }
      }
      this.twiddles.push(tw);
      this.roots.push(w);
      size = sub;
    }
    this.tmp = new Float64Array(2 * Math.max(1, ...this.factors));
  }

  /** X = DFT(x) (e^{-2 pi i k n / N}); `inRe`/`inIm` are read, `outRe`/`outIm` written. */
  transform(inRe: Float64Array, inIm: Float64Array, outRe: Float64Array, outIm: Float64Array): void {
    this.step(inRe, inIm, 0, 1, outRe, outIm, 0, this.n, 0);
  }

  private step(
    inRe: Float64Array,
    inIm: Float64Array,
    inOff: number,
    stride: number,
    outRe: Float64Array,
    outIm: Float64Array,
    outOff: number,
    n: number,
    level: number,
  ): void {
    if (n === 1) {
      outRe[outOff] = inRe[inOff];
      outIm[outOff] = inIm[inOff];
      return;
    }
    const r = this.factors[level];
    const m = n / r;
    // Sub-transforms of the r interleaved subsequences, stored one after the other.
    for (let j = 0; j < r; j++) {
      this.step(inRe, inIm, inOff + j * stride, stride * r, outRe, outIm, outOff + j * m, m, level + 1);
    }
    const tw = this.twiddles[level];
    const w = this.roots[level];
    const t = this.tmp;
    for (let k = 0; k < m; k++) {
      // Twiddled inputs of this butterfly, then an r-point DFT of them.
      for (let j = 0; j < r; j++) {
        const xr = outRe[outOff + j * m + k];
        const xi = outIm[outOff + j * m + k];
        const c = tw[2 * (k * r + j)];
        const d = tw[2 * (k * r + j) + 1];
        t[2 * j] = xr * c - xi * d;
        t[2 * j + 1] = xr * d + xi * c;
      }
      const o = outOff + k;
      if (r === 4) {
        const ar = t[0] + t[4];
        const ai = t[1] + t[5];
        const br = t[0] - t[4];
        const bi = t[1] - t[5];
        const cr = t[2] + t[6];
        const ci = t[3] + t[7];
        const dr = t[2] - t[6];
        const di = t[3] - t[7];
        outRe[o] = ar + cr;
        outIm[o] = ai + ci;
        outRe[o + m] = br + di; // (t0 - t2) - i (t1 - t3)
        outIm[o + m] = bi - dr;
        outRe[o + 2 * m] = ar - cr;
        outIm[o + 2 * m] = ai - ci;
        outRe[o + 3 * m] = br - di;
        outIm[o + 3 * m] = bi + dr;
      } else if (r === 2) {
        outRe[o] = t[0] + t[2];
        outIm[o] = t[1] + t[3];
        outRe[o + m] = t[0] - t[2];
        outIm[o + m] = t[1] - t[3];
      } else if (r === 5) {
        const s1r = t[2] + t[8];
        const s1i = t[3] + t[9];
        const d1r = t[2] - t[8];
        const d1i = t[3] - t[9];
        const s2r = t[4] + t[6];
        const s2i = t[5] + t[7];
        const d2r = t[4] - t[6];
        const d2i = t[5] - t[7];
        const a1r = t[0] + C5_1 * s1r + C5_2 * s2r;
        const a1i = t[1] + C5_1 * s1i + C5_2 * s2i;
        const a2r = t[0] + C5_2 * s1r + C5_1 * s2r;
        const a2i = t[1] + C5_2 * s1i + C5_1 * s2i;
        const b1r = S5_1 * d1r + S5_2 * d2r;
        const b1i = S5_1 * d1i + S5_2 * d2i;
        const b2r = S5_2 * d1r - S5_1 * d2r;
        const b2i = S5_2 * d1i - S5_1 * d2i;
        outRe[o] = t[0] + s1r + s2r;
        outIm[o] = t[1] + s1i + s2i;
        outRe[o + m] = a1r + b1i; // a1 - i b1
        outIm[o + m] = a1i - b1r;
        outRe[o + 2 * m] = a2r + b2i;
        outIm[o + 2 * m] = a2i - b2r;
        outRe[o + 3 * m] = a2r - b2i;
        outIm[o + 3 * m] = a2i + b2r;
        outRe[o + 4 * m] = a1r - b1i;
        outIm[o + 4 * m] = a1i + b1r;
      } else {
        for (let q = 0; q < r; q++) {
          let re = 0;
          let im = 0;
          for (let j = 0; j < r; j++) {
            const c = w[2 * (q * r + j)];
            const d = w[2 * (q * r + j) + 1];
            re += t[2 * j] * c - t[2 * j + 1] * d;
            im += t[2 * j] * d + t[2 * j + 1] * c;
          }
          outRe[o + q * m] = re;
          outIm[o + q * m] = im;
        }
      }
    }
  }
}

const C5_1 = Math.cos((2 * Math.PI) / 5);
const C5_2 = Math.cos((4 * Math.PI) / 5);
const S5_1 = Math.sin((2 * Math.PI) / 5);
const S5_2 = Math.sin((4 * Math.PI) / 5);

/** |X[k]|^2, k = 0..n/2, of a real frame of even length n, through one complex FFT of length n/2. */
class RealPower {
  private readonly half: number;
  private readonly fft: Fft;
  private readonly zr: Float64Array;
  private readonly zi: Float64Array;
  private readonly fr: Float64Array;
  private readonly fi: Float64Array;
  private readonly wr: Float64Array;
  private readonly wi: Float64Array;

  constructor(readonly n: number) {
    this.half = n / 2;
    this.fft = new Fft(this.half);
    this.zr = new Float64Array(this.half);
    this.zi = new Float64Array(this.half);
    this.fr = new Float64Array(this.half);
    this.fi = new Float64Array(this.half);
    this.wr = new Float64Array(this.half + 1);
    this.wi = new Float64Array(this.half + 1);
    for (let k = 0; k <= this.half; k++) {
      this.wr[k] = Math.cos((-2 * Math.PI * k) / n);
      this.wi[k] = Math.sin((-2 * Math.PI * k) / n);
    }
  }

  power(frame: Float64Array, out: Float64Array): void {
    const h = this.half;
    for (let i = 0; i < h; i++) {
      this.zr[i] = frame[2 * i];
      this.zi[i] = frame[2 * i + 1];
    }
    this.fft.transform(this.zr, this.zi, this.fr, this.fi);
    const fr = this.fr;
    const fi = this.fi;
    for (let k = 0; k <= h; k++) {
      const a = k % h;
      const b = (h - k) % h;
      // Even and odd samples' spectra from Z[k] and conj(Z[h - k]).
      const er = 0.5 * (fr[a] + fr[b]);
      const ei = 0.5 * (fi[a] - fi[b]);
      const or = 0.5 * (fi[a] + fi[b]);
      const oi = -0.5 * (fr[a] - fr[b]);
      const xr = er + this.wr[k] * or - this.wi[k] * oi;
      const xi = ei + this.wr[k] * oi + this.wi[k] * or;
      out[k] = xr * xr + xi * xi;
    }
  }
}

const hzToMel = (hz: number): number => 2595 * Math.log10(1 + hz / 700);
const melToHz = (mel: number): number => 700 * (10 ** (mel / 2595) - 1);

/**
 * The mel filterbank, BINS x MELS (row-major by bin): triangles on the HTK mel scale between 0 Hz and
 * the Nyquist frequency, peak 1, no area normalisation.
 */
export function visemeMelFilterbank(sampleRate = VISEME_SAMPLE_RATE): Float64Array {
  const fb = new Float64Array(BINS * VISEME_MELS);
  const top = hzToMel(sampleRate / 2);
  const pts: number[] = [];
  for (let i = 0; i < VISEME_MELS + 2; i++) pts.push(melToHz((top * i) / (VISEME_MELS + 1)));
  for (let b = 0; b < BINS; b++) {
    const f = ((sampleRate / 2) * b) / (BINS - 1);
    for (let m = 0; m < VISEME_MELS; m++) {
      const down = (f - pts[m]) / (pts[m + 1] - pts[m]);
      const up = (pts[m + 2] - f) / (pts[m + 2] - pts[m + 1]);
      fb[b * VISEME_MELS + m] = Math.max(0, Math.min(down, up));
    }
  }
  return fb;
}

let tables: { fft: RealPower; hann: Float64Array; fb: Float64Array } | null = null;
function featureTables(): { fft: RealPower; hann: Float64Array; fb: Float64Array } {
  if (!tables) {
    const hann = new Float64Array(WINDOW);
    for (let i = 0; i < WINDOW; i++) hann[i] = Math.sin((Math.PI * i) / WINDOW) ** 2; // periodic
    tables = { fft: new RealPower(WINDOW), hann, fb: visemeMelFilterbank() };
  }
  return tables;
}

/** Feature frames for `n` samples at 16 kHz: full windows only (at least one, zero-padded). */
export function visemeFrameCount(n: number): number {
  return n < WINDOW ? 1 : Math.floor((n - WINDOW) / HOP) + 1;
}

/** The model's input for 16 kHz mono samples: frames x 26 (13 log-mel dB, then their 13 slopes). */
export function visemeFeatures(samples: Float32Array): Float32Array {
  const { fft, hann, fb } = featureTables();
  const frames = visemeFrameCount(samples.length);
  const mel = new Float64Array(frames * VISEME_MELS);
  const frame = new Float64Array(WINDOW);
  const power = new Float64Array(BINS);
  for (let t = 0; t < frames; t++) {
    const start = t * HOP;
    for (let i = 0; i < WINDOW; i++) {
      const k = start + i;
      frame[i] = k < samples.length ? samples[k] * hann[i] : 0;
    }
    fft.power(frame, power);
    for (let m = 0; m < VISEME_MELS; m++) {
      let s = 0;
      for (let b = 0; b < BINS; b++) s += power[b] * fb[b * VISEME_MELS + m];
      mel[t * VISEME_MELS + m] = 10 * Math.log10(Math.max(s, LOG_FLOOR));
    }
  }
  const out = new Float32Array(frames * VISEME_FEATURES);
  const at = (t: number, m: number): number => (t >= 0 && t < frames ? mel[t * VISEME_MELS + m] : 0);
  for (let t = 0; t < frames; t++) {
    for (let m = 0; m < VISEME_MELS; m++) {
      out[t * VISEME_FEATURES + m] = mel[t * VISEME_MELS + m];
      out[t * VISEME_FEATURES + VISEME_MELS + m] =
        0.5 * (at(t, m) + at(t + 1, m) - at(t - 1, m) - at(t - 2, m));
    }
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Resampling

function gcd(a: number, b: number): number {
  while (b) [a, b] = [b, a % b];
  return a;
}

/** Zero crossings of the windowed sinc on each side (at the lower of the two rates). */
const SINC_ZEROS = 16;

/**
 * Band-limited resampling between integer rates: a Blackman-windowed sinc per output sample, the
 * cut-off a little under the lower Nyquist frequency; the per-phase kernels are built once each.
 */
export function resample(samples: Float32Array, fromRate: number, toRate: number): Float32Array {
  if (!Number.isInteger(fromRate) || !Number.isInteger(toRate) || fromRate <= 0 || toRate <= 0)
    throw new Error(`cannot resample from ${fromRate} Hz to ${toRate} Hz`);
  if (fromRate === toRate) return samples;
  const g = gcd(fromRate, toRate);
  const up = toRate / g; // output n sits at input position n * down / up
  const down = fromRate / g;
  const fc = 0.97 * Math.min(1, toRate / fromRate); // cut-off, as a fraction of the input Nyquist
  const half = Math.ceil(SINC_ZEROS / fc);
  const taps = 2 * half;
  const kernels: (Float64Array | undefined)[] = [];
  const kernel = (phase: number): Float64Array => {
    let k = kernels[phase];
    if (k) return k;
    k = new Float64Array(taps);
    const frac = phase / up;
    let sum = 0;
    for (let j = 0; j < taps; j++) {
      const x = j - half + 1 - frac; // input offset from the output position
      const a = Math.PI * fc * x;
      const sinc = x === 0 ? 1 : Math.sin(a) / a;
      const w = 0.42 + 0.5 * Math.cos((Math.PI * x) / half) + 0.08 * Math.cos((2 * Math.PI * x) / half);
      k[j] = Math.abs(x) >= half ? 0 : sinc * w;
      sum += k[j];
    }
    for (let j = 0; j < taps; j++) k[j] /= sum;
    kernels[phase] = k;
    return k;
  };
  const outLen = Math.round((samples.length * up) / down);
  const out = new Float32Array(outLen);
  const n = samples.length;
  for (let i = 0; i < outLen; i++) {
    const pos = i * down;
    const base = Math.floor(pos / up);
    const k = kernel(pos - base * up);
    const first = base - half + 1;
    let s = 0;
    if (first >= 0 && first + taps <= n) {
      for (let j = 0; j < taps; j++) s += samples[first + j] * k[j];
    } else {
      for (let j = 0; j < taps; j++) {
        const idx = first + j;
        if (idx >= 0 && idx < n) s += samples[idx] * k[j];
      }
    }
    out[i] = s;
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// The model

export interface VisemeResult {
  frameMs: 10;
  /** Class letters, in the order of the probabilities' columns (VISEME_LABELS). */
  classes: readonly string[];
  /** frames x 12 softmax probabilities; row t is the viseme at t * 10 ms. */
  probabilities: Float32Array;
  /** Rows: ceil(audio length / 10 ms), at least 1. */
  frames: number;
  /** Which model (`articulation-v1`, `cherry`), as the quality report names it. */
  model?: string;
}

/**
 * How sure the model was over [startMs, endMs): the mean over its rows of the most likely class's
 * probability (0..1, two decimals); 0 where the rows do not reach.
 */
export function visemeConfidence(result: VisemeResult, startMs: number, endMs: number): number {
  const a = Math.max(0, Math.floor(startMs / result.frameMs));
  const b = Math.min(result.frames, Math.ceil(endMs / result.frameMs));
  if (b <= a) return 0;
  let sum = 0;
  for (let r = a; r < b; r++) {
    let best = 0;
    for (let c = 0; c < CLASSES; c++) best = Math.max(best, result.probabilities[r * CLASSES + c]);
    sum += best;
  }
  return Math.round((sum / (b - a)) * 100) / 100;
}

export interface VisemeRunOptions {
  /** Longest model call, in feature frames (default 6000 = 60 s). */
  chunkFrames?: number;
  /** Frames of audio run before each later chunk to settle the recurrent state (default 300 = 3 s). */
  warmupFrames?: number;
}

export interface VisemeModel {
  readonly path: string;
  run(
    samples: Float32Array,
    sampleRate: number,
    signal?: AbortSignal,
    opts?: VisemeRunOptions,
  ): Promise<VisemeResult>;
}

class OnnxVisemeModel implements VisemeModel {
  constructor(
    readonly path: string,
    private readonly session: ort.InferenceSession,
  ) {}

  private async logits(features: Float32Array, from: number, to: number): Promise<Float32Array> {
    const t = to - from;
    const input = new ort.Tensor('float32', features.subarray(from * VISEME_FEATURES, to * VISEME_FEATURES), [
      1,
      t,
      VISEME_FEATURES,
    ]);
    const res = await this.session.run({ input });
    const out = res.output;
    try {
      if (out.dims.length !== 3 || out.dims[1] !== t || out.dims[2] !== CLASSES)
        throw new Error(`viseme model ${this.path}: unexpected output shape [${out.dims.join(', ')}]`);
      return out.data as Float32Array;
    } finally {
      input.dispose();
    }
  }

  async run(
    samples: Float32Array,
    sampleRate: number,
    signal?: AbortSignal,
    opts: VisemeRunOptions = {},
  ): Promise<VisemeResult> {
    signal?.throwIfAborted();
    const audio = resample(samples, sampleRate, VISEME_SAMPLE_RATE);
    const features = visemeFeatures(audio);
    const total = visemeFrameCount(audio.length);
    const rows = Math.max(1, Math.ceil(audio.length / HOP));
    const chunk = Math.max(50, Math.floor(opts.chunkFrames ?? 6000));
    const warm = Math.max(0, Math.floor(opts.warmupFrames ?? 300));
    const la = VISEME_LOOKAHEAD_FRAMES;
    // Raw model outputs for every feature frame (in chunks with warm-up), then shift by the lookahead.
    const raw = new Float32Array(total * CLASSES);
    for (let start = 0; start < total; start += chunk) {
      signal?.throwIfAborted();
      const end = Math.min(total, start + chunk);
      const from = Math.max(0, start - warm);
      const out = await this.logits(features, from, end);
      raw.set(out.subarray((start - from) * CLASSES), start * CLASSES);
    }
    signal?.throwIfAborted();
    const probabilities = new Float32Array(rows * CLASSES);
    const aligned = Math.max(1, total - la); // rows with a prediction of their own
    for (let r = 0; r < rows; r++) {
      const src = Math.min(r, aligned - 1) + (total > la ? la : total - 1);
      let max = -Infinity;
      for (let c = 0; c < CLASSES; c++) max = Math.max(max, raw[src * CLASSES + c]);
      let sum = 0;
      for (let c = 0; c < CLASSES; c++) {
        const e = Math.exp(raw[src * CLASSES + c] - max);
        probabilities[r * CLASSES + c] = e;
        sum += e;
      }
      for (let c = 0; c < CLASSES; c++) probabilities[r * CLASSES + c] /= sum;
    }
    return { frameMs: 10, classes: VISEME_LABELS, probabilities, frames: rows };
  }
}

const loaded = new Map<string, Promise<VisemeModel>>();

async function load(path: string): Promise<VisemeModel> {
  try {
    const st = await stat(path);
    if (!st.isFile()) throw new Error('not a file');
  } catch (err) {
    throw new Error(`viseme model not found: ${path} (${(err as Error).message})`);
  }
  let session: ort.InferenceSession;
  try {
    session = await ort.InferenceSession.create(path, {
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      graphOptimizationLevel: 'all',
    });
  } catch (err) {
    throw new Error(`viseme model ${path} could not be loaded: ${(err as Error).message}`);
  }
  if (!session.inputNames.includes('input') || !session.outputNames.includes('output')) {
    await session.release();
    throw new Error(
      `viseme model ${path} has no 'input' -> 'output' (it has ${session.inputNames.join(', ')})`,
    );
  }
  const meta = session.inputMetadata.find((m) => m.name === 'input');
  const dims = meta && meta.isTensor ? meta.shape : [];
  if (dims.length !== 3 || dims[2] !== VISEME_FEATURES) {
    await session.release();
    throw new Error(`viseme model ${path}: input is not 1 x T x ${VISEME_FEATURES}`);
  }
  return new OnnxVisemeModel(path, session);
}

/** The model at `onnxPath`, loaded once per path. A missing or unreadable file rejects (and is not cached). */
export function loadVisemeModel(onnxPath: string): Promise<VisemeModel> {
  let p = loaded.get(onnxPath);
  if (!p) {
    p = load(onnxPath);
    loaded.set(onnxPath, p);
    p.catch(() => loaded.delete(onnxPath));
  }
  return p;
}

// ---------------------------------------------------------------------------------------------------
// Per video frame

export interface VisemeTrack {
  open: Float32Array;
  width: Float32Array;
  round: Float32Array;
  /** Probability of the lips-shut class (A: p, b, m). */
  closed: Float32Array;
  /** The most likely class's probability (0 where the audio does not reach). */
  confidence: Float32Array;
}

/**
 * Mouth shapes per video frame (frame t spans [t, t + 1) / fps): the probability-weighted class
 * shapes, averaged over the 10 ms rows the frame overlaps (weighted by the overlap). Frames past the
 * audio are at rest with confidence 0.
 */
export function visemeTrack(result: VisemeResult, fps: number, frames: number): VisemeTrack {
  const n = Math.max(0, Math.floor(frames));
  const track: VisemeTrack = {
    open: new Float32Array(n),
    width: new Float32Array(n),
    round: new Float32Array(n),
    closed: new Float32Array(n),
    confidence: new Float32Array(n),
  };
  if (!(fps > 0)) throw new Error(`bad frame rate ${fps}`);
  const rows = result.frames;
  const p = result.probabilities;
  const frameMs = 1000 / fps;
  const rowMs = result.frameMs;
  for (let t = 0; t < n; t++) {
    const a = t * frameMs;
    const b = a + frameMs;
    let wsum = 0;
    let open = 0;
    let width = 0;
    let round = 0;
    let closed = 0;
    let conf = 0;
    for (let r = Math.floor(a / rowMs); r < rows && r * rowMs < b; r++) {
      const w = Math.min(b, (r + 1) * rowMs) - Math.max(a, r * rowMs);
      if (w <= 0) continue;
      let best = 0;
      for (let c = 0; c < CLASSES; c++) {
        const q = p[r * CLASSES + c];
        const s = VISEME_CLASSES[c].shape;
        open += w * q * s.open;
        width += w * q * s.width;
        round += w * q * s.round;
        if (q > best) best = q;
      }
      closed += w * p[r * CLASSES + VISEME_CLOSED_CLASS];
      conf += w * best;
      wsum += w;
    }
    if (wsum > 0) {
      track.open[t] = open / wsum;
      track.width[t] = width / wsum;
      track.round[t] = round / wsum;
      track.closed[t] = closed / wsum;
      track.confidence[t] = conf / wsum;
    }
  }
  return track;
}
