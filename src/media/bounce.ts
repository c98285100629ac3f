// Bounce (ping-pong) source for sync_mode=bounce: the video conformed once into lossless chunks,
// each chunk reversed on its own (the reverse filter holds a whole chunk in memory, so chunks are
// sized to a memory budget), and an ffconcat list forward, backward, forward, ... long enough for
// the output. The turnaround frames are not doubled: 0..M-1, M-2..1, 0..M-1, ...
import { readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ConformPlan } from './conform-plan.js';
import { concatListEntry, videoChain } from './conform-graph.js';
import { losslessIntermediateArgs } from './encoding.js';
import { runFfmpeg, type FfmpegRunOptions } from './ffmpeg.js';

/** Decoded frames the reverse filter may hold at once (yuv420p), per chunk. */
export const REVERSE_MEMORY_BUDGET_BYTES = 256 * 1024 * 1024;

export function chunkFrames(width: number, height: number): number {
  const perFrame = width * height * 1.5;
  return Math.max(8, Math.min(250, Math.floor(REVERSE_MEMORY_BUDGET_BYTES / perFrame)));
}

export interface BounceSource {
  /** ffconcat list to read with `-f concat -safe 0 -i`. */
  listPath: string;
  forwardFrames: number;
  periodFrames: number;
}

export interface BounceOptions extends Omit<FfmpegRunOptions, 'onProgress'> {
  /** Fraction (0..1) of the bounce preparation done. */
  onProgress?: (fraction: number) => void;
}

export async function prepareBounce(
  plan: ConformPlan,
  videoPath: string,
  videoSeconds: number,
  dir: string,
  opts: BounceOptions = {},
): Promise<BounceSource> {
  const forwardFrames = Math.max(1, Math.round(videoSeconds * plan.fps));
  const chunk = chunkFrames(plan.width, plan.height);
  const cuts: number[] = [];
  for (let f = chunk; f < forwardFrames; f += chunk) cuts.push(f);
  const forwardPlan: ConformPlan = {
    ...plan,
    frameCount: forwardFrames,
    video: { ...plan.video, strategy: 'trim' },
  };

  // Pass 1: the forward video, conformed (frame rate, size) and split into lossless chunks that each
  // start with a keyframe.
  const fwdArgs = ['-i', videoPath, '-filter_complex', `[0:v:0]${videoChain(forwardPlan)}[v]`];
  fwdArgs.push('-map', '[v]', ...losslessIntermediateArgs());
  fwdArgs.push('-g', String(chunk), '-keyint_min', String(chunk), '-sc_threshold', '0');
  fwdArgs.push('-f', 'segment', '-segment_format', 'mp4', '-reset_timestamps', '1');
  if (cuts.length > 0) fwdArgs.push('-segment_frames', cuts.join(','));
  fwdArgs.push(join(dir, 'fwd-%05d.mp4'));
  const share = 1 / (cuts.length + 2);
  await runFfmpeg(fwdArgs, {
    ...opts,
    onProgress: (s) => opts.onProgress?.(Math.min(1, s / videoSeconds) * share),
  });
  const forward = (await readdir(dir))
    .filter((n) => /^fwd-\d{5}\.mp4$/.test(n))
    .sort()
    .map((n) => join(dir, n));
  if (forward.length !== cuts.length + 1) {
    throw new Error(`bounce: expected ${cuts.length + 1} forward chunks, found ${forward.length}`);
  }

  const entries = forward.map(concatListEntry);
  let periodFrames = forwardFrames;
  if (forwardFrames > 2) {
    // Pass 2: each chunk reversed, last chunk first; drop the video's last frame (already shown at
    // the turn) and its first frame (shown again when the forward play restarts).
    const reversed: string[] = [];
    for (let i = forward.length - 1; i >= 0; i--) {
      const frames = i === forward.length - 1 ? forwardFrames - chunk * i : chunk;
      const from = i === forward.length - 1 ? 1 : 0;
      const to = i === 0 ? frames - 1 : frames;
      if (to <= from) continue;
      const out = join(dir, `rev-${String(i).padStart(5, '0')}.mp4`);
      const filter = `reverse,trim=start_frame=${from}:end_frame=${to},setpts=PTS-STARTPTS`;
      await runFfmpeg(
        ['-i', forward[i], '-vf', filter, ...losslessIntermediateArgs(), '-f', 'mp4', out],
        opts,
      );
      reversed.push(out);
      opts.onProgress?.(share * (forward.length - i + 1));
      periodFrames += to - from;
    }
    entries.push(...reversed.map(concatListEntry));
  }

  const periods = Math.max(1, Math.ceil(plan.frameCount / periodFrames));
  const lines = ['ffconcat version 1.0'];
  for (let p = 0; p < periods; p++) lines.push(...entries);
  const listPath = join(dir, 'bounce.ffconcat');
  await writeFile(listPath, `${lines.join('\n')}\n`);
  opts.onProgress?.(1);
  return { listPath, forwardFrames, periodFrames };
}
