// The reporting side of a preview: source words retimed onto the preview's clock, and the slots
// whose synthesized words lack the background the source has under its speech.
import { msToSamples, noiseFloor, samplesToMs } from './pcm.js';
import type { Piece } from './splice.js';
import type { PreviewResult, SourceWord } from './types.js';
import type { ResolvedEdit } from './validate.js';

/**
 * A background under the speech above this (dBFS, pcm.ts noiseFloor) is missing from synthesized words;
 * the fixtures' floors (2nd percentile of 20 ms frames) measure -54 to -58 dBFS.
 */
const BACKGROUND_DBFS = -50;

export interface SlotPlan {
  kind: 'change' | 'remove';
  /** The piece the slot's output position is measured from and the offset into it. */
  anchor: Piece;
  anchorOffset: number;
  outputLength: number;
  sourceStart: number;
  sourceEnd: number;
  newWords: { id: string; text: string; start: number; end: number }[];
  reused: string[];
  synthesized: boolean;
}

/** Synthesized words carry no room tone: where the source has an audible background, say so. */
export function backgroundCheck(
  plans: SlotPlan[],
  samples: Int16Array,
  rate: number,
): PreviewResult['partial'] {
  const around = rate * 3;
  const limit = 32768 * 10 ** (BACKGROUND_DBFS / 20);
  const failed = plans.flatMap((p, i) =>
    p.synthesized && noiseFloor(samples, p.sourceStart - around, p.sourceEnd + around, rate) > limit
      ? [i]
      : [],
  );
  return failed.length > 0 ? { failedSlots: failed, reason: 'background_bed_missing' } : null;
}

/** The window's words on the preview's clock: source words through the stretch they sit in, new words at their slot. */
export function retime(
  words: readonly SourceWord[],
  resolved: ResolvedEdit[],
  plans: SlotPlan[],
  sourcePieces: Piece[],
  outAt: Map<Piece, number>,
  w: { ws: number; we: number; rate: number; slotStart: (p: SlotPlan) => number },
): SourceWord[] {
  const map = (x: number): number => {
    let best = 0;
    let bestD = Infinity;
    for (const p of sourcePieces) {
      const c = Math.min(Math.max(x, p.start), p.end);
      if (Math.abs(c - x) < bestD) [best, bestD] = [outAt.get(p)! + c - p.start, Math.abs(c - x)];
    }
    return best;
  };
  const byFirst = new Map(resolved.map((r, i) => [r.first, { r, plan: plans[i] }]));
  const out: SourceWord[] = [];
  const ms = (n: number) => samplesToMs(n, w.rate);
  for (let i = 0; i < words.length; i++) {
    const word = words[i];
    const e = byFirst.get(i);
    if (e) {
      const base = w.slotStart(e.plan);
      for (const nw of e.plan.newWords) {
        out.push({
          id: nw.id,
          text: nw.text,
          startMs: ms(base + nw.start),
          endMs: Math.max(ms(base + nw.start) + 1, ms(base + nw.end)),
        });
      }
      i = e.r.last;
      continue;
    }
    const a = msToSamples(word.startMs, w.rate);
    const b = msToSamples(word.endMs, w.rate);
    if (a < w.ws || b > w.we) continue;
    const start = ms(map(a));
    out.push({ ...word, startMs: start, endMs: Math.max(start + 1, ms(map(b))) });
  }
  return out;
}
