// Conform: probed inputs -> the output's picture and soundtrack, fitted to each other per sync_mode
// and segments. Two stages so that the lip-sync engine re-encodes only once:
//
//   prepareConform()  writes the soundtrack (WAV, exact length) and, for bounce, lossless chunks;
//                     returns a PreparedConform that describes how to decode the conformed frames.
//   renderConformed() encodes those frames + soundtrack into the final h264/AAC file (no engine), or
//   conformedFrames() yields them as rgb24 frames for the engine, whose output goes to
//                     encodeFrames() with `audioPath: prepared.audioPath` (see docs/media.md).
import { join } from 'node:path';
import type { MediaProbe } from './probe.js';
import { prepareBounce } from './bounce.js';
import {
  ConformPlanError,
  planConform,
  type ConformPlan,
  type ConformSegment,
  type SyncMode,
} from './conform-plan.js';
import { audioGraph, videoChain } from './conform-graph.js';
import { AUDIO_SAMPLE_RATE } from './encoding.js';
import {
  aacArgs,
  containerArgs,
  DEFAULT_H264,
  h264Args,
  type H264Settings,
  type OutputFormat,
} from './encoding.js';
import { runFfmpeg } from './ffmpeg.js';
import { decodeFrames, type DecodeSpec, type FramePool, type PixelFormat } from './frames.js';
import { withTempDir } from './tempdir.js';

export interface ConformOptions {
  syncMode?: SyncMode;
  fps?: number | null;
  outputResolution?: readonly [number, number] | null;
  speedup?: 1 | 2 | 3 | 4;
  outputFormat?: OutputFormat;
  segments?: readonly ConformSegment[] | null;
}

export interface ConformSource {
  path: string;
  probe: MediaProbe;
}

export interface ConformRequest {
  /** A video, or a still image (models that animate a picture). */
  visual: ConformSource;
  /** Any file with an audio stream (wav, mp3, a video's soundtrack). */
  audio: ConformSource;
  options?: ConformOptions;
}

export interface ConformRunOptions {
  signal?: AbortSignal;
  /** Deadline for the whole stage; each ffmpeg run gets what is left. */
  timeoutMs?: number;
  /** Fraction of the stage done, 0..1, never decreasing. */
  onProgress?: (fraction: number) => void;
}

/** How to decode the conformed picture (plan.frameCount frames of plan.width x plan.height). */
export interface ConformedPicture {
  plan: ConformPlan;
  video: { inputArgs: string[]; graph: string; output: string };
}

export interface PreparedConform extends ConformedPicture {
  /** The soundtrack: WAV, 48 kHz stereo, exactly plan.durationSeconds long. */
  audioPath: string;
  /** A window of a longer conform (windowConform): the index of its first frame there. */
  firstFrame?: number;
}

/** The plan for these probed inputs; throws ConformPlanError when they cannot be combined. */
export function planFromProbes(req: ConformRequest): ConformPlan {
  const { visual, audio } = req;
  const o = req.options ?? {};
  if (!audio.probe.audio) throw new ConformPlanError('audio', 'the audio input has no audio stream');
  if (audio.probe.durationSeconds === null) throw new ConformPlanError('audio', 'the audio has no duration');
  const v = visual.probe.video;
  if (!v) throw new ConformPlanError('video', 'the video input has no picture');
  const base = {
    audioDurationSeconds: audio.probe.durationSeconds,
    syncMode: o.syncMode,
    fps: o.fps,
    outputResolution: o.outputResolution,
    speedup: o.speedup,
    segments: o.segments,
  };
  if (visual.probe.kind === 'IMAGE') {
    return planConform({ ...base, visual: { kind: 'image', width: v.width, height: v.height } });
  }
  if (visual.probe.durationSeconds === null) throw new ConformPlanError('video', 'the video has no duration');
  return planConform({
    ...base,
    visual: {
      kind: 'video',
      durationSeconds: visual.probe.durationSeconds,
      fps: v.fps,
      width: v.width,
      height: v.height,
      rotation: v.rotation,
      hasAudio: visual.probe.audio !== null,
    },
  });
}

class Progress {
  private done = 0;
  constructor(private readonly report?: (fraction: number) => void) {}
  /** Reports `from + part * width` if it moves forward. */
  phase(from: number, width: number): (part: number) => void {
    return (part) => {
      const f = Math.min(1, Math.max(0, from + Math.min(1, Math.max(0, part)) * width));
      if (f > this.done) {
        this.done = f;
        this.report?.(f);
      }
    };
  }
}

function deadlineOf(opts: ConformRunOptions): () => number | undefined {
  if (opts.timeoutMs === undefined) return () => undefined;
  const end = Date.now() + opts.timeoutMs;
  return () => Math.max(1, end - Date.now());
}

/** Stage 1: plan, soundtrack and (bounce) lossless chunks in `workDir`, which the caller owns. */
export async function prepareConform(
  req: ConformRequest,
  workDir: string,
  opts: ConformRunOptions = {},
): Promise<PreparedConform> {
  const plan = planFromProbes(req);
  const remaining = deadlineOf(opts);
  const progress = new Progress(opts.onProgress);
  const bounce = plan.video.strategy === 'bounce';
  const audioShare = bounce ? 0.05 : 1;
  const visualPath = req.visual.path;
  const graph = `[0:v:0]${videoChain(plan)}[vout]`;
  const audioPath = join(workDir, 'soundtrack.wav');
  const original = plan.outsideSegments === 'original_audio' ? req.visual.path : null;
  const ag = audioGraph(plan, req.audio.path, original);
  const audioProgress = progress.phase(0, audioShare);
  await runFfmpeg(
    [
      ...ag.inputArgs,
      '-filter_complex',
      ag.graph,
      '-map',
      `[${ag.output}]`,
      '-c:a',
      'pcm_s16le',
      '-rf64',
      'auto',
      '-f',
      'wav',
      audioPath,
    ],
    {
      signal: opts.signal,
      timeoutMs: remaining(),
      onProgress: (s) => audioProgress(s / plan.durationSeconds),
    },
  );

  let inputArgs: string[];
  if (bounce) {
    const src = await prepareBounce(plan, visualPath, req.visual.probe.durationSeconds ?? 0, workDir, {
      signal: opts.signal,
      timeoutMs: remaining(),
      onProgress: progress.phase(audioShare, 1 - audioShare),
    });
    inputArgs = ['-f', 'concat', '-safe', '0', '-i', src.listPath];
  } else {
    inputArgs =
      plan.video.strategy === 'loop'
        ? ['-stream_loop', '-1', '-an', '-i', visualPath]
        : ['-an', '-i', visualPath];
  }
  progress.phase(0, 1)(1);
  return { plan, video: { inputArgs, graph, output: 'vout' }, audioPath };
}

/**
 * The conformed picture as raw frames (exactly plan.frameCount of them, rgb24 unless `pixelFormat`
 * says otherwise) for the engine stage.
 */
export function conformedFrames(
  prepared: ConformedPicture,
  opts: {
    signal?: AbortSignal;
    timeoutMs?: number;
    size?: { width: number; height: number };
    pixelFormat?: PixelFormat;
    pool?: FramePool;
    /** The folder for the decoder's FIFO (the job's work folder). */
    tmpRoot?: string;
  } = {},
) {
  const { plan, video } = prepared;
  const size = opts.size ?? { width: plan.width, height: plan.height };
  const scaled = size.width !== plan.width || size.height !== plan.height;
  const graph = scaled
    ? video.graph.replace(/\[vout\]$/, `,scale=${size.width}:${size.height}:flags=area[vout]`)
    : video.graph;
  const spec: DecodeSpec = {
    inputArgs: video.inputArgs,
    filterComplex: { graph, output: video.output },
    width: size.width,
    height: size.height,
    pixelFormat: opts.pixelFormat,
    maxFrames: plan.frameCount,
  };
  return decodeFrames(spec, opts);
}

export interface RenderOptions extends ConformRunOptions {
  h264?: H264Settings;
}

/** Stage 2 without an engine: the conformed picture and soundtrack encoded once into the output. */
export async function renderConformed(
  prepared: PreparedConform,
  outputPath: string,
  format: OutputFormat,
  opts: RenderOptions = {},
): Promise<void> {
  const { plan, video } = prepared;
  const audioInput = video.inputArgs.filter((a) => a === '-i').length;
  const args = [...video.inputArgs, '-i', prepared.audioPath, '-filter_complex', video.graph];
  args.push('-map', `[${video.output}]`, '-map', `${audioInput}:a:0`);
  args.push(...h264Args(opts.h264 ?? DEFAULT_H264), ...aacArgs(), ...containerArgs(format), outputPath);
  await runFfmpeg(args, {
    signal: opts.signal,
    timeoutMs: opts.timeoutMs,
    onProgress: (s) => opts.onProgress?.(Math.min(1, s / plan.durationSeconds)),
  });
}

/**
 * Conform in one call (no engine): prepare in a private temp directory, render to outputPath,
 * remove the temp directory. Progress: 40% preparation, 60% rendering.
 */
export async function conform(
  req: ConformRequest,
  outputPath: string,
  opts: RenderOptions & { tempRoot?: string } = {},
): Promise<ConformPlan> {
  const remaining = deadlineOf(opts);
  const progress = new Progress(opts.onProgress);
  return withTempDir(
    'lipsync-conform',
    async (dir) => {
      const prepared = await prepareConform(req, dir, {
        ...opts,
        timeoutMs: remaining(),
        onProgress: progress.phase(0, 0.4),
      });
      await renderConformed(prepared, outputPath, req.options?.outputFormat ?? 'mp4', {
        ...opts,
        timeoutMs: remaining(),
        onProgress: progress.phase(0.4, 0.6),
      });
      return prepared.plan;
    },
    { root: opts.tempRoot, signal: opts.signal },
  );
}

/**
 * Frames [firstFrame, firstFrame + frameCount) of a prepared conform as a conform of their own (a
 * preview of one second): the same picture chain cut after it, so each frame is the one the full
 * output has there, and the soundtrack cut to the same span. The plan says the window's length and
 * its segments shifted onto the window's clock; everything else (strategy, size, rate) is the full
 * conform's, and sourceTimeAt(plan, firstFrame + i) is still the source time of the window's frame i.
 */
export async function windowConform(
  prepared: PreparedConform,
  window: { firstFrame: number; frameCount: number },
  workDir: string,
  opts: ConformRunOptions = {},
): Promise<PreparedConform> {
  const { plan, video } = prepared;
  const first = Math.max(0, Math.min(window.firstFrame, plan.frameCount - 1));
  const count = Math.max(1, Math.min(window.frameCount, plan.frameCount - first));
  const start = first / plan.fps;
  const duration = count / plan.fps;
  const audioPath = join(workDir, 'soundtrack-window.wav');
  const from = Math.round(start * AUDIO_SAMPLE_RATE);
  const to = from + Math.round(duration * AUDIO_SAMPLE_RATE);
  await runFfmpeg(
    [
      '-i',
      prepared.audioPath,
      '-af',
      `atrim=start_sample=${from}:end_sample=${to},asetpts=PTS-STARTPTS`,
      '-c:a',
      'pcm_s16le',
      '-f',
      'wav',
      audioPath,
    ],
    { signal: opts.signal, timeoutMs: opts.timeoutMs },
  );
  const segments = plan.segments
    .filter((s) => s.endTime > start && s.startTime < start + duration)
    .map((s) => {
      // The part of the segment inside the window, its audio window moved on as far.
      const skipped = Math.max(0, start - s.startTime);
      return {
        ...s,
        startTime: Math.max(0, s.startTime - start),
        endTime: Math.min(duration, s.endTime - start),
        audioStart: Math.min(s.audioEnd, s.audioStart + skipped),
      };
    });
  const label = `[${video.output}]`;
  const chain = video.graph.endsWith(label) ? video.graph.slice(0, -label.length) : video.graph;
  const cut = `,trim=start_frame=${first}:end_frame=${first + count},setpts=PTS-STARTPTS${label}`;
  return {
    plan: { ...plan, durationSeconds: duration, frameCount: count, segments },
    video: { ...video, graph: chain + cut },
    audioPath,
    firstFrame: (prepared.firstFrame ?? 0) + first,
  };
}
