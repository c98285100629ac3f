// What is said when, for any recording (issue 12): the phoneme timeline that shapes the mouth per sound,
// with where it came from and how far it can be trusted, span by span.
//
//   text         the speech was synthesized here: its own phone times (confidence 1);
//   alignment    a known transcript (the client's `transcript`, a dialogue edit's words) forced-aligned;
//   recognition  words recognized in the audio, then forced-aligned (the transcription issue's tools);
//   model        the learned audio-to-viseme model (shipped, on by default; the pipeline relabels acoustic);
//   acoustic     nothing better: the engine shapes the mouth from the signal, as before.
//
// Voice activity (Silero VAD) decides speech and silence, so background noise (music, street, room tone)
// neither opens the mouth in pauses nor counts as speech. Words get a confidence from what the
// aligner's result looks like against the audio (inside detected speech, plausible phone durations) and,
// for recognized words, the recognizer's own posterior; below MIN_CONFIDENCE a word's span falls back
// to the acoustic shapes. Pure orchestration: the engines (VAD, recognizer, aligner) are injected.
import { isNoProcessSlot } from '../processes/pool.js';
import type { RecognitionProvider, RecognizedWord } from './recognition/types.js';
import { alignRecognizedWords } from './recognition/refine.js';
import { normalisePhone } from './phones.js';
import type { AlignTranscript, SpeechTimeline, TimedPhoneme } from './types.js';
import type { SpeechSegment } from './vad.js';
import type { VisemeResult } from './viseme-model.js';

export type ArticulationSource = 'text' | 'alignment' | 'recognition' | 'model' | 'acoustic';

/** A stretch of speech, who shapes the mouth there, and how sure that source is (0..1). */
export interface ArticulationSpan {
  startMs: number;
  endMs: number;
  source: ArticulationSource;
  confidence: number;
}

export interface Articulation {
  /** Phones of the trusted words (and pauses between them), ms from the start of the audio. */
  phonemes: TimedPhoneme[];
  /** Where `phonemes` drive the mouth (the trusted words' spans, merged). */
  trusted: SpeechSegment[];
  /** Every stretch of speech with its source (ms, sorted, not overlapping). */
  spans: ArticulationSpan[];
  /** Speech found by voice activity detection; null when the detector could not run. */
  speech: SpeechSegment[] | null;
  /** The source that drove most of the speech. */
  primary: ArticulationSource;
  /** What each step cost, ms (reported apart from the frames). */
  timings: { vadMs: number; recognitionMs: number; alignmentMs: number };
  /** Why a better source was not used (shown in the quality report). */
  notes: string[];
}

export interface ArticulationDeps {
  /** Speech segments of a file; throws when the detector is not available. */
  detectSpeech(path: string, signal?: AbortSignal): Promise<SpeechSegment[]>;
  /** null: no recognition (spans without text fall back to the acoustic shapes). */
  recognizer: RecognitionProvider | null;
  align: AlignTranscript;
  /** The learned audio-to-viseme model over a file (10 ms rows), or null when none is configured. */
  visemes?: ((path: string, signal?: AbortSignal) => Promise<VisemeResult>) | null;
  /** Loads the detector's model now instead of in the first job (a worker's warm-up). */
  warmUp?(): Promise<void>;
}

export interface ArticulationInput {
  /** The audio input (any format ffmpeg reads). */
  audioPath: string;
  durationMs: number;
  /** The phones the speech was synthesized with (text inputs, TTS assets). */
  timeline?: SpeechTimeline | null;
  /** The words spoken, when known (the client's transcript, a dialogue edit's text). */
  transcript?: string | null;
  workDir: string;
  signal?: AbortSignal;
  /**
   * Told what failed and why, for the operator's log: the notes clients see say only what was used
   * instead (tool messages carry paths and stderr).
   */
  onProblem?: (step: string, err: unknown) => void;
}

/** Words below this confidence do not drive the mouth: their span gets the acoustic shapes. */
export const MIN_CONFIDENCE = 0.5;

/** Phone durations a speaking person produces, ms per phone (outside: squeezed or stretched by a bad fit). */
const PHONE_MS_LOW = 30;
const PHONE_MS_HIGH = 300;

const clamp01 = (x: number): number => (x < 0 ? 0 : x > 1 ? 1 : x);

/** Share of [a, b) that the segments cover. */
export function coverage(segments: readonly SpeechSegment[] | null, a: number, b: number): number {
  if (!segments) return 1;
  if (!(b > a)) return 0;
  let c = 0;
  for (const s of segments) {
    const lo = Math.max(a, s.startMs);
    const hi = Math.min(b, s.endMs);
    if (hi > lo) c += hi - lo;
  }
  return c / (b - a);
}

/** 1 for a plausible mean phone duration, falling off outside (a wrong transcript squeezes phones). */
export function durationScore(wordMs: number, phones: number): number {
  if (phones <= 0) return 0;
  const per = wordMs / phones;
  if (per < PHONE_MS_LOW) return clamp01(per / PHONE_MS_LOW - 0.2);
  if (per > PHONE_MS_HIGH) return clamp01(PHONE_MS_HIGH / per);
  return 1;
}

interface ScoredWord {
  startMs: number;
  endMs: number;
  source: ArticulationSource;
  confidence: number;
  phones: TimedPhoneme[];
}

/**
 * Confidence of an aligned word: the share of it inside detected speech (the aligner places every word
 * somewhere, so a word in a pause was forced there) times the plausibility of its phone durations,
 * times the recognizer's posterior for recognized words.
 */
export function wordConfidence(
  word: { startMs: number; endMs: number },
  phones: number,
  speech: readonly SpeechSegment[] | null,
  posterior = 1,
): number {
  // Aligned words start with a little silence the detector calls pause: up to 40 ms either side
  // forgiven (a quarter of a short word).
  const margin = Math.min(40, (word.endMs - word.startMs) / 4);
  const inSpeech = clamp01(coverage(speech, word.startMs + margin, word.endMs - margin) * 1.1);
  return clamp01(inSpeech * durationScore(word.endMs - word.startMs, phones) * posterior);
}

function phonesByWord(phonemes: readonly TimedPhoneme[]): Map<number, TimedPhoneme[]> {
  const m = new Map<number, TimedPhoneme[]>();
  for (const p of phonemes) {
    if (p.word === undefined || normalisePhone(p.phone) === 'sil') continue;
    const list = m.get(p.word) ?? [];
    list.push(p);
    m.set(p.word, list);
  }
  return m;
}

function scoreTimeline(
  timeline: SpeechTimeline,
  source: ArticulationSource,
  speech: readonly SpeechSegment[] | null,
  posteriors?: readonly number[],
): ScoredWord[] {
  const byWord = phonesByWord(timeline.phonemes);
  return timeline.words.map((w, i) => {
    const phones = byWord.get(i) ?? [];
    const confidence =
      source === 'text' ? 1 : wordConfidence(w, phones.length, speech, posteriors ? posteriors[i] : 1);
    return { startMs: w.startMs, endMs: w.endMs, source, confidence, phones };
  });
}

/** Merges word spans into report spans: same source and trust, gaps under 250 ms joined. */
export function mergeSpans(
  words: readonly ScoredWord[],
  speech: readonly SpeechSegment[] | null,
  durationMs: number,
): ArticulationSpan[] {
  const raw: ArticulationSpan[] = words.map((w) => ({
    startMs: w.startMs,
    endMs: w.endMs,
    source: w.confidence >= MIN_CONFIDENCE ? w.source : 'acoustic',
    confidence: w.confidence,
  }));
  // Speech no word covers is acoustic, with no confidence to speak of.
  const byStart = [...raw].sort((a, b) => a.startMs - b.startMs);
  for (const s of speech ?? (words.length ? [] : [{ startMs: 0, endMs: durationMs }])) {
    let at = s.startMs;
    for (const w of byStart) {
      if (w.startMs >= s.endMs) break;
      if (w.endMs <= at || w.startMs >= s.endMs) continue;
      if (w.startMs - at >= 100)
        raw.push({ startMs: at, endMs: w.startMs, source: 'acoustic', confidence: 0 });
      at = Math.max(at, w.endMs);
    }
    if (s.endMs - at >= 100) raw.push({ startMs: at, endMs: s.endMs, source: 'acoustic', confidence: 0 });
  }
  raw.sort((a, b) => a.startMs - b.startMs);
  const out: (ArticulationSpan & { weight: number })[] = [];
  for (const s of raw) {
    const last = out[out.length - 1];
    const len = Math.max(1, s.endMs - s.startMs);
    if (last && last.source === s.source && s.startMs - last.endMs < 250) {
      last.confidence = (last.confidence * last.weight + s.confidence * len) / (last.weight + len);
      last.weight += len;
      last.endMs = Math.max(last.endMs, s.endMs);
    } else out.push({ ...s, weight: len });
  }
  return out.map(({ weight: _w, ...s }) => ({ ...s, confidence: Math.round(s.confidence * 100) / 100 }));
}

function primaryOf(spans: readonly ArticulationSpan[]): ArticulationSource {
  const total = new Map<ArticulationSource, number>();
  for (const s of spans) total.set(s.source, (total.get(s.source) ?? 0) + (s.endMs - s.startMs));
  let best: ArticulationSource = 'acoustic';
  let most = 0;
  for (const [k, v] of total)
    if (v > most) {
      most = v;
      best = k;
    }
  return best;
}

/** The trusted words' phones (with the pauses between them) and their merged spans. */
function trustedPhones(words: readonly ScoredWord[]): { phonemes: TimedPhoneme[]; trusted: SpeechSegment[] } {
  const phonemes: TimedPhoneme[] = [];
  const trusted: SpeechSegment[] = [];
  words.forEach((w, i) => {
    if (w.confidence < MIN_CONFIDENCE || w.phones.length === 0) return;
    for (const p of w.phones) phonemes.push({ ...p, word: i });
    const last = trusted[trusted.length - 1];
    // Neighbouring trusted words form one span (the pause between them is shaped as a pause).
    if (last && w.startMs - last.endMs < 400) last.endMs = Math.max(last.endMs, w.endMs);
    else trusted.push({ startMs: w.startMs, endMs: w.endMs });
  });
  // Pauses between trusted words are explicit, so the blend closes the mouth there.
  const withPauses: TimedPhoneme[] = [];
  phonemes.sort((a, b) => a.startMs - b.startMs);
  for (const p of phonemes) {
    const prev = withPauses[withPauses.length - 1];
    if (prev && p.startMs > prev.endMs)
      withPauses.push({ phone: 'sil', startMs: prev.endMs, endMs: p.startMs });
    withPauses.push(p);
  }
  return { phonemes: withPauses, trusted };
}

async function timed<T>(f: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const v = await f();
  return [v, Math.round(performance.now() - t0)];
}

/**
 * The articulation timeline of an audio input (see the header). Never throws for bad speech: it falls
 * back. It does throw when a speech tool got no process slot (processes/pool.ts): that is an overload
 * that passes, so the job retries rather than settle for coarser lips.
 */
export async function articulate(input: ArticulationInput, deps: ArticulationDeps): Promise<Articulation> {
  const notes: string[] = [];
  const timings = { vadMs: 0, recognitionMs: 0, alignmentMs: 0 };
  let speech: SpeechSegment[] | null = null;
  try {
    [speech, timings.vadMs] = await timed(() => deps.detectSpeech(input.audioPath, input.signal));
  } catch (err) {
    input.signal?.throwIfAborted();
    if (isNoProcessSlot(err)) throw err;
    input.onProblem?.('voice activity detection', err);
    notes.push('voice activity detection was unavailable: silence was taken from loudness');
  }
  const finish = (words: ScoredWord[]): Articulation => {
    const spans = mergeSpans(words, speech, input.durationMs);
    return { ...trustedPhones(words), spans, speech, primary: primaryOf(spans), timings, notes };
  };
  if (speech && speech.length === 0) return finish([]);

  if (input.timeline && input.timeline.words.length > 0) {
    return finish(scoreTimeline(input.timeline, 'text', speech));
  }
  if (input.transcript) {
    try {
      const [aligned, ms] = await timed(() =>
        deps.align(input.audioPath, input.transcript as string, {
          workDir: input.workDir,
          signal: input.signal,
        }),
      );
      timings.alignmentMs += ms;
      const words = scoreTimeline(aligned, 'alignment', speech);
      const good = words.filter((w) => w.confidence >= MIN_CONFIDENCE).length;
      if (good >= words.length / 2) return finish(words);
      notes.push(
        `the transcript fits the audio poorly (${good} of ${words.length} words placed with confidence): words recognized instead`,
      );
    } catch (err) {
      input.signal?.throwIfAborted();
      if (isNoProcessSlot(err)) throw err;
      input.onProblem?.('transcript alignment', err);
      notes.push('the transcript could not be aligned to the audio');
    }
  }
  // Recognition, where the operator turned it on, comes before the viseme model: it is off by default
  // with the local recognizer because the model's lips beat its words (ADR 8).
  if (!deps.recognizer) {
    notes.push(
      deps.visemes
        ? 'no transcript: lip shapes from the viseme model (give a transcript for per-sound lip shapes)'
        : 'no transcript and recognition is off: mouth shapes from the sound (give a transcript for per-sound lip shapes)',
    );
    return finish([]);
  }
  let recognized: RecognizedWord[];
  try {
    let ms: number;
    [recognized, ms] = await timed(async () => {
      const r = await deps.recognizer!.transcribe(input.audioPath, {
        workDir: input.workDir,
        signal: input.signal,
      });
      return r.words;
    });
    timings.recognitionMs += ms;
  } catch (err) {
    input.signal?.throwIfAborted();
    if (isNoProcessSlot(err)) throw err;
    input.onProblem?.('recognition', err);
    notes.push('the words could not be recognized: acoustic mouth shapes');
    return finish([]);
  }
  const [refined, ms] = await timed(() =>
    alignRecognizedWords(input.audioPath, recognized, {
      workDir: input.workDir,
      signal: input.signal,
      align: deps.align,
    }),
  );
  timings.alignmentMs += ms;
  const byWord = phonesByWord(refined.phonemes);
  const words = refined.words.map((w, i): ScoredWord => {
    const phones = w.aligned ? (byWord.get(i) ?? []) : [];
    const posterior = w.confidence ?? 1;
    return {
      startMs: w.startMs,
      endMs: w.endMs,
      source: 'recognition',
      confidence: w.aligned ? wordConfidence(w, phones.length, speech, posterior) : 0,
      phones,
    };
  });
  return finish(words);
}
