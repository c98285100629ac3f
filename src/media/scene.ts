// The source as an engine may look at it before drawing (EngineScene): the conformed frames once
// more, downscaled, and the visual input's own soundtrack with the map from output frames to source
// time. Used for active-speaker detection, which compares each face's mouth with the original speech.
import { join } from 'node:path';
import { conformedFrames, type PreparedConform } from './conform.js';
import { sourceTimeAt } from './conform-plan.js';
import { runFfmpeg } from './ffmpeg.js';

/** The source as an engine sees it (EngineJob.scene). */
export interface EngineScene {
  /** The same conformed frames again from the start, downscaled by `downscale` (1 = full size). */
  frames(): AsyncIterable<Buffer>;
  readonly width: number;
  readonly height: number;
  /** Engine frame pixels per scene frame pixel (>= 1). */
  readonly downscale: number;
  /** The visual input's own soundtrack as a WAV (extracted on first call), or null when it has none. */
  sourceAudio(): Promise<string | null>;
  /** The time in the source that conformed frame `frame` shows, or null. */
  sourceTimeAt(frame: number): number | null;
}

/** Longest side of the frames the scene gives (faces stay large enough for landmarks). */
export const SCENE_MAX_SIDE = 1024;

/** The size of scene frames for a picture of width x height: at most SCENE_MAX_SIDE, even sides. */
export function sceneSize(width: number, height: number): { width: number; height: number } {
  const k = Math.max(1, Math.max(width, height) / SCENE_MAX_SIDE);
  // Even sizes: ffmpeg's scalers and the rgb pipe need no rounding surprises.
  return {
    width: Math.max(2, 2 * Math.round(width / k / 2)),
    height: Math.max(2, 2 * Math.round(height / k / 2)),
  };
}

export function conformedScene(
  prepared: PreparedConform,
  source: { path: string; hasAudio: boolean },
  workDir: string,
  opts: { signal?: AbortSignal } = {},
): EngineScene {
  const { plan } = prepared;
  const { width, height } = sceneSize(plan.width, plan.height);
  let audio: Promise<string | null> | null = null;
  return {
    width,
    height,
    downscale: plan.width / width,
    frames: () =>
      conformedFrames(prepared, { signal: opts.signal, size: { width, height }, tmpRoot: workDir }),
    sourceAudio() {
      audio ??= (async () => {
        if (!source.hasAudio || plan.video.strategy === 'still') return null;
        const out = join(workDir, 'source-audio.wav');
        await runFfmpeg(
          ['-i', source.path, '-map', '0:a:0', '-vn', '-ac', '1', '-ar', '16000', '-c:a', 'pcm_s16le', out],
          {
            signal: opts.signal,
          },
        );
        return out;
      })();
      return audio;
    },
    // A window's frames are numbered from its start; the plan's from the full output's.
    sourceTimeAt: (frame) => sourceTimeAt(plan, frame + (prepared.firstFrame ?? 0)),
  };
}
