// Sharpens a recognizer's word times by forced alignment of the recognized words themselves
// (align.ts: pocketsphinx_batch with a grammar of exactly those words), so edit points land within
// tens of ms. Long audio is aligned in chunks cut in the middle of pauses, so each decoder run stays
// short and one bad stretch costs only its own chunk. A word the aligner cannot place (its chunk
// failed, or it landed implausibly far from where the recognizer heard it) keeps the recognizer's time.
import { isNoProcessSlot } from '../../processes/pool.js';
import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { runFfmpeg } from '../../media/ffmpeg.js';
import { probeMedia } from '../../media/probe.js';
import { alignTranscript } from '../align.js';
import { transcriptWords } from '../text.js';
import type { AlignTranscript, SpeechTimeline, TimedPhoneme } from '../types.js';
import type { RecognizedWord } from './types.js';

export interface RefinedWord extends RecognizedWord {
  /** True when the times come from forced alignment, false when they are the recognizer's. */
  aligned: boolean;
}

export interface RefineOptions {
  workDir: string;
  signal?: AbortSignal;
  /** The aligner (default alignTranscript). */
  align?: AlignTranscript;
  /** A pause between recognized words at least this long may end a chunk (default 300). */
  gapMs?: number;
  /** Chunks grow to at least this span before a pause ends them (default 8000). */
  chunkMs?: number;
  /** A chunk with no such pause is cut at its longest gap past this span (default 30 000). */
  maxChunkMs?: number;
  /** An aligned start further than this from the recognizer's is not trusted (default 1000). */
  maxShiftMs?: number;
  /** Only the chunks holding one of these word indexes are aligned (the rest keep their times). */
  only?: ReadonlySet<number>;
}

/** [from, to) word ranges: cut at pauses >= gapMs once a chunk spans chunkMs, or at its longest gap. */
export function chunkWords(
  words: readonly RecognizedWord[],
  opts: { gapMs?: number; chunkMs?: number; maxChunkMs?: number } = {},
): [number, number][] {
  const gapMs = opts.gapMs ?? 300;
  const chunkMs = opts.chunkMs ?? 8000;
  const maxChunkMs = opts.maxChunkMs ?? 30_000;
  const gap = (i: number) => words[i].startMs - words[i - 1].endMs;
  const chunks: [number, number][] = [];
  let from = 0;
  for (let i = 1; i < words.length; i++) {
    const span = words[i - 1].endMs - words[from].startMs;
    if (gap(i) >= gapMs && span >= chunkMs) {
      chunks.push([from, i]);
      from = i;
    } else if (words[i].endMs - words[from].startMs > maxChunkMs) {
      let at = i;
      for (let k = from + 1; k <= i; k++) if (gap(k) > gap(at)) at = k;
      chunks.push([from, at]);
      from = at;
    }
  }
  if (words.length > 0) chunks.push([from, words.length]);
  return chunks;
}

const roundWord = (w: RecognizedWord, aligned: boolean): RefinedWord => ({
  ...w,
  startMs: Math.round(w.startMs),
  endMs: Math.round(w.endMs),
  aligned,
});

/** Word times of `words` (recognized in `wavPath`) refined by forced alignment; same order and length. */
export async function refineWordTimes(
  wavPath: string,
  words: readonly RecognizedWord[],
  opts: RefineOptions,
): Promise<RefinedWord[]> {
  return (await alignRecognizedWords(wavPath, words, opts)).words;
}

/**
 * As refineWordTimes, plus the phones of every word that was aligned (ms from the start of the file;
 * `word` = the index into `words`; pauses inside a chunk as `sil`).
 */
export async function alignRecognizedWords(
  wavPath: string,
  words: readonly RecognizedWord[],
  opts: RefineOptions,
): Promise<{ words: RefinedWord[]; phonemes: TimedPhoneme[] }> {
  const out = words.map((w) => roundWord(w, false));
  const phonemes: TimedPhoneme[] = [];
  if (words.length === 0) return { words: out, phonemes };
  const align = opts.align ?? alignTranscript;
  const maxShiftMs = opts.maxShiftMs ?? 1000;
  const durationMs = Math.round(((await probeMedia(wavPath)).durationSeconds ?? 0) * 1000);
  const dir = await mkdtemp(join(opts.workDir, 'refine-'));
  const chunks = chunkWords(words, opts);
  for (const [n, [from, to]] of chunks.entries()) {
    opts.signal?.throwIfAborted();
    if (opts.only && !words.slice(from, to).some((_, j) => opts.only!.has(from + j))) continue;
    // Window edges in the middle of the pauses around the chunk (the file's ends for the outer ones).
    const lo = from === 0 ? 0 : Math.round((words[from - 1].endMs + words[from].startMs) / 2);
    const hi = to === words.length ? durationMs : Math.round((words[to - 1].endMs + words[to].startMs) / 2);
    if (hi - lo < 50) continue;
    // Each word as the aligner will spell it ("5" -> "five"), so its tokens map back to it.
    const spelled = words.slice(from, to).map((w) => transcriptWords(w.text).map((t) => t.text));
    const text = spelled.flat().join(' ');
    if (text === '') continue;
    const window = join(dir, `chunk-${n}.wav`);
    let timeline: SpeechTimeline;
    try {
      await runFfmpeg(
        ['-ss', (lo / 1000).toFixed(3), '-t', ((hi - lo) / 1000).toFixed(3), '-i', wavPath].concat([
          '-vn',
          '-ac',
          '1',
          '-ar',
          '16000',
          '-c:a',
          'pcm_s16le',
          window,
        ]),
        { signal: opts.signal, timeoutMs: 120_000 },
      );
      timeline = await align(window, text, { workDir: dir, signal: opts.signal });
    } catch (err) {
      opts.signal?.throwIfAborted();
      // No process slot is an overload, not a mismatch: the job is retried (see articulate).
      if (isNoProcessSlot(err)) throw err;
      // The audio does not match these words: they keep the recognizer's times.
      continue;
    }
    const aligned = timeline.words;
    if (aligned.length !== spelled.reduce((n2, s) => n2 + s.length, 0)) continue;
    let k = 0;
    // Aligner token index -> index into `words`, for the phones of the words that were placed.
    const wordOfToken = new Map<number, number>();
    spelled.forEach((tokens, j) => {
      if (tokens.length === 0) return;
      const first = aligned[k];
      const last = aligned[k + tokens.length - 1];
      const i = from + j;
      const startMs = lo + first.startMs;
      if (Math.abs(startMs - words[i].startMs) <= maxShiftMs) {
        out[i] = { ...words[i], startMs, endMs: lo + last.endMs, aligned: true };
        for (let t = k; t < k + tokens.length; t++) wordOfToken.set(t, i);
      }
      k += tokens.length;
    });
    for (const p of timeline.phonemes) {
      const word = p.word === undefined ? undefined : wordOfToken.get(p.word);
      if (p.word !== undefined && word === undefined) continue;
      phonemes.push({
        phone: p.phone,
        startMs: lo + p.startMs,
        endMs: lo + p.endMs,
        ...(word === undefined ? {} : { word }),
      });
    }
  }
  return { words: out, phonemes };
}
