// Audio -> mouth shapes, one set per video frame:
//   open  0..1  how far the lips part (1 = a wide "ah"),
//   width -1..1 spreading (+, "ee") or narrowing (-, "oo") of the mouth corners,
//   round 0..1  lip rounding ("oo", "oh").
// From signal features: loudness above a noise gate set relative to the clip's own speech level drives
// the opening, fricative energy narrows it, the spectral centroid of voiced sound separates rounded
// from spread vowels. Coarticulation: the mouth starts to open a frame ahead of the sound (anticipation)
// and follows with a fast attack and a slower release; in silence it closes, and it shuts briefly for
// the stop closures inside speech (p, b, m, t, d, k), found as short near-silences between sounds. `temperature` (0..1)
// scales expressiveness around the neutral 0.5.
import { quantile, type AudioFeatures } from './audio-features.js';

export interface MouthTrack {
  open: Float32Array;
  width: Float32Array;
  round: Float32Array;
  /** The clip's speech level (dBFS, 90th percentile of active 10 ms hops) and the gate below which the mouth closes. */
  speechLevelDb: number;
  gateDb: number;
  /** False when the audio holds no speech at all (digital silence, hum): the mouth stays closed. */
  hasSpeech: boolean;
}

export interface AudioMouthOptions {
  /** 0..1, default 0.5: expressiveness. */
  temperature?: number;
  /** Opening time constant, ms (default 30). */
  attackMs?: number;
  /** Closing time constant, ms (default 80). */
  releaseMs?: number;
  /** Loudness range (dB) between the gate and the speech level (default 28). */
  rangeDb?: number;
  /**
   * Per-frame speech (0..1) from voice activity detection: outside it the mouth stays closed however
   * loud the background, and the gate sits above the background's own level. Null: loudness decides.
   */
  speech?: Float32Array | null;
}

/** Below this speech level (dBFS) the clip counts as silent. */
const SILENT_CLIP_DB = -55;

function clamp(v: number, lo: number, hi: number): number {
  return v < lo ? lo : v > hi ? hi : v;
}

/** Asymmetric one-pole smoothing: fast towards larger values, slow towards smaller ones. */
export function attackRelease(
  x: Float32Array,
  fps: number,
  attackMs: number,
  releaseMs: number,
): Float32Array {
  const dt = 1000 / fps;
  const up = 1 - Math.exp(-dt / Math.max(1, attackMs));
  const down = 1 - Math.exp(-dt / Math.max(1, releaseMs));
  const y = new Float32Array(x.length);
  let s = 0;
  for (let i = 0; i < x.length; i++) {
    s += (x[i] - s) * (x[i] > s ? up : down);
    y[i] = s;
  }
  return y;
}

/** Zero-lag smoothing: a one-pole filter run forwards and then backwards. */
export function smoothBothWays(x: Float32Array, fps: number, tauMs: number): Float32Array {
  const a = 1 - Math.exp(-1000 / fps / Math.max(1, tauMs));
  const y = Float32Array.from(x);
  for (let i = 1; i < y.length; i++) y[i] = y[i - 1] + a * (y[i] - y[i - 1]);
  for (let i = y.length - 2; i >= 0; i--) y[i] = y[i + 1] + a * (y[i] - y[i + 1]);
  return y;
}

/** Hops (10 ms) either side searched for the speech around a gap. */
const CLOSURE_REACH_HOPS = 15;
/** A gap is this many dB under the speech on both sides (stop closures are near-silent). */
const CLOSURE_DEPTH_DB = 12;
/** Gaps from 30 to 250 ms: shorter is a flutter of the level, longer is a pause (the gate closes those). */
const CLOSURE_MIN_HOPS = 3;
const CLOSURE_MAX_HOPS = 25;

/**
 * Per video frame, how closed the lips must be (0..1) for the stop closures inside speech: the
 * 30-250 ms near-silences between two stretches of speech where the lips (p, b, m) or the tongue
 * (t, d, k) shut the air off. Measured on the 10 ms hops, where such gaps show; the per-frame level
 * and the mouth's release smoothing would blur them into a half-open mouth.
 */
export function stopClosures(hopDb: Float32Array, gateDb: number, fps: number, frames: number): Float32Array {
  const n = hopDb.length;
  const gap = new Uint8Array(n);
  // Running maxima over the reach on each side (O(n * reach), reach is 15).
  for (let i = 0; i < n; i++) {
    let left = -Infinity;
    let right = -Infinity;
    for (let k = 1; k <= CLOSURE_REACH_HOPS; k++) {
      if (i - k >= 0 && hopDb[i - k] > left) left = hopDb[i - k];
      if (i + k < n && hopDb[i + k] > right) right = hopDb[i + k];
    }
    const flank = Math.min(left, right);
    if (flank > gateDb + 6 && flank - hopDb[i] >= CLOSURE_DEPTH_DB) gap[i] = 1;
  }
  // Keep runs of plausible length.
  for (let i = 0; i < n;) {
    if (!gap[i]) {
      i++;
      continue;
    }
    let j = i;
    while (j < n && gap[j]) j++;
    if (j - i < CLOSURE_MIN_HOPS || j - i > CLOSURE_MAX_HOPS) gap.fill(0, i, j);
    i = j;
  }
  const out = new Float32Array(frames);
  const perHop = 100;
  for (let t = 0; t < frames; t++) {
    const a = Math.floor((t / fps) * perHop);
    const b = Math.max(a + 1, Math.floor(((t + 1) / fps) * perHop));
    let c = 0;
    for (let k = a; k < b && k < n; k++) c += gap[k];
    // In proportion to the frame: a stop shorter than the frame only narrows it.
    out[t] = c / (b - a);
  }
  return out;
}

/** The 10 ms hops inside (or outside) speech by a per-frame mask (frames at `fps`). */
export function hopsWhere(hopDb: Float32Array, fps: number, mask: Float32Array, inside: boolean): number[] {
  const out: number[] = [];
  for (let i = 0; i < hopDb.length; i++) {
    const t = Math.floor(((i + 0.5) / 100) * fps);
    const m = t < mask.length ? mask[t] : 0;
    if (inside ? m >= 0.5 : m <= 0) out.push(hopDb[i]);
  }
  return out;
}

/** Level (dB) with a background of `backgroundDb` taken out by power subtraction (-100 when none is left). */
function withoutBackground(db: Float32Array, backgroundDb: number): Float32Array {
  const noise = Math.pow(10, backgroundDb / 10);
  const out = new Float32Array(db.length);
  for (let i = 0; i < db.length; i++) {
    const p = Math.pow(10, db[i] / 10) - noise;
    out[i] = p > 1e-10 ? 10 * Math.log10(p) : -100;
  }
  return out;
}

/**
 * With voice activity known, the background's level is what the pauses hold (music, street noise,
 * room tone); its power is subtracted from every level, so the opening follows the voice rather than
 * voice plus background. Without it (or with a background under -60 dBFS) the levels stay as measured.
 */
function speechLevels(f: AudioFeatures, vad: Float32Array | null): AudioFeatures {
  if (!vad) return f;
  const outside = hopsWhere(f.hopDb, f.fps, vad, false);
  if (outside.length < 20) return f;
  const background = quantile(outside, 0.5, -101);
  if (background < -60) return f;
  return { ...f, db: withoutBackground(f.db, background), hopDb: withoutBackground(f.hopDb, background) };
}

export function mouthFromAudio(measured: AudioFeatures, opts: AudioMouthOptions = {}): MouthTrack {
  const vad = opts.speech ?? null;
  const f = speechLevels(measured, vad);
  const n = f.frames;
  const temperature = clamp(opts.temperature ?? 0.5, 0, 1);
  const gain = 0.6 + 0.8 * temperature;
  const range = opts.rangeDb ?? 28;
  const speech = quantile(vad ? hopsWhere(f.hopDb, f.fps, vad, true) : f.hopDb, 0.9, -90);
  const floor = quantile(f.hopDb, 0.1, -101);
  const gate = Math.max(speech - range, floor + 6);
  // Voice activity decides whether there is speech at all; the level only how far the mouth opens.
  const hasSpeech = vad
    ? vad.some((m) => m > 0.5) && speech > SILENT_CLIP_DB
    : speech > SILENT_CLIP_DB && speech - floor > 10;

  const open = new Float32Array(n);
  const width = new Float32Array(n);
  const round = new Float32Array(n);
  if (!hasSpeech) return { open, width, round, speechLevelDb: speech, gateDb: gate, hasSpeech };

  // Loudness above the gate, 0..1 at the speech level (a little above for shouts).
  const level = new Float32Array(n);
  for (let t = 0; t < n; t++) level[t] = clamp((f.db[t] - gate) / Math.max(6, speech - gate), 0, 1.15);

  // Vowel colour: the second-formant band against the first (high for "ee", low for "oo"), relative
  // to this speaker's own median over voiced frames.
  const tilt = new Float32Array(n);
  for (let t = 0; t < n; t++) tilt[t] = f.mid[t] - f.low[t];
  const voiced: number[] = [];
  for (let t = 0; t < n; t++) if (level[t] > 0.35) voiced.push(tilt[t]);
  const cMid = voiced.length ? quantile(voiced, 0.5) : -10;
  const cSpread = voiced.length > 4 ? Math.max(2, (quantile(voiced, 0.8) - quantile(voiced, 0.2)) / 2) : 5;

  const raw = new Float32Array(n);
  const rawWidth = new Float32Array(n);
  const rawRound = new Float32Array(n);
  for (let t = 0; t < n; t++) {
    const l = level[t];
    // Fricatives (s, f, sh): energy above 2.5 kHz dominates; the teeth stay close together.
    const fric = clamp((f.high[t] - Math.max(f.low[t], f.mid[t]) + 3) / 12, 0, 1);
    raw[t] = l > 0 ? 0.62 * Math.pow(l, 1.3) * (1 - 0.45 * fric) : 0;
    const voicedWeight = clamp((l - 0.2) / 0.4, 0, 1) * (1 - fric);
    const cz = (tilt[t] - cMid) / cSpread;
    rawRound[t] = clamp(-cz * 0.8, 0, 1) * voicedWeight;
    rawWidth[t] = clamp(cz * 0.6, -1, 1) * voicedWeight + 0.3 * fric * clamp(l * 2, 0, 1);
  }

  // Anticipation: the lips move before the sound they make.
  const ahead = new Float32Array(n);
  for (let t = 0; t < n; t++) ahead[t] = Math.max(raw[t], t + 1 < n ? 0.6 * raw[t + 1] : 0);
  const smoothOpen = attackRelease(ahead, f.fps, opts.attackMs ?? 30, opts.releaseMs ?? 80);
  const smoothWidth = smoothBothWays(rawWidth, f.fps, 60);
  const smoothRound = smoothBothWays(rawRound, f.fps, 70);
  // Closures cut through the smoothed opening: the lips shut for the stop and the opening springs
  // back with the release (the smoothing state is untouched, so it reopens at once).
  const closure = stopClosures(f.hopDb, gate, f.fps, n);
  // Not quite shut: for t, d, k the lips stay a little apart.
  for (let t = 0; t < n; t++) {
    const inSpeech = vad ? (t < vad.length ? vad[t] : 0) : 1;
    open[t] = clamp(smoothOpen[t] * gain * (1 - 0.8 * closure[t]) * inSpeech, 0, 1);
    width[t] = clamp(smoothWidth[t] * gain, -1, 1);
    round[t] = clamp(smoothRound[t] * gain, 0, 1);
  }
  return { open, width, round, speechLevelDb: speech, gateDb: gate, hasSpeech };
}
