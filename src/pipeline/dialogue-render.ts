// The step before conform in a dialogue-edit render: the source video retimed onto the preview's
// clock (src/media/retime-plan.ts), at the source's frame rate, without audio (the preview is the
// audio). A lengthened slot's section is measured first (src/media/section-motion.ts) so that its held
// frames go where the picture moves least; a shortened one is dissolved. The normal pipeline then
// lip-syncs only the slots.
import { join } from 'node:path';
import type { DialogueRender } from '../domain/dialogue-render.js';
import { probeMedia, type MediaProbe } from '../media/probe.js';
import { runFfmpeg } from '../media/ffmpeg.js';
import { DISSOLVE_BORROW_MS, planRetime, retimeFilterGraph, slotFrames } from '../media/retime-plan.js';
import { sectionMotion } from '../media/section-motion.js';
import { chooseFps } from '../media/conform-plan.js';

export async function renderEditedVideo(
  source: { path: string; probe: MediaProbe },
  edit: DialogueRender,
  dir: string,
  opts: {
    signal?: AbortSignal;
    onProgress?: (fraction: number) => void;
    /** false: hold and drop evenly (the plan without motion), for the benchmark's comparison. */
    motionAware?: boolean;
  } = {},
): Promise<{ path: string; probe: MediaProbe }> {
  const v = source.probe.video;
  // The rate conform will choose for the source, so conform keeps every frame of the edited video.
  const [fps, fpsText] = chooseFps(null, v?.fps ?? null);
  // The picture's own length where the probe counted its frames: a container's duration includes
  // sound that runs on after the last frame.
  const seconds = v?.frameCount && v.fps ? v.frameCount / v.fps : (source.probe.durationSeconds ?? 0);
  const sourceFrames = Math.max(1, Math.round(seconds * fps));
  const size = v && v.width > 0 && v.height > 0 ? { width: v.width, height: v.height } : null;
  const frames = {
    slots: edit.slots,
    sourceFrames,
    previewDurationMs: edit.previewDurationMs,
    fps,
    borrowMs: DISSOLVE_BORROW_MS,
  };
  const motion =
    opts.motionAware === false || !size
      ? undefined
      : await Promise.all(
          // Only a lengthened section, in the plan's own whole frames, has held frames to place; one
          // of one frame has nothing to choose between; a shortened one is dissolved.
          slotFrames(frames).map((sec) =>
            sec.end - sec.start > 1 && sec.outputFrames > sec.end - sec.start
              ? sectionMotion(source.path, fpsText, sec, size, opts.signal)
              : null,
          ),
        );
  const plan = planRetime({ ...frames, motion });
  const out = join(dir, 'edited.mkv');
  // Lossless intermediate: the picture outside the slots must reach the engine as the source's.
  await runFfmpeg(
    [
      ...['-i', source.path, '-filter_complex', retimeFilterGraph(plan, fpsText), '-map', '[v]'],
      ...['-an', '-frames:v', String(plan.frameCount), '-c:v', 'ffv1', '-r', fpsText, out],
    ],
    {
      signal: opts.signal,
      onProgress: (s) => opts.onProgress?.(Math.min(1, (s * 1000) / edit.previewDurationMs)),
    },
  );
  // Read from the file's boxes where it can be (src/media/iso-probe.ts); this FFV1/Matroska file is
  // not ISO BMFF, so today that is still one ffprobe.
  return { path: out, probe: await probeMedia(out) };
}
