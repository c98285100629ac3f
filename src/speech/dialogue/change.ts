// The audio that replaces a changed word: each replacement word the speaker says elsewhere is cut
// from there; runs of the others are synthesized in the matched voice. Every piece is trimmed at a
// quiet point and loudness-matched to the speech around the edit.
import { transcriptWords } from '../text.js';
import type { AlignTranscript, SynthesisProvider } from '../types.js';
import { msToSamples, quietestCut, rms, type Pcm } from './pcm.js';
import { findOccurrence, locateOccurrence, wordKey } from './reuse.js';
import { limitGain, matchGain, type Piece } from './splice.js';
import { speak, type MatchedVoice } from './synth.js';
import { CUT_SEARCH_MS, QUIET_WINDOW_MS, type SourceWord } from './types.js';

/** Reused words keep their own level relative to their context: at most this much correction. */
const REUSE_MAX_DB = 6;
/** Synthesized speech has an arbitrary level: it may be moved this far to match. */
const SYNTH_MAX_DB = 20;
/** Silence kept around synthesized words (the cut is then placed at its quietest point). */
const SYNTH_EDGE_MS = 20;

export interface ChangeContext {
  pcm: Pcm;
  words: readonly SourceWord[];
  /** Indices of every word inside an edit (never reused from). */
  edited: ReadonlySet<number>;
  provider: SynthesisProvider;
  align: AlignTranscript;
  /** Resolves the matched voice on first use (measuring it costs a Praat run). */
  voice: () => Promise<MatchedVoice | null>;
  workDir: string;
  signal?: AbortSignal;
}

export interface Replacement {
  pieces: Piece[];
  /** New words with spans relative to the start of the replacement, in samples. */
  words: { text: string; start: number; end: number }[];
  reused: string[];
  synthesized: boolean;
}

/** Up to two unedited words either side of `index`: the speech a level is matched to. */
export function contextSpans(
  words: readonly SourceWord[],
  edited: ReadonlySet<number>,
  first: number,
  last: number,
  rate: number,
): [number, number][] {
  const spans: [number, number][] = [];
  const add = (i: number) =>
    spans.push([msToSamples(words[i].startMs, rate), msToSamples(words[i].endMs, rate)]);
  const take = (from: number, step: number) => {
    for (let i = from, n = 0; i >= 0 && i < words.length && n < 2; i += step) {
      if (edited.has(i)) continue;
      add(i);
      n++;
    }
  };
  take(first - 1, -1);
  take(last + 1, 1);
  return spans;
}

export async function buildReplacement(
  ctx: ChangeContext,
  wordIndex: number,
  edit: { replacement: string; pronunciation?: string },
  tag: string,
): Promise<Replacement> {
  const { pcm, words, edited } = ctx;
  const rate = pcm.sampleRate;
  const search = msToSamples(CUT_SEARCH_MS, rate);
  const inward = msToSamples(5, rate);
  const quiet = msToSamples(QUIET_WINDOW_MS, rate);
  const targetRms = rms(pcm.samples, contextSpans(words, edited, wordIndex, wordIndex, rate));
  const display = transcriptWords(edit.replacement).map((w) => w.text);
  const out: Replacement = { pieces: [], words: [], reused: [], synthesized: false };
  let length = 0;
  const push = (p: Piece, spans: { text: string; start: number; end: number }[]) => {
    p.gain = limitGain(p);
    out.pieces.push(p);
    // A cut may fall a few ms inside a word's aligned edge: the word is where the piece is.
    const at = (x: number) => Math.min(Math.max(x, p.start), p.end) - p.start + length;
    for (const s of spans) out.words.push({ text: s.text, start: at(s.start), end: at(s.end) });
    length += p.end - p.start;
  };

  // A pronunciation is what must be heard, so it is always synthesized as a whole.
  const runs: { reuse: number | null; texts: string[] }[] = [];
  for (const text of edit.pronunciation === undefined ? display : []) {
    const occ = findOccurrence(wordKey(text), words, edited, words[wordIndex].startMs);
    const last = runs.at(-1);
    if (occ === null && last && last.reuse === null) last.texts.push(text);
    else runs.push({ reuse: occ, texts: [text] });
  }
  if (edit.pronunciation !== undefined) runs.push({ reuse: null, texts: display });

  for (const [r, run] of runs.entries()) {
    if (run.reuse !== null) {
      const occ = await locateOccurrence(pcm, words, run.reuse, ctx.align, {
        workDir: ctx.workDir,
        signal: ctx.signal,
        tag: `${tag}-${r}`,
      });
      const start = quietestCut(
        pcm.samples,
        occ.start,
        Math.max(occ.lo, occ.start - search),
        occ.start + inward,
        quiet,
      );
      const end = quietestCut(
        pcm.samples,
        occ.end,
        occ.end - inward,
        Math.min(occ.hi, occ.end + search),
        quiet,
      );
      const own = rms(pcm.samples, contextSpans(words, edited, run.reuse, run.reuse, rate));
      push({ buf: pcm.samples, start, end, gain: matchGain(targetRms, own, REUSE_MAX_DB) }, [
        { text: run.texts[0], start: occ.start, end: occ.end },
      ]);
      out.reused.push(run.texts[0]);
      continue;
    }
    const spoken = await speak(
      edit.pronunciation ?? run.texts.join(' '),
      await ctx.voice(),
      ctx.provider,
      rate,
      ctx,
    );
    const first = spoken.words[0].start;
    const lastEnd = spoken.words[spoken.words.length - 1].end;
    const edge = msToSamples(SYNTH_EDGE_MS, rate);
    const start = quietestCut(spoken.samples, first, first - edge, first, quiet);
    const end = quietestCut(spoken.samples, lastEnd, lastEnd, lastEnd + edge, quiet);
    const level = rms(
      spoken.samples,
      spoken.words.map((w) => [w.start, w.end]),
    );
    push(
      { buf: spoken.samples, start, end, gain: matchGain(targetRms, level, SYNTH_MAX_DB) },
      spansFor(run.texts, spoken.words),
    );
    out.synthesized = true;
  }
  return out;
}

/**
 * The written words' spans in a synthesized run: the synthesizer's own words when they correspond one
 * to one; otherwise (a pronunciation with other words) the spoken stretch shared by character count.
 */
function spansFor(
  texts: string[],
  spoken: { text: string; start: number; end: number }[],
): { text: string; start: number; end: number }[] {
  if (spoken.length === texts.length)
    return texts.map((text, i) => ({ text, start: spoken[i].start, end: spoken[i].end }));
  const from = spoken[0].start;
  const span = spoken[spoken.length - 1].end - from;
  const total = texts.reduce((a, t) => a + t.length, 0);
  let acc = 0;
  return texts.map((text) => {
    const start = from + Math.round((span * acc) / total);
    acc += text.length;
    return { text, start, end: from + Math.round((span * acc) / total) };
  });
}
