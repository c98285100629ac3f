// The public transcript (spec api-details 1.3) from refined words: segments split at pauses and
// sentence ends, word ids unique across the transcript, times absolute in the source (a window's
// offset added), and a speaker per word from speakers.ts.
import type { SpeakerEstimate } from './speakers.js';
import type { RecognizedWord } from './types.js';

export { estimateSpeakers, type SpeakerEstimate, type SpeakerOptions } from './speakers.js';

export interface TranscriptWordItem {
  id: string;
  text: string;
  startMs: number;
  endMs: number;
  speakerId: string | null;
}

export interface TranscriptSegment {
  id: string;
  words: TranscriptWordItem[];
}

export interface Transcript {
  segments: TranscriptSegment[];
}

export interface BuildTranscriptOptions {
  /** Added to every time: where the transcribed audio starts in the source (a window's startMs). */
  offsetMs?: number;
  /** A pause at least this long starts a new segment (default 700). */
  pauseMs?: number;
  /** A segment this long ends at its next pause of pauseMs / 2 or more (default 20 000). */
  maxSegmentMs?: number;
}

const SENTENCE_END = /[.!?]["')\]]*$/;

/** Segments of words; speakerId null until applySpeakers. */
export function buildTranscript(
  words: readonly RecognizedWord[],
  opts: BuildTranscriptOptions = {},
): Transcript {
  const offset = Math.round(opts.offsetMs ?? 0);
  const pauseMs = opts.pauseMs ?? 700;
  const maxSegmentMs = opts.maxSegmentMs ?? 20_000;
  const segments: TranscriptSegment[] = [];
  let current: TranscriptWordItem[] = [];
  let n = 0;
  words.forEach((w, i) => {
    const prev = words[i - 1];
    if (prev && current.length > 0) {
      const gap = w.startMs - prev.endMs;
      const long = prev.endMs - (current[0].startMs - offset) >= maxSegmentMs && gap >= pauseMs / 2;
      if (gap >= pauseMs || SENTENCE_END.test(prev.text) || long) {
        segments.push({ id: `s${segments.length + 1}`, words: current });
        current = [];
      }
    }
    const startMs = Math.round(w.startMs) + offset;
    // Refined neighbours may touch; a word never ends before it starts.
    const endMs = Math.max(startMs, Math.round(w.endMs) + offset);
    current.push({ id: `w${++n}`, text: w.text, startMs, endMs, speakerId: null });
  });
  if (current.length > 0) segments.push({ id: `s${segments.length + 1}`, words: current });
  return { segments };
}

/** The transcript with each word's speaker from the estimate (null where it has none). */
export function applySpeakers(transcript: Transcript, estimate: SpeakerEstimate): Transcript {
  return {
    segments: transcript.segments.map((s) => ({
      id: s.id,
      words: s.words.map((w) => ({ ...w, speakerId: estimate.speakerByWordId[w.id] ?? null })),
    })),
  };
}
