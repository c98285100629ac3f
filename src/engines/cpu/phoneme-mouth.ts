// Phonemes -> mouth shapes, one set per video frame, the same MouthTrack the audio path makes (so the
// rig takes it unchanged). Each sound has a target (jaw opening, spreading, rounding) and a dominance:
// how strongly it holds its target against its neighbours (Cohen & Massaro's coarticulation model).
// Per instant the shape is the dominance-weighted mean of the nearby targets, with dominance falling
// off outside each sound, further ahead of it than behind (rounding of "oo" shows over the consonants
// before it). The lips lead the sound (`leadMs`). On top of the blend, hard constraints the blend
// alone would soften: the lips shut for p, b, m and the lower lip meets the teeth for f, v, whatever
// the neighbours or the loudness. The audio level still scales the jaw (louder speech opens wider).
import type { TimedPhoneme } from '../../speech/types.js';
import type { MouthTrack } from './audio-mouth.js';

/** A sound's mouth target and how strongly it holds it against its neighbours. */
interface Viseme {
  /** Jaw opening, 0..1 (1 = "aa"). */
  open: number;
  /** -1 (narrow, pursed) .. 1 (spread, "ee"). */
  width: number;
  /** Lip rounding, 0..1. */
  round: number;
  /** Dominance of the opening and of the lip shape (width and rounding). */
  dOpen: number;
  dShape: number;
}

const v = (open: number, width: number, round: number, dOpen: number, dShape: number): Viseme => ({
  open,
  width,
  round,
  dOpen,
  dShape,
});

const VOWEL = 1;
/** Vowels and glides whose lips are their point (rounded, spread) hold their shape harder. */
const LIPS = 1.5;
/** Sounds whose lips are free take the shape of their neighbours (low dShape). */
const SINGLE: Record<string, Viseme> = {
  aa: v(1.0, 0, 0, VOWEL, VOWEL),
  ae: v(0.9, 0.35, 0, VOWEL, VOWEL),
  ah: v(0.75, 0, 0, VOWEL, VOWEL),
  ax: v(0.5, 0, 0, 0.7, 0.5),
  ao: v(0.8, -0.3, 0.5, VOWEL, VOWEL),
  eh: v(0.6, 0.45, 0, VOWEL, VOWEL),
  ey: v(0.5, 0.8, 0, VOWEL, LIPS),
  ih: v(0.4, 0.8, 0, VOWEL, LIPS),
  iy: v(0.3, 1.0, 0, VOWEL, LIPS),
  uh: v(0.4, -0.7, 0.8, VOWEL, LIPS),
  uw: v(0.3, -1.0, 1.0, VOWEL, LIPS),
  er: v(0.4, -0.2, 0.35, VOWEL, VOWEL),
  // Lips: shut, lower lip on the teeth, rounded.
  p: v(0, 0, 0, 1.5, 0.15),
  b: v(0, 0, 0, 1.5, 0.15),
  m: v(0, 0, 0, 1.5, 0.15),
  f: v(0.08, 0.3, 0, 1.2, 0.6),
  v: v(0.08, 0.3, 0, 1.2, 0.6),
  w: v(0.15, -1.0, 1.0, 1, 2 * LIPS),
  r: v(0.25, -0.3, 0.4, 0.6, 0.6),
  // Tongue and throat: the jaw a little open, the lips mostly follow the vowels around them.
  th: v(0.2, 0.1, 0, 0.6, 0.2),
  dh: v(0.2, 0.1, 0, 0.6, 0.2),
  s: v(0.12, 0.3, 0, 0.7, 0.25),
  z: v(0.12, 0.3, 0, 0.7, 0.25),
  sh: v(0.2, -0.4, 0.55, 0.7, 0.7),
  zh: v(0.2, -0.4, 0.55, 0.7, 0.7),
  ch: v(0.2, -0.4, 0.55, 0.7, 0.7),
  jh: v(0.2, -0.4, 0.55, 0.7, 0.7),
  t: v(0.2, 0, 0, 0.6, 0.1),
  d: v(0.2, 0, 0, 0.6, 0.1),
  n: v(0.2, 0, 0, 0.6, 0.1),
  l: v(0.3, 0, 0, 0.5, 0.1),
  k: v(0.3, 0, 0, 0.5, 0.1),
  g: v(0.3, 0, 0, 0.5, 0.1),
  ng: v(0.3, 0, 0, 0.5, 0.1),
  y: v(0.25, 0.6, 0, 0.6, 0.5),
  hh: v(0.45, 0, 0, 0.1, 0.05),
  sil: v(0, 0, 0, 1.5, 0.5),
};
/** Diphthongs glide: the first target for 60 % of the sound, the second for the rest. */
const GLIDES: Record<string, [Viseme, Viseme]> = {
  ay: [SINGLE.aa, v(0.45, 0.6, 0, VOWEL, VOWEL)],
  aw: [v(0.9, 0, 0, VOWEL, VOWEL), v(0.45, -0.6, 0.7, VOWEL, VOWEL)],
  ow: [v(0.55, -0.6, 0.75, VOWEL, LIPS), v(0.35, -0.9, 1.0, VOWEL, LIPS)],
  oy: [v(0.5, -0.7, 0.8, VOWEL, LIPS), v(0.35, 0.6, 0, VOWEL, VOWEL)],
};
const UNKNOWN = v(0.3, 0, 0, 0.2, 0.1);
const PAUSES = new Set(['sil', 'pau', 'sp', 'spn', 'h#', '']);
const BILABIAL = new Set(['p', 'b', 'm']);
const LABIODENTAL = new Set(['f', 'v']);

/** Lower-case, stress digits off; pause spellings of other tools are `sil`. */
export function normalisePhone(phone: string): string {
  const p = phone.toLowerCase().replace(/[0-9]/g, '');
  return PAUSES.has(p) ? 'sil' : p;
}

interface Segment extends Viseme {
  start: number;
  end: number;
}

/** The timeline as target segments (diphthongs split in two), in ms, sorted. */
function segmentsOf(phonemes: readonly TimedPhoneme[]): Segment[] {
  const out: Segment[] = [];
  for (const ph of [...phonemes].sort((a, b) => a.startMs - b.startMs)) {
    if (!(ph.endMs > ph.startMs)) continue;
    const p = normalisePhone(ph.phone);
    const glide = GLIDES[p];
    if (glide) {
      const mid = ph.startMs + 0.6 * (ph.endMs - ph.startMs);
      out.push({ ...glide[0], start: ph.startMs, end: mid }, { ...glide[1], start: mid, end: ph.endMs });
    } else out.push({ ...(SINGLE[p] ?? UNKNOWN), start: ph.startMs, end: ph.endMs });
  }
  return out;
}

export interface PhonemeMouthOptions {
  /** 0..1, default 0.5: expressiveness, as for the audio path (used when no audio track is given). */
  temperature?: number;
  /** How far the lips' shape (spreading, rounding) leads the sound, ms (default 50). */
  leadMs?: number;
  /**
   * How far the jaw leads, ms (default 20). Less than the lips: the closure of p, b, m is the
   * sound's own silence, so a jaw shifted as far would cut the vowel before it short.
   */
  jawLeadMs?: number;
  /** Share of the loudness-driven opening every sound keeps (default LOUDNESS_SHARE). */
  loudnessShare?: number;
  /** How long the lips stay shut around the middle of a p, b, m, ms (default CLOSURE_MS). */
  closureMs?: number;
}

/** Dominance falls off over this many ms before a sound (anticipation) and after it (carry-over). */
const OPEN_BEFORE_MS = 40;
const OPEN_AFTER_MS = 30;
/** Rounding is anticipated far (over the consonants before an "oo"), other lip shapes less. */
const ROUND_BEFORE_MS = 110;
const SHAPE_BEFORE_MS = 60;
const SHAPE_AFTER_MS = 50;
/** Sub-sample step, ms: each frame averages the shape over its span (motion blur, no aliasing). */
const STEP_MS = 5;
/** Without audio: the opening of "aa", on the audio path's scale (0.62 at the speech level). */
const OPEN_SCALE = 0.66;
/**
 * With audio: the share of the loudness-driven opening every sound keeps; the rest would scale with
 * the sound's jaw target. All of it: the jaw follows the loudness and the phonemes shape the lips
 * (closures, rounding, spreading). A per-vowel jaw (0.7 + 0.3 x target) decorrelated the opening
 * from the speech where the lips are free: on the fixture faces the sync score outside lip sounds
 * fell 0.02-0.13 under the loudness-driven mouth, against -0.03..+0.01 now, and p/b/m and rounding
 * stayed within their targets (docs/engine.md, "Jaw from the loudness"). Open vowels are louder
 * than close ones, so "aa" still opens wider than "iy".
 */
const LOUDNESS_SHARE = 1;
/**
 * How long the lips stay shut around the middle of a p, b, m, ms, beyond the frame that shows the
 * middle (always shut): none. The synthesized m and voiced b are as loud as their vowels, and every
 * further shut frame costs sync (a 50 ms closure: about 0.05 of the correlation at 25-30 fps).
 */
const CLOSURE_MS = 0;
/**
 * The same for aligned phone times, whose middles may be 10-30 ms off the sound's: the closure (at
 * most the sound itself) must cover the frame that shows the true middle. 40 ms missed it whenever
 * an aligned middle 15 ms early fell on the other side of a 40 ms frame boundary (two m's of "My mom
 * ... made" left open: p/b/m 0.20-0.41 on the fixture faces); 60 ms, within a real closure's
 * 50-100 ms, shuts both frames around it: 0.07-0.16, for 0.04-0.06 more of the plain sync score
 * (the sync outside lip sounds unchanged). docs/engine.md, "Aligned closures".
 */
export const ALIGNED_CLOSURE_MS = 60;
/** The lips part this long before a sound's end (the release burst). */
const RELEASE_MS = 15;
/** The lips reach a closure this long before its sound starts (the approach itself follows the blend). */
const HOLD_LEAD_MS = 20;
/** f, v: the lower lip at the upper teeth, on the opening scale. */
const LABIODENTAL_OPEN = 0.05;
/**
 * Lip shapes are drawn this much stronger than the blend (then clamped): a short vowel rarely
 * reaches its own target among its neighbours, and the rig's width range is narrow (+12 % spread,
 * at most -25 % rounded), of which the tracker reads back about a third.
 */
const SHAPE_GAIN = 1.4;

/**
 * The rig's width range on the phoneme path (MouthRigOptions.shapeRange): "oo" up to half the
 * present width and "ee" 24 % wider than the neutral mouth, against a quarter and 12 % from
 * loudness. The tracker reads back about a third of the rig's narrowing: at the default range
 * rounded vowels measured 0.91-0.97 of the spread width on three of the eight fixture clips, at 1.6
 * still 0.92 on one.
 */
export const PHONEME_SHAPE_RANGE = 2;

function clamp(x: number, lo: number, hi: number): number {
  return x < lo ? lo : x > hi ? hi : x;
}

function falloff(t: number, s: Segment, beforeMs: number, afterMs: number): number {
  if (t < s.start) return Math.exp(-(s.start - t) / beforeMs);
  if (t > s.end) return Math.exp(-(t - s.end) / afterMs);
  return 1;
}

/** The blended target at time `t` (ms, already shifted by the lead) into out[0..2] (open, width, round). */
function blendAt(segs: Segment[], first: number, t: number, out: Float64Array): void {
  let so = 0;
  let wo = 0;
  let sw = 0;
  let sr = 0;
  let ws = 0;
  // Dominance is negligible beyond a few hundred ms, so only the neighbourhood is summed.
  for (let i = first; i < segs.length && segs[i].start < t + 600; i++) {
    const s = segs[i];
    if (s.end < t - 400) continue;
    const dO = s.dOpen * falloff(t, s, OPEN_BEFORE_MS, OPEN_AFTER_MS);
    const dS = s.dShape * falloff(t, s, s.round > 0.3 ? ROUND_BEFORE_MS : SHAPE_BEFORE_MS, SHAPE_AFTER_MS);
    so += dO * s.open;
    wo += dO;
    sw += dS * s.width;
    sr += dS * s.round;
    ws += dS;
  }
  out[0] = wo > 1e-6 ? so / wo : 0;
  out[1] = ws > 1e-6 ? sw / ws : 0;
  out[2] = ws > 1e-6 ? sr / ws : 0;
}

/**
 * Per frame (frame t spans [t, t + 1) / fps), how far (0..1) the lips are held at a constraint
 * over the spans `[start - leadMs, end - release]` of the given sounds: fully in a frame such a span
 * covers entirely, from none at three quarters; and always fully in the frame that shows the
 * sound's middle. Only (nearly) covered frames: a shut frame where the audio is loud (a voiced b, an
 * m) reads as out of sync, so the closure is shown no longer than the sound lasts.
 */
export function holdPerFrame(
  phonemes: readonly TimedPhoneme[],
  which: ReadonlySet<string>,
  fps: number,
  frames: number,
  leadMs: number,
): Float32Array {
  const hold = new Float32Array(frames);
  const frameMs = 1000 / fps;
  for (const ph of phonemes) {
    if (!which.has(normalisePhone(ph.phone)) || !(ph.endMs > ph.startMs)) continue;
    const a = ph.startMs - leadMs;
    const b = ph.endMs - Math.min(RELEASE_MS, (ph.endMs - ph.startMs) / 3);
    for (let t = Math.max(0, Math.floor(a / frameMs)); t < frames && t * frameMs < b; t++) {
      const cover = (Math.min(b, (t + 1) * frameMs) - Math.max(a, t * frameMs)) / frameMs;
      hold[t] = Math.max(hold[t], clamp(4 * cover - 3, 0, 1));
    }
    const mid = Math.floor((ph.startMs + ph.endMs) / 2 / frameMs);
    if (mid >= 0 && mid < frames) hold[mid] = 1;
  }
  return hold;
}

/**
 * The mouth track for a phoneme timeline (ms from the first frame). `audio`: the loudness-driven
 * track of the same speech (audio-mouth): its opening is scaled per sound, and a clip it finds
 * silent keeps the mouth closed; null: the phonemes alone.
 */
/**
 * Per frame (frame t spans [t, t + 1) / fps), how far (0..1) the lips are shut for the given sounds:
 * a closure `closureMs` long (at most the sound itself) centred on each sound's middle. Fully in the
 * frame that shows the middle and in any frame the closure covers at least half of; not at all
 * elsewhere. A real bilabial closure lasts 50-100 ms; the synthesized m and voiced b are as loud as
 * the vowels around them, so every frame shut beyond that reads (and measures) as out of sync.
 */
export function closurePerFrame(
  phonemes: readonly TimedPhoneme[],
  which: ReadonlySet<string>,
  fps: number,
  frames: number,
  closureMs: number,
): Float32Array {
  const shut = new Float32Array(frames);
  const frameMs = 1000 / fps;
  for (const ph of phonemes) {
    if (!which.has(normalisePhone(ph.phone)) || !(ph.endMs > ph.startMs)) continue;
    const mid = (ph.startMs + ph.endMs) / 2;
    const half = Math.min(closureMs, ph.endMs - ph.startMs) / 2;
    const a = mid - half;
    const b = mid + half;
    for (let t = Math.max(0, Math.floor(a / frameMs)); t < frames && t * frameMs < b; t++) {
      const cover = (Math.min(b, (t + 1) * frameMs) - Math.max(a, t * frameMs)) / frameMs;
      if (cover >= 0.5) shut[t] = 1;
    }
    const m = Math.floor(mid / frameMs);
    if (m >= 0 && m < frames) shut[m] = 1;
  }
  return shut;
}

export function mouthFromPhonemes(
  phonemes: readonly TimedPhoneme[],
  fps: number,
  frames: number,
  audio: MouthTrack | null,
  opts: PhonemeMouthOptions = {},
): MouthTrack {
  const open = new Float32Array(frames);
  const width = new Float32Array(frames);
  const round = new Float32Array(frames);
  const spoken = phonemes.some((p) => normalisePhone(p.phone) !== 'sil' && p.endMs > p.startMs);
  const hasSpeech = spoken && (audio?.hasSpeech ?? true);
  const speechLevelDb = audio?.speechLevelDb ?? 0;
  const gateDb = audio?.gateDb ?? 0;
  if (!hasSpeech) return { open, width, round, speechLevelDb, gateDb, hasSpeech };

  const gain = 0.6 + 0.8 * clamp(opts.temperature ?? 0.5, 0, 1);
  const lead = opts.leadMs ?? 50;
  const jawLead = opts.jawLeadMs ?? 20;
  const share = clamp(opts.loudnessShare ?? LOUDNESS_SHARE, 0, 1);
  const segs = segmentsOf(phonemes);
  const frameMs = 1000 / fps;
  const sample = new Float64Array(3);
  let first = 0;
  for (let t = 0; t < frames; t++) {
    let o = 0;
    let w = 0;
    let r = 0;
    let n = 0;
    for (let ms = t * frameMs + STEP_MS / 2; ms < (t + 1) * frameMs; ms += STEP_MS) {
      const early = ms + Math.min(lead, jawLead);
      while (first < segs.length && segs[first].end < early - 400) first++;
      blendAt(segs, first, ms + jawLead, sample);
      o += sample[0];
      blendAt(segs, first, ms + lead, sample);
      w += sample[1];
      r += sample[2];
      n++;
    }
    const jaw = o / n;
    // The audio track already carries the gain (temperature), the gate and the smoothing.
    open[t] = audio
      ? (t < audio.open.length ? audio.open[t] : 0) * (share + (1 - share) * jaw)
      : OPEN_SCALE * jaw * gain;
    width[t] = w / n;
    round[t] = r / n;
  }

  // Constraints the blend would soften: shut lips on p, b, m however loud; lower lip on the teeth
  // and the corners a little spread on f, v.
  const shut = closurePerFrame(phonemes, BILABIAL, fps, frames, opts.closureMs ?? CLOSURE_MS);
  const teeth = holdPerFrame(phonemes, LABIODENTAL, fps, frames, HOLD_LEAD_MS);
  for (let t = 0; t < frames; t++) {
    const o = open[t] + (Math.min(open[t], LABIODENTAL_OPEN) - open[t]) * teeth[t];
    const wt = width[t] + (Math.max(width[t], 0.3) - width[t]) * teeth[t];
    open[t] = clamp(o * (1 - shut[t]), 0, 1);
    width[t] = clamp(wt * gain * SHAPE_GAIN, -1, 1);
    round[t] = clamp(round[t] * gain * SHAPE_GAIN, 0, 1);
  }
  return { open, width, round, speechLevelDb, gateDb, hasSpeech };
}
