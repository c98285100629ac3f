// Fitting translated speech into the time the source speaker used: each segment's synthesized
// sentence is time-stretched within limits that stay unobtrusive (speech sped up past about 1.25x or
// slowed below 0.8x starts to sound processed, with rubberband's R3 engine), and what still does not
// fit runs on into the pause after the segment, up to the next segment's start. Speech is never cut:
// a segment that fits nowhere keeps its whole length and is reported as not fitting.

export interface DubSegmentIn {
  /** The source speech span, ms. */
  startMs: number;
  endMs: number;
  /** Where the next segment starts (or the end of the media), ms: the pause after ends there. */
  nextStartMs: number;
  /** Length of the synthesized translated sentence, ms. */
  speechMs: number;
}

export interface DubSegmentPlan {
  startMs: number;
  /** Where the stretched speech ends; may pass `nextStartMs` only when `fits` is false. */
  endMs: number;
  /** Output length / synthesized length (below 1 speeds up). */
  stretch: number;
  /** Speech runs into the pause after the source span. */
  usedPauseMs: number;
  /** The speech ends by the next segment's start. */
  fits: boolean;
}

export interface StretchLimits {
  /** Fastest: the shortest output as a share of the synthesized length. */
  minStretch: number;
  /** Slowest. */
  maxStretch: number;
}

export const DEFAULT_STRETCH_LIMITS: StretchLimits = { minStretch: 0.8, maxStretch: 1.25 };

/** Stretches within this of 1 are left alone: nobody hears them, and the audio is not touched. */
const NEUTRAL = 0.02;

/**
 * One segment's plan. Speech longer than the span is sped up as far as the limit allows, then spills
 * into the pause; shorter speech is slowed toward the span (within the limit) and starts where the
 * source did, so lips and voice begin together.
 */
export function fitSegment(
  seg: DubSegmentIn,
  limits: StretchLimits = DEFAULT_STRETCH_LIMITS,
): DubSegmentPlan {
  const span = Math.max(0, seg.endMs - seg.startMs);
  const room = Math.max(span, seg.nextStartMs - seg.startMs);
  if (seg.speechMs <= 0)
    return { startMs: seg.startMs, endMs: seg.startMs, stretch: 1, usedPauseMs: 0, fits: true };
  let stretch = Math.min(limits.maxStretch, Math.max(limits.minStretch, span / seg.speechMs));
  // Left alone only where the untouched speech still fits: snapping 0.99 to 1 must not push it over.
  if (Math.abs(stretch - 1) < NEUTRAL && seg.speechMs <= room) stretch = 1;
  const out = Math.round(seg.speechMs * stretch);
  return {
    startMs: seg.startMs,
    endMs: seg.startMs + out,
    stretch,
    usedPauseMs: Math.max(0, Math.min(out, room) - span),
    fits: out <= room,
  };
}

/** Plans every segment (in time order); the report is the plans themselves. */
export function fitSegments(
  segs: readonly DubSegmentIn[],
  limits: StretchLimits = DEFAULT_STRETCH_LIMITS,
): DubSegmentPlan[] {
  return segs.map((s) => fitSegment(s, limits));
}
