// Builds a dialogue-edit preview (issue 11; DESIGN "Dialogue edits"): the source window everywhere
// except the edited spans; a change is replaced by reused or synthesized words (change.ts), a removal
// closes its gap down to a breath-length pause; every cut sits at the quietest few ms near its place
// and every join is crossfaded (splice.ts).
import { join } from 'node:path';
import { alignTranscript } from '../align.js';
import { LocalSynthesisProvider } from '../local-provider.js';
import { buildReplacement, type ChangeContext } from './change.js';
import { msToSamples, quietestCut, readPcm, samplesToMs, writePcm } from './pcm.js';
import { assemble, type Piece } from './splice.js';
import { matchVoice, type MatchedVoice } from './synth.js';
import {
  BREATH_PAUSE_MS,
  CROSSFADE_MS,
  CUT_SEARCH_MS,
  DialogueEditError,
  EditTooLongError,
  MAX_SPAN_EXTRA_MS,
  MAX_SPAN_FACTOR,
  QUIET_WINDOW_MS,
  type PreviewInput,
  type PreviewResult,
  type PreviewSlot,
} from './types.js';
import { validateEdits } from './validate.js';
import { backgroundCheck, retime, type SlotPlan } from './result.js';

export async function buildPreview(input: PreviewInput): Promise<PreviewResult> {
  const { workDir, signal, words } = input;
  const provider = input.provider ?? new LocalSynthesisProvider();
  const pcm = await readPcm(input.sourceWav, { workDir, signal });
  const rate = pcm.sampleRate;
  const S = (ms: number) => msToSamples(ms, rate);
  const durationMs = samplesToMs(pcm.samples.length, rate);
  const resolved = validateEdits(words, input.edits, { sourceDurationMs: durationMs });
  const winStartMs = input.windowStartMs ?? 0;
  const winEndMs = Math.min(input.windowEndMs ?? durationMs, durationMs);
  if (!(winStartMs >= 0 && winEndMs > winStartMs)) {
    throw new DialogueEditError(
      'window_invalid',
      'startMs',
      `the window ${winStartMs}..${winEndMs} ms is empty`,
    );
  }
  const ws = S(winStartMs);
  const we = S(winEndMs);
  for (const r of resolved) {
    if (words[r.first].startMs < winStartMs || words[r.last].endMs > winEndMs) {
      throw new DialogueEditError(
        'word_outside_window',
        `edits[${r.index}]`,
        'an edited word lies outside the window',
      );
    }
  }
  const edited = new Set(resolved.flatMap((r) => range(r.first, r.last)));
  const voice: { pending: Promise<MatchedVoice | null> | null } = { pending: null };
  const ctx: ChangeContext = {
    pcm,
    words,
    edited,
    provider,
    align: input.align ?? alignTranscript,
    voice: () =>
      (voice.pending ??= matchVoice(
        input.voice,
        { samples: pcm.samples.subarray(ws, we), sampleRate: rate },
        provider,
        { workDir, signal },
      )),
    workDir,
    signal,
  };

  const search = S(CUT_SEARCH_MS);
  const inward = S(5);
  const quiet = S(QUIET_WINDOW_MS);
  const half = Math.max(1, Math.round(S(CROSSFADE_MS) / 2));
  const pieces: Piece[] = [];
  const plans: SlotPlan[] = [];
  const stretches: Piece[] = []; // the source's own stretches (not reused words)
  let cursor = ws; // where the next stretch of the source begins
  const sourceUpTo = (end: number): Piece => {
    const p: Piece = { buf: pcm.samples, start: cursor, end: Math.max(cursor, end), gain: 1 };
    pieces.push(p);
    stretches.push(p);
    return p;
  };

  for (const r of resolved) {
    signal?.throwIfAborted();
    // Cuts stay between the neighbouring words and after the previous edit's last cut.
    const prevEnd = Math.max(cursor, r.first > 0 ? S(words[r.first - 1].endMs) : ws);
    const nextStart = Math.min(we, r.last + 1 < words.length ? S(words[r.last + 1].startMs) : we);
    const spanStart = S(words[r.first].startMs);
    const spanEnd = S(words[r.last].endMs);
    if (r.edit.kind === 'change') {
      const floor = Math.min(spanStart, cursor + 2 * half);
      const cutA = quietestCut(
        pcm.samples,
        spanStart,
        Math.max(prevEnd, floor, spanStart - search),
        spanStart + inward,
        quiet,
      );
      const cutB = quietestCut(
        pcm.samples,
        spanEnd,
        spanEnd - inward,
        Math.min(nextStart, spanEnd + search),
        quiet,
      );
      const rep = await buildReplacement(ctx, r.first, r.edit, String(r.index));
      const length = rep.pieces.reduce((a, p) => a + p.end - p.start, 0);
      if (length > MAX_SPAN_FACTOR * (cutB - cutA) + S(MAX_SPAN_EXTRA_MS)) {
        throw new EditTooLongError(
          r.edit.replacement,
          [r.edit.wordId],
          samplesToMs(cutB - cutA, rate),
          samplesToMs(length, rate),
        );
      }
      const before = sourceUpTo(cutA);
      pieces.push(...rep.pieces);
      cursor = cutB;
      plans.push({
        kind: 'change',
        anchor: before,
        anchorOffset: before.end - before.start,
        outputLength: length,
        sourceStart: cutA,
        sourceEnd: cutB,
        newWords: rep.words.map((w, k) => ({ ...w, id: `${words[r.first].id}_e${k}` })),
        reused: rep.reused,
        synthesized: rep.synthesized,
      });
      continue;
    }
    // A removal keeps a breath of the silence that was around the removed words, split between them.
    const gapBefore = Math.max(0, spanStart - prevEnd);
    const gapAfter = Math.max(0, nextStart - spanEnd);
    const pause = Math.min(S(BREATH_PAUSE_MS), gapBefore + gapAfter);
    let keepBefore = Math.min(Math.round(pause / 2), gapBefore);
    const keepAfter = Math.min(pause - keepBefore, gapAfter);
    keepBefore = pause - keepAfter;
    const tA = prevEnd + keepBefore;
    const tB = nextStart - keepAfter;
    const cutA = quietestCut(
      pcm.samples,
      tA,
      Math.max(prevEnd, tA - search),
      Math.min(spanStart, tA + search),
      quiet,
    );
    const cutB = quietestCut(
      pcm.samples,
      tB,
      Math.max(spanEnd, tB - search),
      Math.min(nextStart, tB + search),
      quiet,
    );
    const before = sourceUpTo(cutA);
    cursor = Math.max(cutA, cutB);
    plans.push({
      kind: 'remove',
      anchor: before,
      anchorOffset: Math.max(0, prevEnd - before.start),
      outputLength: Math.max(0, cutA - prevEnd) + Math.max(0, nextStart - cursor),
      sourceStart: Math.min(prevEnd, cutA),
      sourceEnd: Math.max(nextStart, cursor),
      newWords: [],
      reused: [],
      synthesized: false,
    });
  }
  sourceUpTo(we);

  // Empty stretches (two edits sharing a cut) would put a hard join between their neighbours.
  const { samples } = assemble(
    pieces.filter((p) => p.end > p.start),
    half,
  );
  const outAt = new Map<Piece, number>();
  pieces.reduce((pos, p) => (outAt.set(p, pos), pos + p.end - p.start), 0);
  const previewWav = join(workDir, 'preview.wav');
  await writePcm(previewWav, { samples, sampleRate: rate });

  const slotStart = (p: SlotPlan) => (outAt.get(p.anchor) ?? 0) + p.anchorOffset;
  const slots: PreviewSlot[] = plans.map((p) => ({
    kind: p.kind,
    outputStartMs: samplesToMs(slotStart(p), rate),
    outputDurationMs: samplesToMs(p.outputLength, rate),
    sourceStartMs: samplesToMs(p.sourceStart, rate),
    sourceDurationMs: samplesToMs(p.sourceEnd - p.sourceStart, rate),
  }));

  const partial = backgroundCheck(plans, pcm.samples, rate);
  return {
    previewWav,
    previewDurationMs: samplesToMs(samples.length, rate),
    resultWords: retime(words, resolved, plans, stretches, outAt, { ws, we, rate, slotStart }),
    slots,
    partial,
    reused: plans.flatMap((p, slot) => (p.reused.length > 0 ? [{ slot, words: p.reused }] : [])),
    voiceProfile: voice.pending ? ((await voice.pending)?.profile ?? null) : null,
  };
}

function range(a: number, b: number): number[] {
  return Array.from({ length: b - a + 1 }, (_, i) => a + i);
}
