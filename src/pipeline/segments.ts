// Request segments (seconds or frames) to the conform stage's seconds, once the video's fps is known.
import type { SegmentSpec } from '../domain/generation-request.js';
import type { ConformSegment } from '../media/conform-plan.js';

export function toConformSegments(segments: readonly SegmentSpec[], fps: number): ConformSegment[] {
  return segments
    .map((s) =>
      s.unit === 'frames'
        ? { startTime: s.start / fps, endTime: s.end / fps }
        : { startTime: s.start, endTime: s.end, audioStart: s.audioStart, audioEnd: s.audioEnd },
    )
    .sort((a, b) => a.startTime - b.startTime);
}
