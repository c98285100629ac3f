// Re-dubbing (docs/dubbing.md, "Re-dubbing segments"; ADR 24): a new generation made from an earlier
// completed dub with some segments corrected. Which earlier generations qualify, which corrections
// are valid against its transcript, and the new timing plan: corrected segments are fitted again,
// the others keep their plan (their audio is reused byte for byte). Pure.
import { AppError } from './errors.js';
import { completedDub, type DubbedGeneration } from './dub-reads.js';
import { fitSegment, type DubSegmentPlan } from './dub-timing.js';
import type { DubKept, DubRecord, DubSegment, DubSegmentEdit } from './dub.js';

/** An earlier dub that a re-dub can reuse: completed, with each segment's audio kept. */
export type RedubBase = DubRecord & { kept: DubKept; timeline: NonNullable<DubRecord['timeline']> };

const FIELD = 'dubParams.basedOn';

/**
 * The dub a re-dub is based on, or the refusal: unknown (or another organization's, or deleted) 404
 * generation_not_found; not a dub 422 generation_not_dubbed (the request is what is wrong); still
 * running 409 generation_not_ready; ended without output 422 generation_not_downloadable; a dub
 * that kept no segment audio (made before re-dubs existed, or too long) 422 generation_output_unavailable.
 */
export function redubBase(g: DubbedGeneration | null): RedubBase {
  if (!g) throw new AppError('generation_not_found', { field: FIELD });
  let dub: DubRecord;
  try {
    dub = completedDub(g);
  } catch (err) {
    if (!(err instanceof AppError)) throw err;
    throw new AppError(err.code, {
      field: FIELD,
      ...(err.code === 'generation_not_dubbed' ? { status: 422 } : {}),
      message: `dubParams.basedOn: ${err.message}`,
      cause: err,
    });
  }
  const { kept, timeline } = dub;
  if (!kept || !timeline || kept.clips.length !== dub.segments.length)
    throw new AppError('generation_output_unavailable', {
      status: 422,
      field: FIELD,
      message: 'That dub kept no audio per segment (made before re-dubs, or too long): dub the video again.',
    });
  return { ...dub, kept, timeline };
}

/**
 * A corrected text may hold at most this many characters per second of its room, plus
 * REDUB_TEXT_ALLOWANCE_CHARS. Fast speech is about 7-8 syllables a second in most languages, 15 to
 * 20 letters in alphabetic scripts (fewer characters in CJK ones); twice that is text no stretch
 * can fit, so the bound refuses only what could never be spoken in its place, while keeping what
 * one correction may cost (speech synthesized, audio mixed) in proportion to the video.
 */
export const REDUB_TEXT_CHARS_PER_SECOND = 30;
/** So that a very short segment can still say a short phrase ("¡Claro que sí!"). */
export const REDUB_TEXT_ALLOWANCE_CHARS = 20;

/** The longest corrected text for a segment with `roomMs` to speak in. */
export function maxRedubTextChars(roomMs: number): number {
  return Math.floor((Math.max(0, roomMs) * REDUB_TEXT_CHARS_PER_SECOND) / 1000) + REDUB_TEXT_ALLOWANCE_CHARS;
}

/**
 * The corrections checked against the earlier transcript and its video (`videoMs` long): every id
 * is one of its segments; a new span ends within the video and keeps the segments in time order
 * (a segment starts no earlier than the one before it and no later than the one after it); a new
 * text fits its room (from its start to the next segment's start, or to the video's end) at
 * maxRedubTextChars. Returns the corrections by segment id.
 */
export function checkEdits(
  base: DubRecord,
  edits: readonly DubSegmentEdit[],
  videoMs: number,
): ReadonlyMap<string, DubSegmentEdit> {
  const ids = base.segments.map((s) => s.id);
  const byId = new Map<string, DubSegmentEdit>();
  edits.forEach((e, i) => {
    if (!ids.includes(e.id))
      throw new AppError('invalid_request', {
        field: `dubParams.segments[${i}].id`,
        message: `The earlier dub has no segment ${JSON.stringify(e.id)} (its segments: ${ids.slice(0, 20).join(', ')}${ids.length > 20 ? ', …' : ''}).`,
      });
    byId.set(e.id, e);
  });
  // The video's length bounds the mix, the output and the price: a span past it is refused.
  edits.forEach((e, i) => {
    if (e.startMs === undefined || e.endMs === undefined) return;
    const k = e.startMs >= videoMs ? 'startMs' : e.endMs > videoMs ? 'endMs' : null;
    if (k)
      throw new AppError('invalid_request', {
        field: `dubParams.segments[${i}].${k}`,
        message: `Segment ${e.id} would end after the video (${videoMs} ms long).`,
      });
  });
  const spans = spansOf(base.segments, byId);
  const starts = spans.map((s) => s.startMs);
  edits.forEach((e, i) => {
    if (e.startMs === undefined) return;
    const k = ids.indexOf(e.id);
    if ((k > 0 && starts[k] < starts[k - 1]) || (k + 1 < starts.length && starts[k] > starts[k + 1]))
      throw new AppError('invalid_request', {
        field: `dubParams.segments[${i}].startMs`,
        message: `Segment ${e.id} would start before the segment before it or after the one after it.`,
      });
  });
  edits.forEach((e, i) => {
    if (e.translatedText === undefined) return;
    const k = ids.indexOf(e.id);
    const roomMs = Math.max(spans[k].endMs, starts[k + 1] ?? videoMs) - spans[k].startMs;
    const max = maxRedubTextChars(roomMs);
    const chars = [...e.translatedText].length;
    if (chars > max)
      throw new AppError('invalid_request', {
        field: `dubParams.segments[${i}].translatedText`,
        message: `Segment ${e.id} has ${roomMs} ms to speak in: its text may hold at most ${max} characters (${chars} given).`,
      });
  });
  return byId;
}

/**
 * The speakers of `voices` whose voice changes (a speaker named with the voice it already has keeps
 * its audio). Every one must be a speaker of the earlier dub (400 invalid_request on its field).
 */
export function changedVoices(
  base: DubRecord,
  voices: Readonly<Record<string, string>>,
): Record<string, string> {
  const speakers = base.voices.map((v) => v.speaker);
  const out: Record<string, string> = {};
  for (const [speaker, voiceId] of Object.entries(voices)) {
    const now = base.voices.find((v) => v.speaker === speaker);
    if (!now)
      throw new AppError('invalid_request', {
        field: `dubParams.voices.${speaker}`,
        message: `The earlier dub has no speaker ${JSON.stringify(speaker)} (its speakers: ${speakers.join(', ')}).`,
      });
    if (now.voiceId !== voiceId) out[speaker] = voiceId;
  }
  return out;
}

/**
 * What a re-dub speaks anew: the corrected segments, and every segment of a speaker given another
 * voice (with its translation and span as they are, unless corrected too). The rest is reused.
 */
export function respoken(
  base: DubRecord,
  edits: ReadonlyMap<string, DubSegmentEdit>,
  revoiced: readonly string[],
): ReadonlyMap<string, DubSegmentEdit> {
  const out = new Map(edits);
  for (const s of base.segments)
    if (revoiced.includes(s.speaker) && !out.has(s.id)) out.set(s.id, { id: s.id });
  return out;
}

/** Each segment's source span and translation after the corrections. */
function spansOf(
  segments: readonly DubSegment[],
  edits: ReadonlyMap<string, DubSegmentEdit>,
): { startMs: number; endMs: number; text: string }[] {
  return segments.map((s) => {
    const e = edits.get(s.id);
    return {
      startMs: e?.startMs ?? s.startMs,
      endMs: e?.endMs ?? s.endMs,
      text: e?.translatedText ?? s.translatedText,
    };
  });
}

/**
 * The re-dub's segments and plans. A corrected segment is fitted again (fitSegment) with its new
 * speech length, from its span up to the next segment's start; every other segment keeps where its
 * speech sits and its stretch, and only whether it fits is measured again (a neighbour's span may
 * have moved). `speechMs` gives the new synthesized length of every corrected segment.
 */
export function replanRedub(
  base: DubRecord,
  edits: ReadonlyMap<string, DubSegmentEdit>,
  speechMs: ReadonlyMap<string, number>,
  durationMs: number,
): { segments: DubSegment[]; plans: DubSegmentPlan[] } {
  const spans = spansOf(base.segments, edits);
  const plans = base.segments.map((s, i): DubSegmentPlan => {
    const span = spans[i];
    const nextStartMs = spans[i + 1]?.startMs ?? Math.max(durationMs, span.endMs);
    const room = Math.max(span.endMs, nextStartMs);
    if (edits.has(s.id)) {
      const ms = speechMs.get(s.id);
      if (ms === undefined) throw new Error(`segment ${s.id} was corrected but not spoken again`);
      return fitSegment({ startMs: span.startMs, endMs: span.endMs, nextStartMs, speechMs: ms });
    }
    return {
      startMs: s.dubStartMs,
      endMs: s.dubEndMs,
      stretch: s.stretch,
      usedPauseMs: Math.max(0, Math.min(s.dubEndMs, room) - span.endMs),
      fits: s.dubEndMs <= room,
    };
  });
  const segments = base.segments.map((s, i): DubSegment => ({
    ...s,
    startMs: spans[i].startMs,
    endMs: spans[i].endMs,
    translatedText: spans[i].text,
    dubStartMs: plans[i].startMs,
    dubEndMs: plans[i].endMs,
    stretch: edits.has(s.id) ? Math.round(plans[i].stretch * 1000) / 1000 : s.stretch,
    fits: plans[i].fits,
  }));
  return { segments, plans };
}

type Timeline = NonNullable<DubRecord['timeline']>;

/**
 * Appends a reused segment's words and phones, as the earlier dub placed them, to a timeline being
 * built: its phones' word indexes follow its words to where they now sit.
 */
export function appendKeptTimeline(
  into: Timeline,
  from: Timeline,
  range: { words: readonly [number, number]; phonemes: readonly [number, number] },
): void {
  const [wa, wb] = range.words;
  const base = into.words.length;
  into.words.push(...from.words.slice(wa, wb).map((w) => ({ ...w })));
  into.phonemes.push(
    ...from.phonemes
      .slice(range.phonemes[0], range.phonemes[1])
      .map((p) => (p.word === undefined ? { ...p } : { ...p, word: p.word - wa + base })),
  );
}
