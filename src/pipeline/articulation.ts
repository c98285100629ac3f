// The generation pipeline's articulation step: the phoneme timeline of the audio input (speech/
// articulation.ts) and what the quality report says of it, in output time.
import type { ConformPlan } from '../media/conform-plan.js';
import {
  articulate,
  type Articulation,
  type ArticulationDeps,
  type ArticulationInput,
  type ArticulationSource,
} from '../speech/articulation.js';
import { inWindowTime } from './timeline.js';
import { visemeConfidence, type VisemeResult } from '../speech/viseme-model.js';

export type { ArticulationDeps } from '../speech/articulation.js';

/** Spans listed in a generation's quality report; the totals cover all of them. */
const REPORTED_SPANS = 200;

/**
 * The articulation of the audio input. Without the articulation tools (LIPSYNC_ARTICULATION=acoustic)
 * a synthesized input still brings its own phones; a recording then gets the acoustic shapes.
 */
export async function articulationFor(
  input: ArticulationInput,
  deps: ArticulationDeps | null,
): Promise<Articulation | null> {
  if (deps) return articulate(input, deps);
  const timeline = input.timeline;
  if (!timeline || timeline.phonemes.length === 0) return null;
  const end = timeline.phonemes.reduce((m, p) => Math.max(m, p.endMs), 0);
  return {
    phonemes: timeline.phonemes,
    trusted: [{ startMs: 0, endMs: end }],
    spans: [{ startMs: 0, endMs: end, source: 'text', confidence: 1 }],
    speech: null,
    primary: 'text',
    timings: { vadMs: 0, recognitionMs: 0, alignmentMs: 0 },
    notes: [],
  };
}

export interface ArticulationReport {
  /** The source that drove most of the speech. */
  primary: ArticulationSource;
  /** ms of output speech per source. */
  sourceMs: Partial<Record<ArticulationSource, number>>;
  /**
   * Output-time spans (at most REPORTED_SPANS), each with its source and confidence; `model` spans
   * name the viseme model, their confidence its mean top-class probability there.
   */
  spans: {
    startMs: number;
    endMs: number;
    source: ArticulationSource;
    confidence: number;
    model?: string;
  }[];
  /** The viseme model that shaped what no trusted word covers (`articulation-v1`, `cherry`), or null. */
  visemeModel: string | null;
  spansTruncated: boolean;
  /** Speech segments found by voice activity detection, or null when silence came from loudness. */
  speechSegments: number | null;
  timings: Articulation['timings'];
  notes: string[];
}

export function articulationReport(
  a: Articulation,
  plan: ConformPlan,
  visemes: VisemeResult | null,
  window: { startSeconds: number; durationSeconds: number } | null = null,
): ArticulationReport {
  // With the viseme model, what is not covered by trusted phones gets the model's lips (its rows are
  // in output time, or a preview's window time: it read the conformed audio, as the spans are put).
  const model = visemes ? (visemes.model ?? 'model') : null;
  const spans: ArticulationReport['spans'] = inWindowTime(a.spans, plan, window).map((s) =>
    visemes && model && s.source === 'acoustic'
      ? {
          ...s,
          source: 'model' as const,
          model,
          confidence: visemeConfidence(visemes, s.startMs, s.endMs),
        }
      : s,
  );
  const sourceMs: Partial<Record<ArticulationSource, number>> = {};
  for (const s of spans) sourceMs[s.source] = (sourceMs[s.source] ?? 0) + (s.endMs - s.startMs);
  let primary = a.primary;
  if (visemes && primary === 'acoustic') primary = 'model';
  return {
    primary,
    sourceMs,
    spans: spans.slice(0, REPORTED_SPANS),
    spansTruncated: spans.length > REPORTED_SPANS,
    visemeModel: model,
    speechSegments: a.speech ? inWindowTime(a.speech, plan, window).length : null,
    timings: a.timings,
    notes: a.notes,
  };
}

/** The viseme model's rows, or null when it fails (the engine then shapes those stretches from the signal). */
export async function visemesOrNull(
  run: NonNullable<ArticulationDeps['visemes']>,
  audioPath: string,
  signal: AbortSignal,
): Promise<VisemeResult | null> {
  try {
    return await run(audioPath, signal);
  } catch {
    signal.throwIfAborted();
    return null;
  }
}
