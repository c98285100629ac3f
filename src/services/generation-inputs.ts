// Submit-time input resolution: every input becomes a stored blob plus its probe, so that
// inaccessible media, plan limits and durations are refused with a 422 before anything is queued,
// and the job never downloads a URL twice.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { mkdir, rm } from 'node:fs/promises';
import type { Config } from '../config.js';
import type { BlobStore } from '../storage/blob-store.js';
import type { AssetService } from './assets.js';
import type { Organization } from '../store/organizations.js';
import type { AssetRecord } from '../store/assets.js';
import type { InputResolver, ResolvedInputs } from './generations.js';
import type { MediaRef, NormalisedRequest } from '../domain/generation-request.js';
import { AppError } from '../domain/errors.js';
import { previewWindow } from '../domain/preview.js';
import { storageExtension } from '../domain/assets.js';
import { probeMedia, MediaProbeError, type MediaKind, type MediaProbe } from '../media/probe.js';
import { fetchToFile, UrlFetchError } from '../media/fetch.js';
import { planConform, ConformPlanError, type ConformPlanInput } from '../media/conform-plan.js';
import { toConformSegments } from '../pipeline/segments.js';
import type { ResolvedMedia } from '../pipeline/resolved-media.js';
import type { SpeechTimeline } from '../speech/types.js';

// Re-exported for the modules that imported it from here before it moved to pipeline/.
export type { ResolvedMedia };

/** A user-facing refusal; the detail (ffprobe's or the fetcher's words) goes to the log only. */
function inaccessible(field: string, message: string, detail?: unknown): AppError {
  return new AppError('generation_input_video_inaccessible', { field, message, cause: detail });
}

function expectKind(
  ref: MediaRef,
  role: 'video' | 'image' | 'audio',
  kind: MediaKind,
  hasAudio: boolean,
): void {
  const ok =
    role === 'video'
      ? kind === 'VIDEO'
      : role === 'image'
        ? kind === 'IMAGE'
        : kind === 'AUDIO' || (kind === 'VIDEO' && hasAudio);
  if (!ok) {
    throw inaccessible(
      ref.field,
      `${ref.field} is ${kind === 'IMAGE' ? 'an image' : kind === 'AUDIO' ? 'audio' : 'a video'}, not ${role === 'audio' ? 'audio' : `a ${role}`}.`,
    );
  }
}

/** The conform stage's view of a request and its probed inputs (shared with the pipeline). */
export function conformInput(
  req: NormalisedRequest,
  visual: MediaProbe,
  audioSeconds: number,
): ConformPlanInput {
  const v = visual.video as NonNullable<MediaProbe['video']>;
  // A dialogue-edit render's picture is retimed onto the preview's clock before conform.
  const previewMs = req.dialogueEdit?.previewDurationMs;
  return {
    visual: req.image
      ? { kind: 'image', width: v.width, height: v.height }
      : {
          kind: 'video',
          durationSeconds: previewMs ? previewMs / 1000 : (visual.durationSeconds as number),
          fps: v.fps,
          width: v.width,
          height: v.height,
          rotation: v.rotation,
          hasAudio: !!visual.audio,
        },
    audioDurationSeconds: audioSeconds,
    syncMode: req.options.syncMode,
    fps: req.options.fps,
    outputResolution: req.options.outputResolution,
    speedup: req.options.speedup,
    segments: toConformSegments(req.segments, v.fps ?? 25),
  };
}

export function createInputResolver(config: Config, blobs: BlobStore, assets: AssetService): InputResolver {
  const tmpRoot = config.tempDir;

  async function withDownload<T>(key: string, fn: (path: string) => Promise<T>): Promise<T> {
    await mkdir(tmpRoot, { recursive: true, mode: 0o700 });
    const tmp = join(tmpRoot, `probe-${randomUUID()}`);
    try {
      await blobs.download(key, tmp);
      return await fn(tmp);
    } finally {
      await rm(tmp, { force: true });
    }
  }

  async function ownAsset(org: Organization, url: string) {
    const ours = blobs.keyFromUrl(url);
    if (ours.status !== 'valid') return null;
    return assets.findByStorageKey(org.id, ours.key);
  }

  /**
   * What ffprobe read from the asset when it was stored, where the blob is still that file: asset
   * blobs are written once under their own key, and a size that differs from the probed one means the
   * file changed. Otherwise (an asset stored before probes were kept, a changed blob) it is probed now.
   */
  async function assetProbe(ref: MediaRef, asset: AssetRecord): Promise<MediaProbe> {
    const kept = asset.probe;
    if (kept) {
      const st = await blobs.stat(asset.storageKey);
      if (st && st.size === kept.sizeBytes) return kept;
    }
    // Probed from a temporary copy: the store need not be on this machine's disk.
    return withDownload(asset.storageKey, (path) => probeMedia(path)).catch((e: unknown) => {
      throw inaccessible(ref.field, 'The asset could not be read as media.', e);
    });
  }

  /** Only synthesized speech (a TTS asset) has a timeline: no query for any other asset. */
  async function timelineOf(org: Organization, asset: AssetRecord): Promise<SpeechTimeline | undefined> {
    if (asset.inputType !== 'TTS') return undefined;
    return ((await assets.timeline(org.id, asset.id)) as SpeechTimeline | null) ?? undefined;
  }

  /** A dialogue edit's preview WAV: ours already, kept by the preview (never removed on refusal). */
  async function previewAudio(key: string): Promise<ResolvedMedia> {
    const probe = await withDownload(key, (path) => probeMedia(path)).catch((e: unknown) => {
      throw new AppError('dialogue_edit_not_ready', {
        field: 'dialogueEdit.id',
        message: 'The preview audio of the dialogue edit could not be read.',
        cause: e,
      });
    });
    return { blobKey: key, source: 'asset', probe };
  }

  async function one(
    org: Organization,
    ref: MediaRef,
    role: 'video' | 'image' | 'audio',
    keep: boolean,
  ): Promise<ResolvedMedia> {
    if (ref.storedKey) {
      // A re-dub's video: the earlier generation's stored copy, probed again (it must still be there).
      const probe = await withDownload(ref.storedKey, (path) => probeMedia(path)).catch((e: unknown) => {
        throw inaccessible(ref.field, "The earlier dub's video could not be read.", e);
      });
      expectKind(ref, role, probe.kind, !!probe.audio);
      return { blobKey: ref.storedKey, source: 'generation', probe };
    }
    // Our own signed URL (a TTS result, an upload) is read from the store, never fetched over HTTP.
    const own = ref.url ? await ownAsset(org, ref.url) : null;
    if (own) {
      const probe = await assetProbe(ref, own);
      expectKind(ref, role, probe.kind, !!probe.audio);
      const timeline = role === 'audio' ? await timelineOf(org, own) : undefined;
      return {
        blobKey: own.storageKey,
        source: 'asset',
        assetId: own.id,
        url: ref.url,
        probe,
        ...(timeline ? { timeline } : {}),
      };
    }
    if (ref.assetId) {
      const r = await assets.get(org.id, ref.assetId).catch((err: unknown) => {
        if (err instanceof AppError && err.code === 'asset_not_found') {
          throw new AppError('asset_not_found', {
            status: 422,
            field: `${ref.field}.assetId`,
            message: `Asset ${ref.assetId} not found.`,
          });
        }
        throw err;
      });
      const probe = await assetProbe(ref, r);
      expectKind(ref, role, probe.kind, !!probe.audio);
      const timeline = role === 'audio' ? await timelineOf(org, r) : undefined;
      return {
        blobKey: r.storageKey,
        source: 'asset',
        assetId: r.id,
        probe,
        ...(timeline ? { timeline } : {}),
      };
    }
    const url = ref.url as string;
    await mkdir(tmpRoot, { recursive: true, mode: 0o700 });
    const tmp = join(tmpRoot, `fetch-${randomUUID()}`);
    try {
      await fetchToFile(url, tmp, {
        maxBytes: Math.min(config.fetchMaxBytes, assets.maxFileBytes(org) + 1),
        timeoutMs: config.fetchTimeoutMs,
        allowPrivate: config.allowPrivateUrls,
      }).catch((e: unknown) => {
        if (e instanceof UrlFetchError) {
          if (e.reason === 'too_large') {
            throw new AppError('file_size_exceeds_plan_limit', {
              field: `${ref.field}.url`,
              message: `${ref.field}.url is larger than the ${org.plan} plan allows.`,
            });
          }
          throw inaccessible(`${ref.field}.url`, `${ref.field}.url could not be fetched (${e.reason}).`, e);
        }
        throw e;
      });
      let probe: MediaProbe;
      try {
        probe = await probeMedia(tmp);
      } catch (e) {
        if (e instanceof MediaProbeError)
          throw inaccessible(`${ref.field}.url`, `${ref.field}.url is not readable media.`, e);
        throw e;
      }
      expectKind(ref, role, probe.kind, !!probe.audio);
      if (!keep) return { blobKey: '', source: 'url', url, probe };
      const key = `inputs/${org.id}/${randomUUID()}.${storageExtension(probe.format)}`;
      await blobs.putFile(key, tmp, { contentType: 'application/octet-stream', move: true });
      return { blobKey: key, source: 'url', url, probe };
    } finally {
      await rm(tmp, { force: true });
    }
  }

  return async (
    org: Organization,
    req: NormalisedRequest,
    opts: { keep?: boolean } = {},
  ): Promise<ResolvedInputs> => {
    const keep = opts.keep ?? true;
    const preview = req.dialogueEdit?.previewKey;
    // Both inputs are fetched and probed at once; the visual input's error is reported first.
    const [v, a] = await Promise.allSettled([
      req.video ? one(org, req.video, 'video', keep) : one(org, req.image as MediaRef, 'image', keep),
      // A dub's source speech is the video's own soundtrack: the same blob, fetched once.
      req.dub ? Promise.resolve(null) : preview ? previewAudio(preview) : one(org, req.audio, 'audio', keep),
    ]);
    // What was fetched for this request is stored nowhere else yet: a refusal leaves nothing behind.
    const fetched = [v, a].flatMap((r) =>
      r.status === 'fulfilled' && r.value?.source === 'url' && r.value.blobKey ? [r.value.blobKey] : [],
    );
    try {
      if (v.status === 'rejected') throw v.reason;
      if (a.status === 'rejected') throw a.reason;
      const visual = v.value;
      if (req.dub && !visual.probe.audio)
        throw inaccessible(req.audio.field, 'The video has no soundtrack: a dub needs its speech.');
      const audio = a.value ?? visual;
      const videoSeconds = visual.probe.durationSeconds;
      const audioSeconds = audio.probe.durationSeconds ?? 0;
      if (audioSeconds <= 0) throw inaccessible(req.audio.field, 'The audio input has no duration.');
      if (req.video && (!videoSeconds || videoSeconds <= 0))
        throw inaccessible(req.video.field, 'The video input has no duration.');
      let plan: ReturnType<typeof planConform>;
      try {
        plan = planConform(conformInput(req, visual.probe, audioSeconds));
      } catch (e) {
        if (e instanceof ConformPlanError) {
          if (e.field.startsWith('segments'))
            throw new AppError('generation_segments_invalid', { field: e.field, message: e.message });
          throw new AppError('invalid_request', { field: e.field, message: e.message });
        }
        throw e;
      }
      // A preview is priced as its window only (400 when atMs is past the end), but limited as the whole
      // output: its job still prepares the whole soundtrack and hears the whole recording.
      const atMs = req.options.preview?.atMs;
      return {
        resolved: { [req.video ? 'video' : 'image']: visual, audio },
        maxFileBytes: Math.max(visual.probe.sizeBytes, audio.probe.sizeBytes),
        outputSeconds:
          atMs === undefined
            ? plan.durationSeconds
            : previewWindow(atMs, plan.frameCount, plan.fps).durationSeconds,
        workSeconds: plan.durationSeconds,
        fps: plan.fps,
        width: plan.width,
        height: plan.height,
      };
    } catch (e) {
      await Promise.all(fetched.map((k) => blobs.delete(k).catch(() => undefined)));
      throw e;
    }
  };
}
