// Mouth shapes per sound, measured on a video against the phoneme timeline of its speech: at the
// frame that shows the middle of each sound, the mouth's opening (above the clip's own shut level)
// and width (from measureMouth in quality.ts). Two ratios sum it up:
//  - bilabial / open vowel: opening at p, b, m against aa, ae, ah, aw, ay. Lips shut on p, b, m, so
//    a speaking person scores well under 0.3; a mouth driven by loudness alone stays half open
//    through short stops;
//  - rounded / spread: width at uw, ow, w, uh against iy, ih, ey (under 1: "oo" is narrower).
import type { TimedPhoneme } from '../../speech/types.js';
import { normalisePhone } from './phoneme-mouth.js';
import { bestLagCorrelation } from './stats.js';

/** The sync score's lag window (quality.ts, SYNC_MAX_LAG), frames. */
const SYNC_MAX_LAG = 3;

export const BILABIALS = ['p', 'b', 'm'];
export const OPEN_VOWELS = ['aa', 'ae', 'ah', 'aw', 'ay'];
export const ROUNDED = ['uw', 'ow', 'w', 'uh'];
export const SPREAD = ['iy', 'ih', 'ey'];

/** The clip's shut level: this quantile of the opening over the frames with a face. */
const SHUT_QUANTILE = 0.05;

export interface SoundGroup {
  /** Sounds whose middle frame had a face. */
  count: number;
  /** Mean over those sounds. */
  mean: number;
}

export interface PhonemeShapeScore {
  /** Opening (mouthOpening units) the clip's mouth reaches when shut; openings are measured above it. */
  shutLevel: number;
  bilabial: SoundGroup;
  openVowel: SoundGroup;
  /** bilabial.mean / openVowel.mean (NaN when either group is empty). */
  openRatio: number;
  rounded: SoundGroup;
  spread: SoundGroup;
  /** rounded.mean / spread.mean of the widths (NaN when either group is empty). */
  widthRatio: number;
}

function quantile(values: number[], p: number): number {
  const v = values.filter(Number.isFinite).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  return v[Math.min(v.length - 1, Math.max(0, Math.round(p * (v.length - 1))))];
}

/** The frame (at `fps`, frame i spanning [i, i + 1) / fps) that shows the middle of a sound. */
export function middleFrame(ph: TimedPhoneme, fps: number): number {
  return Math.floor(((ph.startMs + ph.endMs) / 2 / 1000) * fps);
}

/** Mean of `values` at the middle frames of the sounds in `phones` (frames without a face skipped). */
export function atSounds(
  values: readonly number[],
  phonemes: readonly TimedPhoneme[],
  phones: readonly string[],
  fps: number,
  offset = 0,
): SoundGroup {
  let sum = 0;
  let count = 0;
  for (const ph of phonemes) {
    if (!phones.includes(normalisePhone(ph.phone))) continue;
    const i = middleFrame(ph, fps);
    const x = i >= 0 && i < values.length ? values[i] : NaN;
    if (!Number.isFinite(x)) continue;
    sum += x - offset;
    count++;
  }
  return { count, mean: count > 0 ? sum / count : NaN };
}

/**
 * The per-sound measures of a video's mouth (`opening` and `width` per frame, NaN without a face)
 * against the phonemes of its speech (ms from the first frame).
 */
export function phonemeShapes(
  measure: { opening: readonly number[]; width: readonly number[] },
  phonemes: readonly TimedPhoneme[],
  fps: number,
): PhonemeShapeScore {
  const shutLevel = quantile([...measure.opening], SHUT_QUANTILE);
  const above = measure.opening.map((o) => (Number.isFinite(o) ? Math.max(0, o - shutLevel) : NaN));
  const bilabial = atSounds(above, phonemes, BILABIALS, fps);
  const openVowel = atSounds(above, phonemes, OPEN_VOWELS, fps);
  const rounded = atSounds(measure.width, phonemes, ROUNDED, fps);
  const spread = atSounds(measure.width, phonemes, SPREAD, fps);
  const ratio = (a: SoundGroup, b: SoundGroup) => (a.count > 0 && b.count > 0 ? a.mean / b.mean : NaN);
  return {
    shutLevel,
    bilabial,
    openVowel,
    openRatio: ratio(bilabial, openVowel),
    rounded,
    spread,
    widthRatio: ratio(rounded, spread),
  };
}

/** Sounds where the lips close or meet the teeth, whatever the loudness. */
export const LIP_SOUNDS = [...BILABIALS, 'f', 'v'];

/**
 * The sync score (quality.ts: best-lag correlation of opening and loudness) over the frames that show none of the lip sounds (p, b, m, f, v, from
 * 20 ms before each): there a mouth shaped by phonemes closes against the loudness (a voiced b, an
 * m are loud) on purpose; everywhere else it should follow the loudness as a loudness-driven one does.
 */
export function syncOutsideLipSounds(
  opening: readonly number[],
  loudnessDb: ArrayLike<number>,
  phonemes: readonly TimedPhoneme[],
  fps: number,
): { score: number; lag: number; frames: number } {
  const kept = [...opening];
  const frameMs = 1000 / fps;
  for (const ph of phonemes) {
    if (!LIP_SOUNDS.includes(normalisePhone(ph.phone))) continue;
    const a = Math.max(0, Math.floor((ph.startMs - 20) / frameMs));
    for (let i = a; i < kept.length && i * frameMs < ph.endMs; i++) kept[i] = NaN;
  }
  const { r, lag } = bestLagCorrelation(kept, loudnessDb, SYNC_MAX_LAG);
  return { score: r, lag, frames: kept.filter(Number.isFinite).length };
}

/**
 * A phoneme timeline from JSON: a SpeechTimeline (`{ phonemes: [...] }`, as the speech providers
 * return it) or a bare array of `{ phone, startMs, endMs }`.
 */
export function parsePhonemes(json: unknown): TimedPhoneme[] {
  const list = Array.isArray(json) ? json : (json as { phonemes?: unknown } | null)?.phonemes;
  if (!Array.isArray(list)) throw new Error('expected a phoneme list or { phonemes: [...] }');
  return list.map((p, i) => {
    const { phone, startMs, endMs } = (p ?? {}) as Record<string, unknown>;
    if (typeof phone !== 'string' || typeof startMs !== 'number' || typeof endMs !== 'number') {
      throw new Error(`phoneme ${i}: expected { phone, startMs, endMs }`);
    }
    return { phone, startMs, endMs };
  });
}
