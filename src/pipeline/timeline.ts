// An audio input's timeline (phonemes, speech spans) in output time: the conform plan decides which part
// of the audio plays when (cut, padded, or windows placed at segments), and the engine shapes the mouth
// per sound at the frame where that sound is heard.
import type { ConformPlan } from '../media/conform-plan.js';

interface Span {
  startMs: number;
  endMs: number;
}

function shifted<T extends Span>(items: readonly T[], fromMs: number, toMs: number, offsetMs: number): T[] {
  const out: T[] = [];
  for (const p of items) {
    if (p.endMs <= fromMs || p.startMs >= toMs) continue;
    out.push({
      ...p,
      startMs: Math.max(p.startMs, fromMs) + offsetMs,
      endMs: Math.min(p.endMs, toMs) + offsetMs,
    });
  }
  return out;
}

/** Timed items (ms from the audio input's start) as heard in the output (ms from its first frame). */
export function inOutputTime<T extends Span>(items: readonly T[], plan: ConformPlan): T[] {
  const totalMs = Math.round(plan.durationSeconds * 1000);
  if (plan.segments.length > 0) {
    return plan.segments.flatMap((s) => {
      const from = Math.round(s.audioStart * 1000);
      const to = Math.round(s.audioEnd * 1000);
      // The window plays from the segment's start; what is past the segment's end is cut.
      const room = Math.round((s.endTime - s.startTime) * 1000);
      return shifted(items, from, Math.min(to, from + room), Math.round(s.startTime * 1000) - from);
    });
  }
  const used = plan.audio.strategy === 'cut' ? Math.round(plan.audio.usedSeconds * 1000) : totalMs;
  return shifted(items, 0, Math.min(used, totalMs), 0);
}

/**
 * Timed items (ms from the audio input's start) as heard in a window of the output (a preview): on
 * the window's clock, from its first frame, cut at its end. Without a window, inOutputTime.
 */
export function inWindowTime<T extends Span>(
  items: readonly T[],
  plan: ConformPlan,
  window: { startSeconds: number; durationSeconds: number } | null,
): T[] {
  const all = inOutputTime(items, plan);
  if (!window) return all;
  const from = Math.round(window.startSeconds * 1000);
  return shifted(all, from, from + Math.round(window.durationSeconds * 1000), -from);
}
