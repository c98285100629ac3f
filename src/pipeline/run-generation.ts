// The generation job: inputs (already fetched and probed at submit) -> conform -> engine -> encode
// -> watermark -> publish. Temp files live in one job directory that is always removed.
import { createWriteStream } from 'node:fs';
import { join } from 'node:path';
import { pipeline as pipe } from 'node:stream/promises';
import type { Services } from '../services/container.js';
import type { JobContext, JobResult, JobRunner } from '../jobs/worker.js';
import type { GenerationRecord } from '../store/generations.js';
import type { NormalisedRequest } from '../domain/generation-request.js';
import type { ResolvedMedia } from '../services/generation-inputs.js';
import type { BlobStore } from '../storage/blob-store.js';
import { AppError } from '../domain/errors.js';
import { PLAN_LIMITS } from '../domain/plans.js';
import { withTempDir } from '../media/tempdir.js';
import { conformedFrames, prepareConform, renderConformed } from '../media/conform.js';
import { encodeFrames } from '../media/frames.js';
import { probeMedia } from '../media/probe.js';
import { watermarkVideo } from '../media/watermark.js';
import { MediaProcessError } from '../media/ffmpeg.js';
import { EngineRegistry } from '../engines/registry.js';
import type { EngineReport } from '../engines/engine.js';
import { conformedScene } from '../media/scene.js';
import { wantsSpeakerScan } from '../engines/engine.js';
import { toConformSegments } from './segments.js';

interface StoredInputs {
  video?: ResolvedMedia;
  image?: ResolvedMedia;
  audio: ResolvedMedia;
  request: NormalisedRequest;
}

/** A local path for a blob: the store's own file when it has one, else a copy in the job directory. */
async function localCopy(blobs: BlobStore, key: string, dir: string, name: string): Promise<string> {
  const local = await blobs.localPath(key);
  if (local) return local;
  const path = join(dir, name);
  await pipe(await blobs.open(key), createWriteStream(path));
  return path;
}

const CONTENT_TYPES: Record<string, string> = { mp4: 'video/mp4', mov: 'video/quicktime' };

export function createJobRunner(services: Services): JobRunner {
  const engines = EngineRegistry.fromFile(services.config.enginesFile, services.config.defaultEngine);
  const { blobs, store } = services;

  return {
    async run(g: GenerationRecord, ctx: JobContext): Promise<JobResult> {
      const inputs = g.resolvedInput as unknown as StoredInputs;
      const req = inputs.request;
      const visual = inputs.video ?? inputs.image;
      if (!visual || !inputs.audio)
        throw new AppError('generation_processing_failed', {
          message: 'The generation has no resolved inputs.',
        });
      const org = await store.organizations.findById(g.organizationId);
      if (!org)
        throw new AppError('generation_processing_failed', { message: 'The organization no longer exists.' });
      const format = req.options.outputFormat;
      const binding = engines.for(g.model);

      return withTempDir(
        'lipsync-job',
        async (dir) => {
          const visualPath = await localCopy(blobs, visual.blobKey, dir, 'visual');
          const audioPath = await localCopy(blobs, inputs.audio.blobKey, dir, 'audio');
          ctx.reportProgress(2);
          const prepared = await prepareConform(
            {
              visual: { path: visualPath, probe: visual.probe },
              audio: { path: audioPath, probe: inputs.audio.probe },
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
            { signal: ctx.signal, onProgress: (f) => ctx.reportProgress(2 + f * 18) },
          );
          const { plan } = prepared;
          const out = join(dir, `output.${format}`);
          let report: EngineReport;
          if (binding.engine.passthrough) {
            await renderConformed(prepared, out, format, {
              signal: ctx.signal,
              onProgress: (f) => ctx.reportProgress(20 + f * 65),
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
            const scanShare = wantsSpeakerScan(req.options) ? 0.3 : 0;
            const run = binding.engine.start({
              frames: conformedFrames(prepared, { signal: ctx.signal }),
              width: plan.width,
              height: plan.height,
              fps: plan.fps,
              frameCount: plan.frameCount,
              audioPath: prepared.audioPath,
              activeSpans: plan.segments.length
                ? plan.segments.map((s) => ({ start: s.startTime, end: s.endTime }))
                : null,
              options: req.options,
              settings: binding.settings,
              signal: ctx.signal,
              scene: conformedScene(
                prepared,
                { path: visualPath, hasAudio: visual.probe.audio !== null },
                dir,
                { signal: ctx.signal },
              ),
              onPrepassProgress: (f) => ctx.reportProgress(20 + 65 * scanShare * f),
            });
            await encodeFrames(
              run.frames,
              {
                width: plan.width,
                height: plan.height,
                fps: plan.fpsText,
                outputPath: out,
                format,
                audioPath: prepared.audioPath,
                durationSeconds: plan.durationSeconds,
              },
              {
                signal: ctx.signal,
                onFrames: (n) =>
                  ctx.reportProgress(
                    20 + 65 * (scanShare + ((1 - scanShare) * n) / Math.max(1, plan.frameCount)),
                  ),
              },
            );
            report = run.report();
            if (report.framesTotal > 0 && report.framesWithFace === 0) {
              throw new AppError('generation_no_face_detected', { details: { quality: report } });
            }
          }
          const probe = await probeMedia(out);
          const outputDuration = probe.durationSeconds ?? plan.durationSeconds;

          let watermarkedKey: string | null = null;
          const base = `outputs/${g.organizationId}/${g.id}`;
          if (PLAN_LIMITS[org.plan].watermark) {
            const wm = join(dir, `watermarked.${format}`);
            await watermarkVideo(out, wm, { signal: ctx.signal, format, probe });
            watermarkedKey = `${base}.preview.${format}`;
            await blobs.putFile(watermarkedKey, wm, { contentType: CONTENT_TYPES[format], move: true });
          }
          ctx.reportProgress(95);
          const outputKey = `${base}.${format}`;
          await blobs.putFile(outputKey, out, { contentType: CONTENT_TYPES[format], move: true });
          return {
            outputKey,
            watermarkedKey,
            outputDuration,
            fps: plan.fps,
            quality: {
              ...report,
              width: plan.width,
              height: plan.height,
              fps: plan.fps,
              syncMode: plan.syncMode,
            },
          };
        },
        { signal: ctx.signal, root: join(services.config.dataDir, 'tmp') },
      ).catch((err: unknown) => {
        if (err instanceof MediaProcessError && err.reason !== 'aborted') {
          throw new AppError('generation_processing_failed', {
            message: `Media processing failed: ${err.message}`.slice(0, 1000),
          });
        }
        throw err;
      });
    },
  };
}
