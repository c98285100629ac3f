// The edited picture of a dialogue-edit render, as a plan: the source's frames everywhere except the
// preview's slots, each slot's section retimed to its new length (longer: frames held and slowed;
// shorter: frames dropped), laid out on the preview's clock. Pure; the ffmpeg filter graph is built
// from the plan so that both are unit-tested.

export interface RetimeSlot {
  outputStartMs: number;
  outputDurationMs: number;
  sourceStartMs: number;
  sourceDurationMs: number;
}

export interface RetimePiece {
  /** Source frames [start, end). */
  sourceStart: number;
  sourceEnd: number;
  /** Frames this piece fills in the output. Equal to the source length for untouched pieces. */
  outputFrames: number;
  retimed: boolean;
}

export interface RetimePlan {
  fps: number;
  pieces: RetimePiece[];
  /** Output frames in all: round(preview duration x fps). */
  frameCount: number;
}

export class RetimePlanError extends Error {}

/**
 * Works in whole frames so untouched pieces are the source's frames exactly. Untouched stretches keep
 * their source length; each slot ends where the preview says it ends, so the small differences of the
 * preview's cross-fades land inside the (redrawn) slots, never outside them.
 */
export function planRetime(input: {
  slots: readonly RetimeSlot[];
  sourceFrames: number;
  previewDurationMs: number;
  fps: number;
}): RetimePlan {
  const { fps, sourceFrames } = input;
  if (!(fps > 0) || !(sourceFrames > 0)) throw new RetimePlanError('fps and source frames must be positive');
  const frame = (ms: number) => Math.round((ms * fps) / 1000);
  const frameCount = Math.max(1, frame(input.previewDurationMs));
  const slots = [...input.slots].sort((a, b) => a.sourceStartMs - b.sourceStartMs);
  const pieces: RetimePiece[] = [];
  let src = 0;
  let out = 0;
  const keep = (end: number) => {
    if (end > src) pieces.push({ sourceStart: src, sourceEnd: end, outputFrames: end - src, retimed: false });
    out += Math.max(0, end - src);
    src = Math.max(src, end);
  };
  for (const s of slots) {
    const a = Math.min(sourceFrames, frame(s.sourceStartMs));
    const b = Math.min(sourceFrames, frame(s.sourceStartMs + s.sourceDurationMs));
    if (a < src) throw new RetimePlanError('slots overlap');
    keep(a);
    const outEnd = Math.min(frameCount, frame(s.outputStartMs + s.outputDurationMs));
    const n = Math.max(0, outEnd - out);
    // A section shortened to nothing is dropped; an empty section with output time holds its frame.
    if (n > 0) {
      const end = b > a ? b : Math.min(sourceFrames, a + 1);
      const start = b > a ? a : Math.max(0, end - 1);
      pieces.push({ sourceStart: start, sourceEnd: end, outputFrames: n, retimed: n !== end - start });
    }
    out += n;
    src = Math.max(src, b);
  }
  // The tail: the source's remaining frames, trimmed or its last frame held to the preview's length.
  const rest = frameCount - out;
  if (rest > 0) {
    const end = Math.min(sourceFrames, src + rest);
    if (end > src) keep(end);
    const missing = frameCount - out;
    if (missing > 0) {
      const last = Math.max(0, sourceFrames - 1);
      pieces.push({ sourceStart: last, sourceEnd: last + 1, outputFrames: missing, retimed: true });
      out += missing;
    }
  }
  return { fps, pieces, frameCount };
}

/**
 * An ffmpeg filter graph for input 0's video: the source resampled once to the plan's constant rate
 * (so frame numbers are the plan's), split per piece, each piece trimmed by frame number, a retimed
 * piece's timestamps scaled to its output length and resampled (holding or dropping frames), each
 * piece forced to its exact frame count, then concatenated. Output label [v].
 */
export function retimeFilterGraph(plan: RetimePlan, fpsText: string): string {
  const n = plan.pieces.length;
  const parts = plan.pieces.map((p, i) => {
    const trim = `[s${i}]trim=start_frame=${p.sourceStart}:end_frame=${p.sourceEnd},setpts=PTS-STARTPTS`;
    if (!p.retimed) return `${trim}[p${i}]`;
    const factor = p.outputFrames / (p.sourceEnd - p.sourceStart);
    const seconds = (p.outputFrames / plan.fps).toFixed(6);
    // Rounding in the resampler may leave a frame short or over: pad with the last frame, then cut.
    return (
      `${trim},setpts=${factor.toFixed(6)}*PTS,fps=${fpsText},` +
      `tpad=stop_mode=clone:stop_duration=${seconds},trim=end_frame=${p.outputFrames},setpts=PTS-STARTPTS[p${i}]`
    );
  });
  const sources = plan.pieces.map((_, i) => `[s${i}]`).join('');
  const labels = plan.pieces.map((_, i) => `[p${i}]`).join('');
  // An input pad feeds one filter only: split it once per piece.
  const head = `[0:v]fps=${fpsText},setpts=PTS-STARTPTS,split=${n}${sources}`;
  return `${head};${parts.join(';')};${labels}concat=n=${n}:v=1:a=0[v]`;
}
