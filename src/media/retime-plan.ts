// The edited picture of a dialogue-edit render, as a plan: the source's frames everywhere except the
// preview's slots, each slot's section retimed to its new length (longer: frames held and slowed;
// shorter: a dissolve from the picture before the cut into the picture after it), laid out on the
// preview's clock. Given a longer section's per-frame motion, the held frames go where the picture
// moves least (chooseFrames). Pure; the ffmpeg filter graph is built from the plan so that both are
// unit-tested.

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
  /**
   * A dissolve: output frame j blends source frame sourceStart + j into dissolveTo + j, by (j+1)/(n+1)
   * (sourceEnd - sourceStart = outputFrames = n). It carries the picture across a shortened section.
   */
  dissolveTo?: number;
}

export interface RetimePlan {
  fps: number;
  pieces: RetimePiece[];
  /** Output frames in all: round(preview duration x fps). */
  frameCount: number;
}

export class RetimePlanError extends Error {}

/**
 * The longest freeze (extra showings of one frame), unless the slot's stretch needs more: a movement
 * paused for more than 2 frames (80 ms at 25 fps) reads as a stutter even where the motion measure is low.
 */
export const MAX_RUN = 2;

/**
 * A shortened section is dissolved over at least this many output frames, borrowing frames from the
 * untouched stretches on each side (at most `borrowMs` of each) when the slot itself has fewer. Dropping
 * frames made the head jump at every drop (face_2.mp4, 855 ms of picture removed: steps twice the
 * footage's 90th percentile), or once, five times it, where the slot closed completely.
 */
export const MIN_DISSOLVE_FRAMES = 6;
/** What a render lets a dissolve borrow: 3 frames at 25 fps, inside what a viewer reads as the cut. */
export const DISSOLVE_BORROW_MS = 120;

/** What the plan gives a slot: its section's source frames [start, end) and its output frames. */
export interface SlotFrames {
  start: number;
  end: number;
  outputFrames: number;
}

export interface RetimeInput {
  slots: readonly RetimeSlot[];
  sourceFrames: number;
  previewDurationMs: number;
  fps: number;
  /** Per slot (the order of `slots`): its section's per-frame motion; without it, an even spread. */
  motion?: readonly (readonly number[] | null | undefined)[];
  /** The most a dissolve borrows from the untouched picture on each side of a slot (ms). */
  borrowMs?: number;
}

/**
 * Each slot's frames as planRetime decides them (the caller's order): a slot is lengthened, and its
 * held frames placed by motion, exactly when `outputFrames > end - start`, so that is what to measure.
 * Motion changes where frames are held, never these numbers.
 */
export function slotFrames(input: Omit<RetimeInput, 'motion'>): SlotFrames[] {
  return retime(input).slotFrames;
}

/**
 * How many times each of a section's frames is shown so that the section fills `outputFrames`, at
 * least its own length (a shortened section is dissolved instead, see planRetime). `motion[j]` is how
 * much frame j differs from its neighbours. The extra frames are shared out in proportion to 1/motion
 * (a still stretch takes them first), at most `maxRun` holds of one frame (raised only when the
 * stretch needs it), then rounded: equal motion gives an even spread, and the total is exact.
 */
export function chooseFrames(motion: readonly number[], outputFrames: number, maxRun = MAX_RUN): number[] {
  const n = motion.length;
  if (outputFrames < n) throw new RetimePlanError('chooseFrames only lengthens a section');
  const counts = new Array<number>(n).fill(1);
  const k = outputFrames - n;
  if (n === 0 || k === 0) return counts;
  const run = Math.max(maxRun, Math.ceil(k / n));
  const mean = motion.reduce((a, m) => a + Math.max(0, m), 0) / n;
  const eps = mean * 0.01 + 1e-9;
  // The margin keeps float error from rounding a share over the limit.
  const ideal = waterFill(
    motion.map((m) => 1 / (Math.max(0, m) + eps)),
    k,
    run - 1e-9,
  );
  const extra = roundShares(ideal, k, run);
  return counts.map((c, j) => c + extra[j]);
}

/**
 * Whole shares from `ideal`: the floors, then the largest remainders first, skipping a frame that
 * would go over the limit. Ties (equal motion) are taken in the order cumulative rounding would place
 * them, so an even spread stays even. Cumulative rounding alone also keeps the limit, but it carries
 * a remainder to whatever frame comes next, moving frames; it is the fallback if the greedy pass is
 * left short.
 */
function roundShares(ideal: readonly number[], k: number, run: number): number[] {
  const n = ideal.length;
  const cumulative = new Array<number>(n).fill(0);
  let cum = 0;
  let prev = 0;
  ideal.forEach((x, j) => {
    cum += x;
    const r = j === n - 1 ? k : Math.min(k, Math.round(cum));
    cumulative[j] = r - prev;
    prev = r;
  });
  const share = ideal.map((x) => Math.floor(x + 1e-9));
  let left = k - share.reduce((a, x) => a + x, 0);
  const frac = ideal.map((x, j) => x - share[j]);
  const order = ideal
    .map((_, j) => j)
    .sort((a, b) =>
      Math.abs(frac[a] - frac[b]) > 1e-9
        ? frac[b] - frac[a]
        : cumulative[b] - share[b] - (cumulative[a] - share[a]) || a - b,
    );
  for (const j of order) {
    if (left <= 0) break;
    if (share[j] + 1 > run) continue;
    share[j]++;
    left--;
  }
  return left === 0 ? share : cumulative;
}

/** Shares `total` in proportion to `w`, no share above `cap`: the excess of capped ones goes to the rest. */
function waterFill(w: readonly number[], total: number, cap: number): number[] {
  const x = new Array<number>(w.length).fill(0);
  const capped = new Array<boolean>(w.length).fill(false);
  let left = total;
  for (;;) {
    const free = w.reduce((a, v, i) => (capped[i] ? a : a + v), 0);
    if (!(free > 0)) return x;
    const lambda = left / free;
    let changed = false;
    w.forEach((v, i) => {
      if (!capped[i] && lambda * v > cap) {
        capped[i] = true;
        x[i] = cap;
        left -= cap;
        changed = true;
      }
    });
    if (!changed) {
      w.forEach((v, i) => {
        if (!capped[i]) x[i] = lambda * v;
      });
      return x;
    }
  }
}

/** A section shown with per-frame counts: one-for-one runs as plain pieces, each held frame a piece. */
function shownPieces(start: number, counts: readonly number[]): RetimePiece[] {
  const out: RetimePiece[] = [];
  let open: RetimePiece | null = null;
  counts.forEach((c, j) => {
    const f = start + j;
    if (c === 1 && open && open.sourceEnd === f) {
      open.sourceEnd++;
      open.outputFrames++;
      return;
    }
    open = null;
    if (c === 0) return;
    const piece = { sourceStart: f, sourceEnd: f + 1, outputFrames: c, retimed: c !== 1 };
    out.push(piece);
    if (c === 1) open = piece;
  });
  return out;
}

/**
 * Works in whole frames so untouched pieces are the source's frames exactly. Untouched stretches keep
 * their source length; each slot ends where the preview says it ends, so the small differences of the
 * preview's cross-fades land inside the (redrawn) slots, never outside them.
 */
export function planRetime(input: RetimeInput): RetimePlan {
  return retime(input).plan;
}

function retime(input: RetimeInput): { plan: RetimePlan; slotFrames: SlotFrames[] } {
  const { fps, sourceFrames } = input;
  if (!(fps > 0) || !(sourceFrames > 0)) throw new RetimePlanError('fps and source frames must be positive');
  const frame = (ms: number) => Math.round((ms * fps) / 1000);
  const frameCount = Math.max(1, frame(input.previewDurationMs));
  const slots = input.slots
    .map((s, i) => ({ ...s, index: i, motion: input.motion?.[i] }))
    .sort((a, b) => a.sourceStartMs - b.sourceStartMs);
  const decided = new Array<SlotFrames>(slots.length);
  const pieces: RetimePiece[] = [];
  let src = 0;
  let out = 0;
  const keep = (end: number) => {
    if (end > src) pieces.push({ sourceStart: src, sourceEnd: end, outputFrames: end - src, retimed: false });
    out += Math.max(0, end - src);
    src = Math.max(src, end);
  };
  const borrowMax = frame(input.borrowMs ?? 0);
  slots.forEach((s, i) => {
    const a = Math.min(sourceFrames, frame(s.sourceStartMs));
    const b = Math.min(sourceFrames, frame(s.sourceStartMs + s.sourceDurationMs));
    if (a < src) throw new RetimePlanError('slots overlap');
    keep(a);
    const outEnd = Math.min(frameCount, frame(s.outputStartMs + s.outputDurationMs));
    const n = Math.max(0, outEnd - out);
    decided[s.index] = { start: a, end: b, outputFrames: n };
    if (n < b - a) {
      // Shortened: dissolve from where the picture was to where it will be, never past a neighbouring
      // slot, the source or the preview.
      const next = slots[i + 1];
      const room = Math.min(
        a -
          (pieces.at(-1)?.retimed === false && pieces.at(-1)?.sourceEnd === a
            ? pieces.at(-1)!.sourceStart
            : a),
        (next ? Math.min(sourceFrames, frame(next.sourceStartMs)) : sourceFrames) - b,
        frameCount - outEnd,
      );
      const p = Math.max(0, Math.min(borrowMax, room, Math.ceil((MIN_DISSOLVE_FRAMES - n) / 2)));
      if (p > 0) {
        const last = pieces[pieces.length - 1];
        last.sourceEnd -= p;
        last.outputFrames -= p;
        if (last.outputFrames === 0) pieces.pop();
      }
      const total = n + 2 * p;
      if (total > 0)
        pieces.push({
          sourceStart: a - p,
          sourceEnd: a - p + total,
          outputFrames: total,
          retimed: true,
          dissolveTo: b + p - total,
        });
      out += n + p;
      src = b + p;
      return;
    }
    // An empty section with output time holds its frame.
    if (n > 0) {
      const end = b > a ? b : Math.min(sourceFrames, a + 1);
      const start = b > a ? a : Math.max(0, end - 1);
      decided[s.index] = { start, end, outputFrames: n };
      if (s.motion?.length === end - start && n !== end - start)
        pieces.push(...shownPieces(start, chooseFrames(s.motion, n)));
      else pieces.push({ sourceStart: start, sourceEnd: end, outputFrames: n, retimed: n !== end - start });
    }
    out += n;
    src = Math.max(src, b);
  });
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
  return { plan: { fps, pieces, frameCount }, slotFrames: decided };
}

/**
 * An ffmpeg filter graph for input 0's video: the source resampled once to the plan's constant rate
 * (so frame numbers are the plan's), split per piece, each piece trimmed by frame number, a retimed
 * piece's timestamps scaled to its output length and resampled (holding or dropping frames), each
 * piece forced to its exact frame count, then concatenated. Output label [v].
 *
 * After the concat every frame is stamped by its position: concat gives a one-frame piece no duration,
 * so the next piece's first frame lands on the same timestamp and the constant-rate output dropped
 * one frame per single-frame piece (a render four frames shorter than its preview). The last frame is
 * then held for as long as the plan may ask (a source whose picture ends before its sound has fewer
 * frames than its container's duration gives); the caller cuts at the plan's frame count.
 */
export function retimeFilterGraph(plan: RetimePlan, fpsText: string): string {
  const n = plan.pieces.length;
  const dissolves = plan.pieces.filter((p) => p.dissolveTo !== undefined).length;
  let d = 0;
  const parts = plan.pieces.map((p, i) => {
    const trim = `[s${i}]trim=start_frame=${p.sourceStart}:end_frame=${p.sourceEnd},setpts=PTS-STARTPTS`;
    if (!p.retimed) return `${trim}[p${i}]`;
    if (p.dissolveTo !== undefined) {
      const into = `[d${d++}]trim=start_frame=${p.dissolveTo}:end_frame=${p.dissolveTo + p.outputFrames},setpts=PTS-STARTPTS`;
      // B's weight rises from 1/(n+1) to n/(n+1); by timestamp (the blend's frame number N runs ahead
      // when its first input was read before the second).
      const weight = `(T*${plan.fps}+1)/${p.outputFrames + 1}`;
      return `${trim}[a${i}];${into}[b${i}];[a${i}][b${i}]blend=all_expr=A+(B-A)*${weight}[p${i}]`;
    }
    const factor = p.outputFrames / (p.sourceEnd - p.sourceStart);
    const seconds = (p.outputFrames / plan.fps).toFixed(6);
    // Rounding in the resampler may leave a frame short or over: pad with the last frame, then cut.
    return (
      `${trim},setpts=${factor.toFixed(6)}*PTS,fps=${fpsText},` +
      `tpad=stop_mode=clone:stop_duration=${seconds},trim=end_frame=${p.outputFrames},setpts=PTS-STARTPTS[p${i}]`
    );
  });
  const sources =
    plan.pieces.map((_, i) => `[s${i}]`).join('') +
    Array.from({ length: dissolves }, (_, k) => `[d${k}]`).join('');
  const labels = plan.pieces.map((_, i) => `[p${i}]`).join('');
  // An input pad feeds one filter only: split it once per piece.
  const head = `[0:v]fps=${fpsText},setpts=PTS-STARTPTS,split=${n + dissolves}${sources}`;
  const seconds = (plan.frameCount / plan.fps).toFixed(6);
  const tail = `setpts=N/(${fpsText})/TB,tpad=stop_mode=clone:stop_duration=${seconds}`;
  return `${head};${parts.join(';')};${labels}concat=n=${n}:v=1:a=0,${tail}[v]`;
}
