// Reusing the speaker's own recorded words (speech-options.md (c), "Splicing the speaker's own
// words"): a replacement word that the speaker says elsewhere in the source is cut from there rather
// than synthesized. Transcript times may be a recognizer's draft, so the occurrence is re-aligned on a
// small window with its neighbours before it is cut.
import { join } from 'node:path';
import { transcriptWords } from '../text.js';
import type { AlignTranscript } from '../types.js';
import { msToSamples, writePcm, type Pcm } from './pcm.js';
import type { SourceWord } from './types.js';

/** A word as compared for reuse: case, punctuation and number spelling do not matter. */
export function wordKey(text: string): string {
  return transcriptWords(text)
    .map((w) => w.key)
    .join(' ');
}

/**
 * The index of the occurrence of `key` to reuse: not inside an edited span (`excluded`), nearest in
 * time to `nearMs` (recording conditions drift less over short distances); null when none.
 */
export function findOccurrence(
  key: string,
  words: readonly SourceWord[],
  excluded: ReadonlySet<number>,
  nearMs: number,
): number | null {
  let best: number | null = null;
  words.forEach((w, i) => {
    if (excluded.has(i) || wordKey(w.text) !== key) return;
    const d = Math.abs(w.startMs - nearMs);
    if (best === null || d < Math.abs(words[best].startMs - nearMs)) best = i;
  });
  return best;
}

/** Sample spans of the occurrence and of the words around it, after re-alignment. */
export interface Occurrence {
  start: number;
  end: number;
  /** The earliest and latest sample a cut may use without entering a neighbouring word. */
  lo: number;
  hi: number;
}

const overlapShare = (a: [number, number], b: [number, number]): number =>
  Math.max(0, Math.min(a[1], b[1]) - Math.max(a[0], b[0])) / Math.max(1, Math.min(a[1] - a[0], b[1] - b[0]));

/**
 * The occurrence's span, refined by forced alignment of "previous word + word + next word" on their
 * window; the transcript's own times when alignment fails or disagrees (less than half overlap).
 */
export async function locateOccurrence(
  pcm: Pcm,
  words: readonly SourceWord[],
  index: number,
  align: AlignTranscript,
  opts: { workDir: string; signal?: AbortSignal; tag: string },
): Promise<Occurrence> {
  const rate = pcm.sampleRate;
  const w = words[index];
  const prev = words[index - 1];
  const next = words[index + 1];
  const s = (ms: number) => msToSamples(ms, rate);
  const fallback: Occurrence = {
    start: s(w.startMs),
    end: s(w.endMs),
    lo: prev ? s(prev.endMs) : Math.max(0, s(w.startMs - 200)),
    hi: next ? s(next.startMs) : Math.min(pcm.samples.length, s(w.endMs + 200)),
  };
  const from = Math.max(0, (prev?.startMs ?? w.startMs) - 150);
  const to = Math.min(Math.round((pcm.samples.length * 1000) / rate), (next?.endMs ?? w.endMs) + 150);
  const text = [prev, w, next].filter((x): x is SourceWord => x !== undefined).map((x) => x.text);
  const file = join(opts.workDir, `reuse-${opts.tag}.wav`);
  await writePcm(file, { samples: pcm.samples.subarray(s(from), s(to)), sampleRate: rate });
  let timed;
  try {
    timed = await align(file, text.join(' '), { workDir: opts.workDir, signal: opts.signal });
  } catch (err) {
    opts.signal?.throwIfAborted();
    void err; // A window the aligner cannot match keeps the transcript's times.
    return fallback;
  }
  // The aligner may split a word ("5" -> "five"); only a one-to-one result is trusted.
  if (timed.words.length !== text.length) return fallback;
  const k = prev ? 1 : 0;
  const at = (ms: number) => s(from + ms);
  const refined: [number, number] = [at(timed.words[k].startMs), at(timed.words[k].endMs)];
  if (overlapShare(refined, [fallback.start, fallback.end]) < 0.5) return fallback;
  return {
    start: refined[0],
    end: refined[1],
    lo: prev ? at(timed.words[k - 1].endMs) : fallback.lo,
    hi: next ? at(timed.words[k + 1].startMs) : fallback.hi,
  };
}
