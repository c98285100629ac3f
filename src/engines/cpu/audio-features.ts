// Signal features of a soundtrack, per video frame: loudness (RMS in dBFS), the levels of three bands
// (voicing / first formant, second formant, fricatives) and the spectral centroid. The audio is read as
// a stream (10 ms analysis hops over a ~16 kHz copy); only the per-hop numbers are kept, so memory
// grows by a few bytes per 10 ms whatever the length.
import { readWavInfo, readWavMono } from '../../media/wav.js';

export interface AudioFeatures {
  fps: number;
  frames: number;
  /** Loudness per video frame, dBFS (RMS); -100 for digital silence. */
  db: Float32Array;
  /** Band levels per video frame, dB: 80-900 Hz, 900-2500 Hz, 2500-8000 Hz. */
  low: Float32Array;
  mid: Float32Array;
  high: Float32Array;
  /** Spectral centroid over 80-4000 Hz, Hz. */
  centroid: Float32Array;
  /** Loudness per 10 ms hop (for clip-level statistics). */
  hopDb: Float32Array;
}

export const HOP_SECONDS = 0.01;
const FLOOR_DB = -100;

class GrowArray {
  private data = new Float32Array(1024);
  length = 0;
  push(v: number): void {
    if (this.length === this.data.length) {
      const next = new Float32Array(this.data.length * 2);
      next.set(this.data);
      this.data = next;
    }
    this.data[this.length++] = v;
  }
  toArray(): Float32Array {
    return this.data.slice(0, this.length);
  }
}

/** In-place radix-2 FFT of (re, im), length a power of two. */
export class Fft {
  private readonly rev: Uint32Array;
  private readonly cos: Float64Array;
  private readonly sin: Float64Array;
  constructor(readonly n: number) {
    if (n < 2 || (n & (n - 1)) !== 0) throw new RangeError('FFT size must be a power of two');
    const bits = Math.log2(n);
    this.rev = new Uint32Array(n);
    for (let i = 0; i < n; i++) {
      let r = 0;
      for (let b = 0; b < bits; b++) r |= ((i >> b) & 1) << (bits - 1 - b);
      this.rev[i] = r;
    }
    this.cos = new Float64Array(n / 2);
    this.sin = new Float64Array(n / 2);
    for (let i = 0; i < n / 2; i++) {
      this.cos[i] = Math.cos((2 * Math.PI * i) / n);
      this.sin[i] = -Math.sin((2 * Math.PI * i) / n);
    }
  }
  transform(re: Float64Array, im: Float64Array): void {
    const n = this.n;
    for (let i = 0; i < n; i++) {
      const j = this.rev[i];
      if (j > i) {
        let t = re[i];
        re[i] = re[j];
        re[j] = t;
        t = im[i];
        im[i] = im[j];
        im[j] = t;
      }
    }
    for (let size = 2; size <= n; size <<= 1) {
      const half = size >> 1;
      const step = n / size;
      for (let start = 0; start < n; start += size) {
        for (let k = 0; k < half; k++) {
          const wr = this.cos[k * step];
          const wi = this.sin[k * step];
          const a = start + k;
          const b = a + half;
          const xr = re[b] * wr - im[b] * wi;
          const xi = re[b] * wi + im[b] * wr;
          re[b] = re[a] - xr;
          im[b] = im[a] - xi;
          re[a] += xr;
          im[a] += xi;
        }
      }
    }
  }
}

function toDb(power: number): number {
  return power > 1e-10 ? 10 * Math.log10(power) : FLOOR_DB;
}

/** Per-hop features of a mono sample stream at `rate` Hz. */
class HopAnalyser {
  readonly hop: number;
  private readonly n: number;
  private readonly fft: Fft;
  private readonly window: Float64Array;
  private readonly ring: Float64Array;
  private readonly re: Float64Array;
  private readonly im: Float64Array;
  private filled: number;
  private pos: number;
  private sinceHop = 0;
  readonly db = new GrowArray();
  readonly low = new GrowArray();
  readonly mid = new GrowArray();
  readonly high = new GrowArray();
  readonly centroid = new GrowArray();
  private readonly bins: {
    low: [number, number];
    mid: [number, number];
    high: [number, number];
    cent: [number, number];
  };

  constructor(private readonly rate: number) {
    this.hop = Math.max(1, Math.round(rate * HOP_SECONDS));
    let n = 2;
    while (n < rate * 0.025) n <<= 1;
    this.n = n;
    this.fft = new Fft(n);
    this.window = new Float64Array(n);
    for (let i = 0; i < n; i++) this.window[i] = 0.5 - 0.5 * Math.cos((2 * Math.PI * i) / n);
    this.ring = new Float64Array(n);
    this.re = new Float64Array(n);
    this.im = new Float64Array(n);
    // Centre hop k on sample k*hop: start with half a window of silence.
    this.filled = n / 2;
    this.pos = n / 2;
    const bin = (hz: number) => Math.min(n / 2, Math.max(1, Math.round((hz * n) / rate)));
    this.bins = {
      low: [bin(80), bin(900)],
      mid: [bin(900), bin(2500)],
      high: [bin(2500), bin(Math.min(8000, rate / 2))],
      cent: [bin(80), bin(4000)],
    };
  }

  /** Pushes samples; emits one set of features per hop once a window is full. */
  push(samples: Float32Array): void {
    const n = this.n;
    for (let i = 0; i < samples.length; i++) {
      // Circular buffer: `pos` is the oldest sample once the window is full.
      this.ring[this.pos] = samples[i];
      this.pos = (this.pos + 1) % n;
      if (this.filled < n) {
        if (++this.filled === n) this.emit();
      } else if (++this.sinceHop === this.hop) this.emit();
    }
  }

  /** Pads with silence so the last samples get their hops. */
  finish(): void {
    const pad = new Float32Array(this.n / 2);
    this.push(pad);
  }

  private emit(): void {
    this.sinceHop = 0;
    const n = this.n;
    let energy = 0;
    for (let i = 0; i < n; i++) {
      const s = this.ring[(this.pos + i) % n];
      energy += s * s;
      this.re[i] = s * this.window[i];
      this.im[i] = 0;
    }
    this.db.push(toDb(energy / n));
    this.fft.transform(this.re, this.im);
    const band = ([a, b]: [number, number]) => {
      let p = 0;
      for (let k = a; k < b; k++) p += this.re[k] * this.re[k] + this.im[k] * this.im[k];
      return p;
    };
    // Normalise band powers like the RMS (window energy ~ n * 3/8, Parseval n).
    const norm = 1 / (n * n * 0.375);
    this.low.push(toDb(band(this.bins.low) * norm * 2));
    this.mid.push(toDb(band(this.bins.mid) * norm * 2));
    this.high.push(toDb(band(this.bins.high) * norm * 2));
    let num = 0;
    let den = 0;
    for (let k = this.bins.cent[0]; k < this.bins.cent[1]; k++) {
      const p = this.re[k] * this.re[k] + this.im[k] * this.im[k];
      num += p * ((k * this.rate) / n);
      den += p;
    }
    this.centroid.push(den > 1e-12 ? num / den : 0);
  }
}

/** Per-10 ms features: loudness, the three band levels (dB) and the spectral centroid (Hz). */
export interface HopFeatures {
  db: Float32Array;
  low: Float32Array;
  mid: Float32Array;
  high: Float32Array;
  centroid: Float32Array;
}

/** Per-10 ms features of a WAV file (mono mix, decimated to about 16 kHz). */
export async function analyseHops(path: string): Promise<HopFeatures> {
  const info = await readWavInfo(path);
  return hopsOf(readWavMono(path, info), info.sampleRate);
}

/** Per-10 ms features of mono samples at `sampleRate` (decimated to about 16 kHz). */
async function hopsOf(
  blocks: AsyncIterable<Float32Array> | Iterable<Float32Array>,
  sampleRate: number,
): Promise<HopFeatures> {
  const factor = Math.max(1, Math.floor(sampleRate / 16000));
  const analyser = new HopAnalyser(sampleRate / factor);
  let acc = 0;
  let count = 0;
  for await (const block of blocks) {
    const out = new Float32Array(Math.ceil((block.length + count) / factor));
    let o = 0;
    for (let i = 0; i < block.length; i++) {
      acc += block[i];
      if (++count === factor) {
        out[o++] = acc / factor;
        acc = 0;
        count = 0;
      }
    }
    analyser.push(out.subarray(0, o));
  }
  analyser.finish();
  return {
    db: analyser.db.toArray(),
    low: analyser.low.toArray(),
    mid: analyser.mid.toArray(),
    high: analyser.high.toArray(),
    centroid: analyser.centroid.toArray(),
  };
}

/**
 * Runs the analysis once over two seconds of silence at the soundtrack's rate (a worker's warm-up:
 * a job's first analysis took 25-35 ms more than later ones, compiling as it went).
 */
export async function warmAudioAnalysis(): Promise<void> {
  const rate = 48000;
  await hopsOf([new Float32Array(2 * rate)], rate);
}

/** Averages per-hop values over each video frame's span (levels averaged as powers). */
export function hopsToFrames(
  hops: Float32Array,
  fps: number,
  frames: number,
  kind: 'db' | 'linear',
): Float32Array {
  const out = new Float32Array(frames);
  const perHop = 1 / HOP_SECONDS;
  for (let t = 0; t < frames; t++) {
    const a = Math.floor((t / fps) * perHop);
    const b = Math.max(a + 1, Math.floor(((t + 1) / fps) * perHop));
    let s = 0;
    let c = 0;
    for (let k = a; k < b && k < hops.length; k++) {
      s += kind === 'db' ? Math.pow(10, hops[k] / 10) : hops[k];
      c++;
    }
    if (c === 0) out[t] = kind === 'db' ? FLOOR_DB : 0;
    else out[t] = kind === 'db' ? toDb(s / c) : s / c;
  }
  return out;
}

/** All features per video frame. */
export async function analyseAudio(path: string, fps: number, frames: number): Promise<AudioFeatures> {
  const h = await analyseHops(path);
  return {
    fps,
    frames,
    db: hopsToFrames(h.db, fps, frames, 'db'),
    low: hopsToFrames(h.low, fps, frames, 'db'),
    mid: hopsToFrames(h.mid, fps, frames, 'db'),
    high: hopsToFrames(h.high, fps, frames, 'db'),
    centroid: hopsToFrames(h.centroid, fps, frames, 'linear'),
    hopDb: h.db,
  };
}

/** The p-quantile (0..1) of the values above `floor`. */
export function quantile(values: ArrayLike<number>, p: number, floor = -Infinity): number {
  const v: number[] = [];
  for (let i = 0; i < values.length; i++) if (values[i] > floor) v.push(values[i]);
  if (v.length === 0) return floor;
  v.sort((a, b) => a - b);
  const k = Math.min(v.length - 1, Math.max(0, Math.round(p * (v.length - 1))));
  return v[k];
}
