// How much the picture moves around each frame of a section, for the retime plan (chooseFrames): the
// mean absolute difference between consecutive frames of a 64-pixel-wide grayscale rendering. The
// whole frame is measured, not a face box: a talking-head shot is mostly face and shoulders, and a
// small rendering keeps this to a cheap decode. Frame numbers are the retime graph's (the source
// resampled once to the plan's rate from its start).
import { startFfmpeg } from './ffmpeg.js';

export const MOTION_WIDTH = 64;

/** Mean absolute difference (0-255) of two equal-sized grayscale frames. */
export function frameDifference(a: Uint8Array, b: Uint8Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i] - b[i]);
  return a.length ? sum / a.length : 0;
}

/**
 * Per section frame: the mean of its differences to the previous and the next frame. The section is
 * frames[first, first + count); `frames` may carry one more frame on each side (none at the source's
 * ends), so the section's first and last frames are measured against the frames around it too.
 */
export function perFrameMotion(frames: readonly Uint8Array[], first: number, count: number): number[] {
  const diffs = frames.slice(1).map((f, i) => frameDifference(frames[i], f));
  return Array.from({ length: count }, (_, j) => {
    const i = first + j;
    const around = [diffs[i - 1], diffs[i]].filter((d): d is number => d !== undefined);
    return around.length ? around.reduce((a, d) => a + d, 0) / around.length : 0;
  });
}

/** Grayscale frames [start, end) of `path` at `fpsText`, each MOTION_WIDTH x height bytes. */
export async function grayFrames(
  path: string,
  fpsText: string,
  range: { start: number; end: number },
  size: { width: number; height: number },
  signal?: AbortSignal,
): Promise<Uint8Array[]> {
  const w = MOTION_WIDTH;
  const h = Math.max(2, 2 * Math.round((w * size.height) / size.width / 2));
  const vf =
    `fps=${fpsText},setpts=PTS-STARTPTS,trim=start_frame=${range.start}:end_frame=${range.end},` +
    `scale=${w}:${h},format=gray`;
  const proc = startFfmpeg(['-i', path, '-an', '-vf', vf, '-f', 'rawvideo', 'pipe:1'], {
    signal,
    stdin: 'ignore',
    stdout: 'pipe',
  });
  const chunks: Buffer[] = [];
  proc.child.stdout?.on('data', (c: Buffer) => chunks.push(c));
  await proc.done;
  const all = Buffer.concat(chunks);
  const frames: Uint8Array[] = [];
  for (let o = 0; o + w * h <= all.length; o += w * h) frames.push(all.subarray(o, o + w * h));
  return frames;
}

/** The per-frame motion of source frames [start, end), measured against their neighbours. */
export async function sectionMotion(
  path: string,
  fpsText: string,
  section: { start: number; end: number },
  size: { width: number; height: number },
  signal?: AbortSignal,
): Promise<number[]> {
  const from = Math.max(0, section.start - 1);
  const frames = await grayFrames(path, fpsText, { start: from, end: section.end + 1 }, size, signal);
  return perFrameMotion(frames, section.start - from, section.end - section.start);
}
