// The mouth track of a job: loudness-driven shapes (audio-mouth) gated by voice activity, with the
// learned viseme model's lips where one is configured, and where a phoneme timeline can be trusted the
// per-sound shapes (phoneme-mouth), blended span by span so an unrecognized stretch of a recording
// keeps the acoustic shapes and the change-over is not a jump.
import type { TimeSpan } from '../engine.js';
import type { AudioFeatures } from './audio-features.js';
import { quantile } from './audio-features.js';
import { hopsWhere, mouthFromAudio, type MouthTrack } from './audio-mouth.js';
import { ALIGNED_CLOSURE_MS, PHONEME_SHAPE_RANGE, mouthFromPhonemes } from './phoneme-mouth.js';
import type { TimedPhoneme } from '../../speech/types.js';
import {
  VISEME_CLASSES,
  VISEME_CLOSED_CLASS,
  visemeTrack,
  type VisemeResult,
  type VisemeTrack,
} from '../../speech/viseme-model.js';

export interface SpanMaskOptions {
  /** The mask reaches 1 this long before a span starts, ms. */
  leadMs: number;
  /** ... and stays 1 this long after it ends, ms. */
  lagMs: number;
  /** Linear ramp outside that, ms. */
  rampMs: number;
}

/** Per frame (its middle), 0..1: inside a span (widened by lead and lag) 1, ramping to 0 outside. */
export function spanMask(
  spans: readonly TimeSpan[],
  fps: number,
  frames: number,
  opts: SpanMaskOptions,
): Float32Array {
  const mask = new Float32Array(frames);
  const frameMs = 1000 / fps;
  const ramp = Math.max(1, opts.rampMs);
  for (const s of spans) {
    const a = s.startMs - opts.leadMs;
    const b = s.endMs + opts.lagMs;
    const first = Math.max(0, Math.floor((a - ramp) / frameMs));
    const last = Math.min(frames - 1, Math.ceil((b + ramp) / frameMs));
    for (let t = first; t <= last; t++) {
      const c = (t + 0.5) * frameMs;
      const m = Math.min(1, Math.max(0, Math.min((c - (a - ramp)) / ramp, (b + ramp - c) / ramp)));
      if (m > mask[t]) mask[t] = m;
    }
  }
  return mask;
}

/**
 * The mouth opens a little before speech starts (the breath, the lips parting) and closes shortly
 * after it ends; Silero's segments end 90-120 ms late already (its hang-over), so no lag is added.
 */
export const SPEECH_MASK: SpanMaskOptions = { leadMs: 60, lagMs: 0, rampMs: 60 };
/** Phoneme shapes take over over 60 ms around a trusted span (their own lead is inside the blend). */
const PHONEME_MASK: SpanMaskOptions = { leadMs: 60, lagMs: 40, rampMs: 60 };

export interface MouthPlan {
  track: MouthTrack;
  /** True when phoneme shapes drive any frame (the rig then gets PHONEME_SHAPE_RANGE). */
  usesPhonemes: boolean;
  /** Share of the frames with speech that phoneme shapes drive (0..1), null without phonemes. */
  phonemeShare: number | null;
  /** Deliberate lip shapes (phonemes or the viseme model): the rig gets PHONEME_SHAPE_RANGE. */
  wideShapes: boolean;
}

export interface MouthInputs {
  audio: AudioFeatures;
  fps: number;
  frames: number;
  temperature: number;
  phonemes?: readonly TimedPhoneme[] | null;
  phonemeSpans?: readonly TimeSpan[] | null;
  /** Phone times from forced alignment (closures held ALIGNED_CLOSURE_MS). */
  phonemesAligned?: boolean;
  speech?: readonly TimeSpan[] | null;
  visemes?: VisemeResult | null;
}

/** The model's lips-shut probability at which the lips start to close, and fully shut. */
const MODEL_SHUT_FROM = 0.35;
const MODEL_SHUT_AT = 0.65;
/** Model lip shapes are drawn this much stronger than its class mix (as SHAPE_GAIN for phonemes). */
const MODEL_SHAPE_GAIN = 1.2;

/**
 * A peak of the lips-shut probability at least this high is a p, b or m. On held-out voices the
 * probability at p, b, m peaks at 0.2-0.9 (a voiced b often scores as t/d, the other closure class),
 * elsewhere in speech it stays under 0.2 in 96 % of rows (clean).
 */
const MODEL_CLOSURE_PEAK = 0.2;
/** A peak must be the highest within this many ms either side (one closure per bilabial). */
const MODEL_PEAK_RADIUS_MS = 50;
/**
 * ... and this many times the median probability within MODEL_CONTEXT_MS either side: in noise the
 * probability rises everywhere, and peaks that do not stand out were mostly not p, b, m.
 */
const MODEL_PEAK_OVER_MEDIAN = 3;
const MODEL_CONTEXT_MS = 300;
/** The peak comes about this late against the middle of the p, b, m (held-out voices, clean). */
const MODEL_PEAK_LATE_MS = 10;
/** How long a heard closure is held, centred on its peak. */
const MODEL_CLOSURE_MS = 60;

/**
 * Closures the model hears: peaks of its lips-shut probability (smoothed over 30 ms) above
 * MODEL_CLOSURE_PEAK that stand out of their surroundings, each held MODEL_CLOSURE_MS; the
 * per-row probability alone leaves most closures half open.
 */
export function visemeClosures(result: VisemeResult): TimeSpan[] {
  const n = result.frames;
  const k = VISEME_CLASSES.length;
  const p = new Float32Array(n);
  for (let r = 0; r < n; r++) {
    let s = 0;
    let c = 0;
    for (let q = Math.max(0, r - 1); q <= Math.min(n - 1, r + 1); q++) {
      s += result.probabilities[q * k + VISEME_CLOSED_CLASS];
      c++;
    }
    p[r] = s / c;
  }
  const radius = Math.round(MODEL_PEAK_RADIUS_MS / result.frameMs);
  const context = Math.round(MODEL_CONTEXT_MS / result.frameMs);
  const out: TimeSpan[] = [];
  for (let r = 0; r < n; r++) {
    if (p[r] < MODEL_CLOSURE_PEAK) continue;
    let peak = true;
    for (let q = Math.max(0, r - radius); q <= Math.min(n - 1, r + radius) && peak; q++)
      if (p[q] > p[r] || (p[q] === p[r] && q < r)) peak = false;
    if (!peak) continue;
    const around = Array.from(p.subarray(Math.max(0, r - context), Math.min(n, r + context + 1))).sort(
      (a, b) => a - b,
    );
    if (p[r] < MODEL_PEAK_OVER_MEDIAN * around[around.length >> 1]) continue;
    const mid = (r + 0.5) * result.frameMs - MODEL_PEAK_LATE_MS;
    out.push({ startMs: mid - MODEL_CLOSURE_MS / 2, endMs: mid + MODEL_CLOSURE_MS / 2 });
  }
  return out;
}

/**
 * Below this speech-to-background ratio (dB) the peaks are not used: with music 10 dB under the
 * speech half of them were not p, b, m and the sync outside lip sounds dropped 0.04.
 */
const MODEL_PEAKS_MIN_SNR_DB = 20;

/**
 * Speech level (90th percentile of hops in speech) over the pauses' median level (digital silence
 * counted, at -100), dB; null without pauses.
 */
export function speechToBackgroundDb(audio: AudioFeatures, speech: Float32Array): number | null {
  const outside = hopsWhere(audio.hopDb, audio.fps, speech, false);
  if (outside.length < 20) return null;
  return quantile(hopsWhere(audio.hopDb, audio.fps, speech, true), 0.9, -100) - quantile(outside, 0.5);
}

/** Closure spans shut the frames whose middle they cover. */
const CLOSURE_MASK: SpanMaskOptions = { leadMs: 0, lagMs: 0, rampMs: 1 };

/**
 * The acoustic track with the viseme model's lips: shut where it hears p, b, m (`closures`, from
 * visemeClosures, and where the shut probability itself is high; the loudness keeps the jaw
 * elsewhere), its rounding and spreading instead of the vowel-colour estimate.
 */
export function withVisemes(
  acoustic: MouthTrack,
  model: VisemeTrack,
  temperature: number,
  closures?: Float32Array,
): MouthTrack {
  const n = acoustic.open.length;
  const gain = (0.6 + 0.8 * Math.min(1, Math.max(0, temperature))) * MODEL_SHAPE_GAIN;
  const open = new Float32Array(n);
  const width = new Float32Array(n);
  const round = new Float32Array(n);
  for (let t = 0; t < n; t++) {
    const closed = t < model.closed.length ? model.closed[t] : 0;
    const graded = Math.min(1, Math.max(0, (closed - MODEL_SHUT_FROM) / (MODEL_SHUT_AT - MODEL_SHUT_FROM)));
    const shut = Math.max(graded, closures && t < closures.length ? closures[t] : 0);
    open[t] = acoustic.open[t] * (1 - shut);
    // Where the mouth is closed anyway the model's rest shape is neutral: no shape without speech.
    const speaking = acoustic.open[t] > 0 ? 1 : 0;
    width[t] = Math.min(1, Math.max(-1, (t < model.width.length ? model.width[t] : 0) * gain * speaking));
    round[t] = Math.min(1, Math.max(0, (t < model.round.length ? model.round[t] : 0) * gain * speaking));
  }
  return { ...acoustic, open, width, round };
}

export function planMouth(inp: MouthInputs): MouthPlan {
  const { fps, frames } = inp;
  const speechMask = inp.speech ? spanMask(inp.speech, fps, frames, SPEECH_MASK) : null;
  const acoustic = mouthFromAudio(inp.audio, { temperature: inp.temperature, speech: speechMask });
  const snr = speechMask ? speechToBackgroundDb(inp.audio, speechMask) : null;
  const peaksHeard = snr === null || snr >= MODEL_PEAKS_MIN_SNR_DB;
  // Where no trusted phoneme is, the viseme model (when there is one) shapes the lips, else the signal.
  const fallback = inp.visemes
    ? withVisemes(
        acoustic,
        visemeTrack(inp.visemes, fps, frames),
        inp.temperature,
        peaksHeard ? spanMask(visemeClosures(inp.visemes), fps, frames, CLOSURE_MASK) : undefined,
      )
    : acoustic;
  // Plain acoustic widths are scaled back on the wider range; the model's lip shapes are deliberate.
  const fallbackScale = inp.visemes ? 1 : 1 / PHONEME_SHAPE_RANGE;
  const phonemes = inp.phonemes ?? [];
  if (phonemes.length === 0)
    return { track: fallback, usesPhonemes: false, phonemeShare: null, wideShapes: !!inp.visemes };
  const shaped = mouthFromPhonemes(phonemes, fps, frames, acoustic, {
    temperature: inp.temperature,
    closureMs: inp.phonemesAligned ? ALIGNED_CLOSURE_MS : undefined,
  });
  if (!inp.phonemeSpans) return { track: shaped, usesPhonemes: true, phonemeShare: 1, wideShapes: true };

  const w = spanMask(inp.phonemeSpans, fps, frames, PHONEME_MASK);
  const open = new Float32Array(frames);
  const width = new Float32Array(frames);
  const round = new Float32Array(frames);
  let speaking = 0;
  let driven = 0;
  for (let t = 0; t < frames; t++) {
    const k = w[t];
    open[t] = k * shaped.open[t] + (1 - k) * fallback.open[t];
    width[t] = k * shaped.width[t] + (1 - k) * fallback.width[t] * fallbackScale;
    round[t] = k * shaped.round[t] + (1 - k) * fallback.round[t] * fallbackScale;
    if (acoustic.open[t] > 0 || k > 0) {
      speaking++;
      driven += k;
    }
  }
  if (driven === 0)
    return { track: fallback, usesPhonemes: false, phonemeShare: 0, wideShapes: !!inp.visemes };
  return {
    track: { ...acoustic, open, width, round },
    usesPhonemes: true,
    wideShapes: true,
    phonemeShare: speaking > 0 ? Math.round((driven / speaking) * 1000) / 1000 : 0,
  };
}
