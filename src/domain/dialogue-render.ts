// Rendering a dialogue-edit preview into video (POST /v2/generate with dialogueEdit): which previews can
// be rendered and which spans the engine redraws. Pure: the service looks the preview up, this decides.
import { AppError } from './errors.js';
import { assertRolloutFlags } from './dialogue-edits.js';

/** A preview slot as the dialogue_edit job stored it (ms; output = the preview's clock). */
export interface RenderSlot {
  kind: 'change' | 'remove';
  outputStartMs: number;
  outputDurationMs: number;
  sourceStartMs: number;
  sourceDurationMs: number;
}

/** What a generation keeps of its preview (in the stored request), so the job needs no lookup. */
export interface DialogueRender {
  id: string;
  previewKey: string;
  previewDurationMs: number;
  sourceKey: string;
  slots: RenderSlot[];
  /** The preview's words in order: aligned to the preview to shape the mouth per sound. */
  transcript?: string;
}

/**
 * The most picture a removal may drop from one slot. Dropped frames make the head jump from where it was
 * to where it will be. Between gestures a talking head holds its pose for a second or two, so within
 * about 1.2 s the jump is a small shift that reads as a quick movement; beyond it the cut is likely to
 * land mid-gesture and reads as a jump cut. With the 200 ms breath a preview keeps, this lets a filler
 * or a short phrase of two or three words go, and refuses dropping a clause.
 */
export const MAX_REMOVAL_DROP_MS = 1200;

/** Around each slot the engine also redraws this much, so the mouth eases in and out of new speech. */
export const SLOT_MARGIN_MS = 80;

/** Rule 6: rendering retimes sections, which needs both rollout flags (readable ones). */
export function assertRetimeAllowed(org: { flags: readonly string[]; flagsReadable: boolean }): void {
  assertRolloutFlags(org, 'dialogueEdit');
}

/**
 * The first removal that drops more than MAX_REMOVAL_DROP_MS of picture: 422 with its section. The
 * rule depends only on the stored slots, so retrying the same preview fails the same way.
 */
export function assertRemovalsAbsorbable(slots: readonly RenderSlot[]): void {
  slots.forEach((s, slotIndex) => {
    const dropped = s.sourceDurationMs - s.outputDurationMs;
    if (s.kind === 'remove' && dropped > MAX_REMOVAL_DROP_MS)
      throw new AppError('dialogue_edit_removal_too_large', {
        field: 'dialogueEdit',
        message: `Slot ${slotIndex} removes ${Math.round(dropped)} ms of footage; at most ${MAX_REMOVAL_DROP_MS} ms can be absorbed without a visible jump.`,
        dialogueEditSection: {
          slotIndex,
          sourceStartMs: s.sourceStartMs,
          sourceDurationMs: s.sourceDurationMs,
        },
      });
  });
}

/** The engine's active spans (seconds, output time): the slots with a margin, clamped and merged. */
export function activeSpansOf(
  slots: readonly RenderSlot[],
  durationMs: number,
  marginMs = SLOT_MARGIN_MS,
): { start: number; end: number }[] {
  const spans = slots
    .map((s) => ({
      start: Math.max(0, s.outputStartMs - marginMs),
      end: Math.min(durationMs, s.outputStartMs + s.outputDurationMs + marginMs),
    }))
    .filter((s) => s.end > s.start)
    .sort((a, b) => a.start - b.start);
  const merged: { start: number; end: number }[] = [];
  for (const s of spans) {
    const last = merged[merged.length - 1];
    if (last && s.start <= last.end) last.end = Math.max(last.end, s.end);
    else merged.push({ ...s });
  }
  return merged.map((s) => ({ start: s.start / 1000, end: s.end / 1000 }));
}
