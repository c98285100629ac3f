// A synthesized audio input's phoneme timeline in output time: the conform plan decides which part of
// the audio plays when (cut, padded, or windows placed at segments), and the engine shapes the mouth
// per sound at the frame where that sound is heard.
import type { ConformPlan } from '../media/conform-plan.js';
import type { TimedPhoneme } from '../speech/types.js';

function shifted(
  phonemes: readonly TimedPhoneme[],
  fromMs: number,
  toMs: number,
  offsetMs: number,
): TimedPhoneme[] {
  const out: TimedPhoneme[] = [];
  for (const p of phonemes) {
    if (p.endMs <= fromMs || p.startMs >= toMs) continue;
    out.push({
      ...p,
      startMs: Math.max(p.startMs, fromMs) + offsetMs,
      endMs: Math.min(p.endMs, toMs) + offsetMs,
    });
  }
  return out;
}

export function phonemesInOutputTime(phonemes: readonly TimedPhoneme[], plan: ConformPlan): TimedPhoneme[] {
  const totalMs = Math.round(plan.durationSeconds * 1000);
  if (plan.segments.length > 0) {
    return plan.segments.flatMap((s) => {
      const from = Math.round(s.audioStart * 1000);
      const to = Math.round(s.audioEnd * 1000);
      // The window plays from the segment's start; what is past the segment's end is cut.
      const room = Math.round((s.endTime - s.startTime) * 1000);
      return shifted(phonemes, from, Math.min(to, from + room), Math.round(s.startTime * 1000) - from);
    });
  }
  const used = plan.audio.strategy === 'cut' ? Math.round(plan.audio.usedSeconds * 1000) : totalMs;
  return shifted(phonemes, 0, Math.min(used, totalMs), 0);
}
