// Hand corrections of a transcript (issue 35): the corrected words take their new text, and the pieces
// of audio around them are aligned again with that text (refine.ts), so that their times are where the
// corrected words are really spoken. Words of pieces that hold no correction keep their times; a piece
// the aligner cannot match keeps the times it had.
import { applyCorrections, type Transcript, type WordCorrection } from '../../domain/transcriptions.js';
import { refineWordTimes } from './refine.js';

export interface CorrectionOptions {
  /** Where the WAV starts in the source (the transcription window's start). */
  offsetMs: number;
  workDir: string;
  signal?: AbortSignal;
}

/** The corrected transcript, re-timed against `wavPath` (the transcription's window). */
export async function realignCorrected(
  wavPath: string,
  transcript: Transcript,
  corrections: readonly WordCorrection[],
  opts: CorrectionOptions,
): Promise<{ transcript: Transcript; alignedIds: string[] }> {
  const corrected = applyCorrections(transcript, corrections);
  const flat = corrected.segments.flatMap((s) => s.words);
  const ids = new Set(corrections.map((c) => c.id));
  const only = new Set(flat.flatMap((w, i) => (ids.has(w.id) ? [i] : [])));
  const refined = await refineWordTimes(
    wavPath,
    flat.map((w) => ({ text: w.text, startMs: w.startMs - opts.offsetMs, endMs: w.endMs - opts.offsetMs })),
    { workDir: opts.workDir, signal: opts.signal, only },
  );
  const timed = new Map(
    flat.map((w, i) => {
      const r = refined[i];
      if (!r.aligned) return [w.id, w] as const;
      const startMs = r.startMs + opts.offsetMs;
      return [w.id, { ...w, startMs, endMs: Math.max(startMs, r.endMs + opts.offsetMs) }] as const;
    }),
  );
  return {
    transcript: {
      segments: corrected.segments.map((s) => ({ id: s.id, words: s.words.map((w) => timed.get(w.id)!) })),
    },
    alignedIds: flat.filter((w, i) => refined[i].aligned && ids.has(w.id)).map((w) => w.id),
  };
}
