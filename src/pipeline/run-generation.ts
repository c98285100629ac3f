// The generation pipeline: inputs (fetched and probed at submit) -> conform -> engine -> encode ->
// watermark -> outputs. It gets what the job needs (prepared at claim time: inputs, request, the
// watermark decision), a files interface and a progress callback; it never sees the database or the
// service container, so it runs the same in the API process, a worker process or a remote worker.
import { rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunContext } from '../jobs/handler.js';
import { JobFailure } from '../jobs/handler.js';
import type { NormalisedOptions, NormalisedRequest } from '../domain/generation-request.js';
import type { ResolvedMedia } from './resolved-media.js';
import { AppError } from '../domain/errors.js';
import { withTempDir } from '../media/tempdir.js';
import { conformedFrames, prepareConform, renderConformed, windowConform } from '../media/conform.js';
import { firstFrameJpeg } from '../media/still.js';
import { previewWindow } from '../domain/preview.js';
import { encodeFrames, FramePool, frameBytes, type PixelFormat } from '../media/frames.js';
import { probeMedia, type MediaProbe } from '../media/probe.js';
import { watermarkVideo } from '../media/watermark.js';
import { MediaProcessError } from '../media/ffmpeg.js';
import { contentTypeFor } from '../domain/assets.js';
import type { EngineRegistry } from '../engines/registry.js';
import type { EngineReport } from '../engines/engine.js';
import { conformedScene } from '../media/scene.js';
import { wantsSpeakerScan } from '../engines/engine.js';
import { toConformSegments } from './segments.js';
import { inWindowTime } from './timeline.js';
import { articulationFor, articulationReport, visemesOrNull, type ArticulationDeps } from './articulation.js';
import { renderEditedVideo } from './dialogue-render.js';
import { activeSpansOf, type DialogueRender } from '../domain/dialogue-render.js';
import { dubSummary, type DubRecord } from '../domain/dub.js';
import { dubSpeech, type DubOutput, type DubTools, type DubVoiceChoice } from './dub.js';
import { redubSpeech } from './redub.js';
import type { RedubBase } from '../domain/redub.js';

/** Everything a generation run needs, made on the server when the job is claimed. */
export interface GenerationRunInput {
  readonly generationId: string;
  readonly model: string;
  readonly request: NormalisedRequest;
  readonly visual: ResolvedMedia;
  readonly audio: ResolvedMedia;
  /** The plan's watermark rule, decided at claim time. */
  readonly watermark: boolean;
  /** A dub's chosen voice (dubParams.voiceId), resolved at claim time. */
  readonly dubVoice?: DubVoiceChoice;
  /** A dub's per-speaker voices (dubParams.voices), resolved at claim time. */
  readonly dubVoices?: Readonly<Record<string, DubVoiceChoice>>;
  /** A re-dub's earlier dub (dubParams.basedOn), read at claim time. */
  readonly dubBase?: RedubBase;
}

export interface GenerationResult {
  readonly outputKey: string;
  readonly watermarkedKey: string | null;
  readonly outputDuration: number;
  readonly fps: number;
  readonly quality: Record<string, unknown>;
  /** A dub's public transcript and its soundtrack (the generation's other output). */
  readonly dub?: { readonly record: DubRecord; readonly audioKey: string };
  /** A preview's still: a JPEG of its first frame (the watermarked one where the plan needs it). */
  readonly stillKey?: string;
}

/**
 * The admission's probe of an input, reused where the downloaded file is the one it read (same blob,
 * same size); a file that differs is probed again, so the run never works from another file's facts.
 */
async function probeOf(media: ResolvedMedia, path: string): Promise<MediaProbe> {
  const { size } = await stat(path);
  return size === media.probe.sizeBytes ? media.probe : probeMedia(path);
}

/** The earlier dub a re-dub's job was given at claim time. */
function earlierDub(input: GenerationRunInput): RedubBase {
  if (!input.dubBase)
    throw new JobFailure(
      { code: 'generation_processing_failed', message: 'The earlier dub of this re-dub could not be read.' },
      'permanent',
      `generation ${input.generationId}: no dubBase in the run input`,
    );
  return input.dubBase;
}

/**
 * The dub's record with each segment's fitted WAV stored (`dub-<segment>.wav`, an output of this
 * job like dub.wav, so deleted with the generation): what a re-dub reuses and the studio plays.
 */
async function withKeptClips(
  record: DubRecord,
  kept: Pick<DubOutput, 'clips' | 'speakers'> | null,
  ctx: RunContext,
): Promise<DubRecord> {
  if (!kept?.clips) return record;
  const clips = [];
  for (const c of kept.clips)
    clips.push({
      id: c.id,
      key: await ctx.files.upload(`dub-${c.id}.wav`, c.path, 'audio/wav'),
      words: c.words,
      phonemes: c.phonemes,
    });
  return { ...record, kept: { clips, speakers: kept.speakers } };
}

/** The options as a window of the output sees them: per-frame speaker boxes from its first frame. */
function windowedOptions(options: NormalisedOptions, firstFrame: number): NormalisedOptions {
  const boxes = options.activeSpeaker?.boundingBoxes;
  if (!options.activeSpeaker || !boxes) return options;
  return { ...options, activeSpeaker: { ...options.activeSpeaker, boundingBoxes: boxes.slice(firstFrame) } };
}

async function uploadStill(video: string, dir: string, ctx: RunContext): Promise<string> {
  const still = join(dir, 'still.jpg');
  await firstFrameJpeg(video, still, { signal: ctx.signal });
  return ctx.files.upload('still.jpg', still, 'image/jpeg');
}

export async function runGeneration(
  input: GenerationRunInput,
  ctx: RunContext,
  engines: EngineRegistry,
  speech: ArticulationDeps | null = null,
  dubbing: DubTools | null = null,
): Promise<GenerationResult> {
  const req = input.request;
  let visual = input.visual;
  const edit = req.dialogueEdit?.previewKey ? (req.dialogueEdit as DialogueRender) : null;
  const format = req.options.outputFormat;
  const binding = engines.for(input.model);
  const contentType = contentTypeFor(format, 'VIDEO');

  return withTempDir(
    'lipsync-job',
    async (dir) => {
      let visualPath = join(dir, 'visual');
      const audioPath = join(dir, 'audio');
      await ctx.files.download(visual.blobKey, visualPath, ctx.signal);
      visual = { ...visual, probe: await probeOf(visual, visualPath) };
      let audio: ResolvedMedia;
      let dubRecord: DubRecord | null = null;
      let dubClips: Pick<DubOutput, 'clips' | 'speakers'> | null = null;
      let dubReport: Record<string, unknown> | null = null;
      if (req.dub) {
        // A dub: the video's own speech becomes a new soundtrack first (the first 40 % of the
        // progress); from there on it is an audio input with its synthesizer's phone times.
        if (!dubbing) throw new AppError('generation_feature_unavailable', { field: 'dubParams' });
        const outer = ctx.progress;
        const stage = {
          sourcePath: visualPath,
          durationMs: Math.round((visual.probe.durationSeconds ?? 0) * 1000),
          request: req.dub,
          voice: input.dubVoice ?? null,
          voices: input.dubVoices ?? {},
          workDir: dir,
          signal: ctx.signal,
          onProgress: (f: number) => outer(2 + f * 38),
        };
        const files = ctx.files;
        const done = req.dub.basedOn
          ? await redubSpeech(
              {
                ...stage,
                base: earlierDub(input),
                fetch: (key, path) => files.download(key, path, stage.signal),
              },
              dubbing,
            )
          : await dubSpeech(stage, dubbing);
        dubClips = { clips: done.clips, speakers: done.speakers };
        ctx = { ...ctx, progress: (p) => outer(40 + p * 0.6) };
        await rename(done.audioPath, audioPath);
        // Stored with the outputs at the end (an upload takes the file away).
        audio = { blobKey: '', source: 'asset', probe: await probeMedia(audioPath), timeline: done.timeline };
        dubRecord = done.record;
        dubReport = { ...dubSummary(done.record), stageSeconds: done.stageSeconds, notes: done.notes };
      } else {
        await ctx.files.download(input.audio.blobKey, audioPath, ctx.signal);
        audio = { ...input.audio, probe: await probeOf(input.audio, audioPath) };
      }
      ctx.progress(2);
      // A dub of several people: the face whose mouth moves with the original speech of a span is the
      // one re-animated there (active-speaker detection reads the video's own soundtrack), unless the
      // client placed the face itself.
      const options =
        dubRecord && dubRecord.voices.length > 1 && !req.options.activeSpeaker
          ? { ...req.options, activeSpeaker: { autoDetect: true } }
          : req.options;
      if (edit) {
        // A dialogue edit: the picture retimed onto the preview's clock; then the normal path.
        const edited = await renderEditedVideo({ path: visualPath, probe: visual.probe }, edit, dir, {
          signal: ctx.signal,
        });
        visualPath = edited.path;
        visual = { ...visual, probe: edited.probe };
      }
      // What is said when (voice activity, words, phones), worked out on the audio input.
      const articulation = binding.engine.passthrough
        ? null
        : await articulationFor(
            {
              audioPath,
              durationMs: Math.round((audio.probe.durationSeconds ?? 0) * 1000),
              timeline: audio.timeline ?? null,
              transcript: req.audio.transcript ?? edit?.transcript ?? null,
              workDir: dir,
              signal: ctx.signal,
              onProblem: (step, err) =>
                ctx.logger.warn({ err, step }, 'articulation step failed; a simpler source was used'),
            },
            speech,
          );
      const whole = await prepareConform(
        {
          visual: { path: visualPath, probe: visual.probe },
          audio: { path: audioPath, probe: audio.probe },
          options: {
            syncMode: req.options.syncMode,
            fps: req.options.fps,
            outputResolution: req.options.outputResolution,
            speedup: req.options.speedup,
            outputFormat: format,
            segments: toConformSegments(req.segments, visual.probe.video?.fps ?? 25),
          },
        },
        dir,
        { signal: ctx.signal, onProgress: (f) => ctx.progress(2 + f * 18) },
      );
      // A preview renders one window of the whole output: the same frames and sound as a full run there.
      const preview = req.options.preview
        ? previewWindow(req.options.preview.atMs, whole.plan.frameCount, whole.plan.fps)
        : null;
      const prepared = preview ? await windowConform(whole, preview, dir, { signal: ctx.signal }) : whole;
      const { plan } = prepared;
      const timed = <T extends { startMs: number; endMs: number }>(items: readonly T[]) =>
        inWindowTime(items, whole.plan, preview);
      // The viseme model reads the conformed audio: its rows are then in output time already.
      const visemes =
        speech?.visemes && !binding.engine.passthrough
          ? await visemesOrNull(speech.visemes, prepared.audioPath, ctx.signal)
          : null;
      const out = join(dir, `output.${format}`);
      const engineStarted = performance.now();
      let report: EngineReport;
      if (binding.engine.passthrough) {
        await renderConformed(prepared, out, format, {
          signal: ctx.signal,
          onProgress: (f) => ctx.progress(20 + f * 65),
        });
        report = {
          engine: binding.engine.id,
          framesTotal: plan.frameCount,
          framesWithFace: 0,
          lipMotionGenerated: false,
        };
      } else {
        // Active-speaker detection looks at the whole video once before drawing: it gets the
        // first part of the engine's share of the progress.
        const scanShare = wantsSpeakerScan(options) ? 0.3 : 0;
        // yuv420p through the pipes when the engine wants it for this size (and the size is even).
        const pixelFormat: PixelFormat =
          binding.engine.pixelFormatFor?.(plan.width, plan.height, binding.settings) === 'yuv420p' &&
          plan.width % 2 === 0 &&
          plan.height % 2 === 0
            ? 'yuv420p'
            : 'rgb24';
        // Frame buffers go round from the decoder through the engine to the encoder and back.
        const pool = new FramePool(frameBytes({ width: plan.width, height: plan.height, pixelFormat }));
        const run = binding.engine.start({
          frames: conformedFrames(prepared, { signal: ctx.signal, pixelFormat, pool, tmpRoot: dir }),
          pixelFormat,
          width: plan.width,
          height: plan.height,
          fps: plan.fps,
          frameCount: plan.frameCount,
          audioPath: prepared.audioPath,
          // A dialogue edit redraws only its slots: elsewhere the frames pass through untouched.
          activeSpans: edit
            ? activeSpansOf(edit.slots, plan.durationSeconds * 1000)
            : plan.segments.length
              ? plan.segments.map((s) => ({ start: s.startTime, end: s.endTime }))
              : null,
          phonemes: articulation ? timed(articulation.phonemes) : null,
          phonemeSpans: articulation?.trusted ? timed(articulation.trusted) : null,
          phonemesAligned: articulation ? articulation.primary !== 'text' : false,
          speech: articulation?.speech ? timed(articulation.speech) : null,
          visemes,
          options: preview ? windowedOptions(options, preview.firstFrame) : options,
          settings: binding.settings,
          signal: ctx.signal,
          scene: conformedScene(prepared, { path: visualPath, hasAudio: visual.probe.audio !== null }, dir, {
            signal: ctx.signal,
          }),
          onPrepassProgress: (f) => ctx.progress(20 + 65 * scanShare * f),
        });
        await encodeFrames(
          run.frames,
          {
            width: plan.width,
            height: plan.height,
            pixelFormat,
            fps: plan.fpsText,
            outputPath: out,
            format,
            audioPath: prepared.audioPath,
            durationSeconds: plan.durationSeconds,
          },
          {
            signal: ctx.signal,
            pool,
            onFrames: (n) =>
              ctx.progress(20 + 65 * (scanShare + ((1 - scanShare) * n) / Math.max(1, plan.frameCount))),
          },
        );
        report = run.report();
        if (report.framesTotal > 0 && report.framesWithFace === 0) {
          throw new AppError('generation_no_face_detected', { details: { quality: report } });
        }
      }
      ctx.metrics?.engineFrames(
        report.engine,
        report.framesTotal,
        (performance.now() - engineStarted) / 1000,
      );
      // Read from the file's own boxes: the output's duration and size without an ffprobe start.
      const probe = await probeMedia(out);
      const outputDuration = probe.durationSeconds ?? plan.durationSeconds;

      let watermarkedKey: string | null = null;
      let stillKey: string | null = null;
      if (input.watermark) {
        const wm = join(dir, `watermarked.${format}`);
        await watermarkVideo(out, wm, { signal: ctx.signal, format, probe });
        // The still first: an upload takes the file away.
        if (preview) stillKey = await uploadStill(wm, dir, ctx);
        watermarkedKey = await ctx.files.upload(`preview.${format}`, wm, contentType);
      } else if (preview) stillKey = await uploadStill(out, dir, ctx);
      ctx.progress(95);
      const outputKey = await ctx.files.upload(`output.${format}`, out, contentType);
      const dub = dubRecord
        ? {
            record: await withKeptClips(dubRecord, dubClips, ctx),
            audioKey: await ctx.files.upload('dub.wav', audioPath, 'audio/wav'),
          }
        : null;
      return {
        outputKey,
        watermarkedKey,
        outputDuration,
        fps: plan.fps,
        ...(dub ? { dub } : {}),
        ...(stillKey ? { stillKey } : {}),
        quality: {
          ...(dubReport ? { dub: dubReport } : {}),
          ...report,
          width: plan.width,
          height: plan.height,
          fps: plan.fps,
          syncMode: plan.syncMode,
          ...(articulation
            ? { articulation: articulationReport(articulation, whole.plan, visemes, preview) }
            : {}),
        },
      };
    },
    { signal: ctx.signal, root: ctx.tempRoot },
  ).catch((err: unknown) => {
    if (err instanceof MediaProcessError && err.reason !== 'aborted') {
      // The media could not be processed: running it again would fail the same way.
      throw new JobFailure(
        { code: 'generation_processing_failed', message: 'The media could not be processed.' },
        'permanent',
        err,
      );
    }
    throw err;
  });
}
