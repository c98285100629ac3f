// What the server accepts from a remote worker (docs/workers.md, "Limits and what is trusted"): how
// much one attempt may upload, and which figures of a result the server measures itself instead of
// taking the worker's word for them. No I/O here: the gateway measures, these rules decide.

/** How much one attempt of a remote job may upload. */
export interface OutputBounds {
  /** The most bytes one output file may have. */
  readonly perFile: number;
  /** The most bytes all outputs of the attempt may have together. */
  readonly perAttempt: number;
  /** The most distinct outputs (names) the attempt may upload. */
  readonly files: number;
}

/**
 * An output is media of the job's organization, stored and served under its name, so it is held to the
 * organization plan's file size, the limit any of its media files has (docs/plans.md); an attempt may
 * upload as many files as its kind produces. The operator's cap (LIPSYNC_WORKER_UPLOAD_MAX_BYTES)
 * bounds the attempt's total, and so each file, whatever the plan.
 */
export function outputBounds(
  planMaxFileBytes: number,
  outputsOfKind: number,
  operatorCap: number,
): OutputBounds {
  const files = Math.max(0, Math.floor(outputsOfKind));
  return {
    perFile: Math.min(planMaxFileBytes, operatorCap),
    perAttempt: Math.min(planMaxFileBytes * files, operatorCap),
    files,
  };
}

/** Bytes one more upload may have: within its own bound and what the attempt has left. */
export function uploadAllowance(bounds: OutputBounds, usedByOtherOutputs: number): number {
  return Math.max(0, Math.min(bounds.perFile, bounds.perAttempt - usedByOtherOutputs));
}

/** What ffprobe read from an uploaded output. */
export interface MeasuredOutput {
  readonly durationSeconds: number | null;
  /** Frames per second of the video stream (ffprobe's r_frame_rate, 3 decimals); null without video. */
  readonly fps: number | null;
  /** Coded size of the video stream; null without video. */
  readonly width: number | null;
  readonly height: number | null;
  readonly hasVideo: boolean;
  readonly hasAudio: boolean;
  /** The sha256 of the file's bytes; absent where not computed. */
  readonly sha256?: string;
}

/** What the server decides about a job's outputs, whatever the worker was told. */
export interface OutputRules {
  /** The organization's plan watermarks its outputs (domain/plans.ts, watermarksOutputs). */
  readonly watermark: boolean;
}

/** A result with the server's own figures, and the reported figures that disagreed with them. */
export interface MeasuredResult<R> {
  readonly result: R;
  /** Figure name → what the worker reported and what was measured, where they differ beyond tolerance. */
  readonly disagreements: Record<string, { reported: unknown; measured: unknown }>;
}

/** Differences below these are rounding (container vs. stream duration, rational frame rates). */
export const DURATION_TOLERANCE_SECONDS = 0.1;
export const FPS_TOLERANCE = 0.01;

function differs(reported: unknown, measured: number, tolerance: number): boolean {
  return (
    typeof reported !== 'number' || !Number.isFinite(reported) || Math.abs(reported - measured) > tolerance
  );
}

/** The figures of a generation's result that are stored and billed. */
interface GenerationFigures {
  readonly outputKey: string;
  readonly watermarkedKey: string | null;
  readonly outputDuration: number;
  readonly fps: number;
  readonly quality: Record<string, unknown>;
}

/**
 * A remote generation's result as the server stores and bills it: outputDuration, fps and the
 * quality report's width, height and fps are what ffprobe reads from the uploaded output (the same
 * source a local run takes its duration from), whatever the worker reported. A string when the output
 * cannot be a generation's (no video, no measurable duration or frame rate).
 */
export function measuredGenerationResult<R extends GenerationFigures>(
  result: R,
  outputs: ReadonlyMap<string, MeasuredOutput>,
  rules: OutputRules = { watermark: false },
): MeasuredResult<R> | string {
  const out = outputs.get(result.outputKey);
  if (!out?.hasVideo) return `output ${result.outputKey} holds no video`;
  if (out.durationSeconds === null || !(out.durationSeconds > 0))
    return `output ${result.outputKey} has no measurable duration`;
  if (out.fps === null) return `output ${result.outputKey} has no measurable frame rate`;
  if (rules.watermark) {
    const problem = watermarkProblem(result, out, outputs);
    if (problem) return problem;
  }
  const disagreements: MeasuredResult<R>['disagreements'] = {};
  if (differs(result.outputDuration, out.durationSeconds, DURATION_TOLERANCE_SECONDS))
    disagreements.outputDuration = { reported: result.outputDuration, measured: out.durationSeconds };
  if (differs(result.fps, out.fps, FPS_TOLERANCE))
    disagreements.fps = { reported: result.fps, measured: out.fps };
  return {
    result: {
      ...result,
      outputDuration: out.durationSeconds,
      fps: out.fps,
      quality: { ...result.quality, width: out.width, height: out.height, fps: out.fps },
    },
    disagreements,
  };
}

/**
 * Why a result cannot serve a plan that watermarks its outputs: without the watermarked derivative the
 * download would fall back to the clean output. The derivative must be another file than the clean
 * output (other bytes), with the same picture size and duration.
 */
function watermarkProblem(
  result: GenerationFigures,
  clean: MeasuredOutput,
  outputs: ReadonlyMap<string, MeasuredOutput>,
): string | null {
  const key = result.watermarkedKey;
  if (typeof key !== 'string' || key === result.outputKey)
    return "the organization's plan watermarks its outputs and the result has no watermarked output";
  const marked = outputs.get(key);
  if (!marked?.hasVideo) return `output ${key} holds no video`;
  if (marked.width !== clean.width || marked.height !== clean.height)
    return `output ${key} is not the same picture size as ${result.outputKey}`;
  if (
    marked.durationSeconds === null ||
    clean.durationSeconds === null ||
    Math.abs(marked.durationSeconds - clean.durationSeconds) > DURATION_TOLERANCE_SECONDS
  )
    return `output ${key} is not as long as ${result.outputKey}`;
  if (marked.sha256 !== undefined && marked.sha256 === clean.sha256)
    return `output ${key} is the clean output, not a watermarked one`;
  return null;
}

/** The figures of a dialogue edit's result that are stored. */
interface PreviewFigures {
  readonly previewKey: string;
  readonly previewDurationMs: number;
}

/** A remote dialogue edit's result with the preview's duration as ffprobe reads it. */
export function measuredPreviewResult<R extends PreviewFigures>(
  result: R,
  outputs: ReadonlyMap<string, MeasuredOutput>,
): MeasuredResult<R> | string {
  const out = outputs.get(result.previewKey);
  if (!out?.hasAudio) return `output ${result.previewKey} holds no audio`;
  if (out.durationSeconds === null || !(out.durationSeconds > 0))
    return `output ${result.previewKey} has no measurable duration`;
  const measured = Math.round(out.durationSeconds * 1000);
  const disagreements: MeasuredResult<R>['disagreements'] = {};
  if (differs(result.previewDurationMs, measured, DURATION_TOLERANCE_SECONDS * 1000))
    disagreements.previewDurationMs = { reported: result.previewDurationMs, measured };
  return { result: { ...result, previewDurationMs: measured }, disagreements };
}
