// Use cases for generations: create (admission: generation-admission.ts), get/wait, list, delete,
// download URL, a dub's transcript and subtitles, estimates, cancel, and the views clients receive.
import type { Config } from '../config.js';
import type { Store } from '../store/index.js';
import type { GenerationRecord } from '../store/generations.js';
import type { Organization } from '../store/organizations.js';
import type { BlobStore } from '../storage/blob-store.js';
import type { AuthContext } from './api-keys.js';
import type { TranslationService } from './translation.js';
import { dubSummary, publicDub } from '../domain/dub.js';
import type { AdmissionService } from './admission.js';
import type { AssetService } from './assets.js';
import type { Drain } from './drain.js';
import type { EventBus } from '../jobs/event-bus.js';
import type { JobQueue } from '../jobs/queue.js';
import { GENERATION_KIND } from '../domain/job-kinds.js';
import type { IdempotencyService } from './idempotency.js';
import type { UploadedForm } from './generation-uploads.js';
import type { ResolvedMedia } from './generation-inputs.js';
import { generationView, type GenerationView } from './generation-view.js';
import { GenerationAdmission, type BatchChild } from './generation-admission.js';
import { attachDialogueEdit } from './dialogue-render.js';
import { attachRedub } from './redub.js';
import type { SpeechService } from './speech.js';
import { AppError } from '../domain/errors.js';
import {
  normaliseGenerationRequest,
  type GenerationRequestBody,
  type NormalisedRequest,
} from '../domain/generation-request.js';
import { JOB_CANCELED } from '../domain/jobs.js';
import { deliverableKey } from '../domain/plans.js';
import { ACTIVE_STATUSES, downloadDecision, endsWait, isStatus } from '../domain/generation-status.js';
import { estimateCost, type Estimate, type PriceTable } from '../domain/pricing.js';
import { isUuid } from '../domain/ids.js';
import {
  renderSubtitles,
  type DubRecord,
  type SubtitleFormat,
  type SubtitleLanguage,
} from '../domain/dub.js';
import { completedDub, SUBTITLE_CONTENT_TYPES, subtitlesFileName } from '../domain/dub-reads.js';

export interface ResolvedInputs {
  /** What the job needs: blob keys and probes per role (video/image/audio). */
  resolved: Record<string, ResolvedMedia>;
  /** Longest file among the inputs, for the plan's size limit. */
  maxFileBytes: number;
  /** Expected output length in seconds, for the quote and the bill (a preview's window only). */
  outputSeconds: number;
  /** Length of the output the job works through, for the plan's duration limit and work budget: a
   * preview still prepares the whole soundtrack and hears the whole recording. */
  workSeconds: number;
  /** The output's frame rate. */
  fps: number;
  /** The output's frame size. */
  width: number;
  height: number;
}

/** Fetches/locates and probes the inputs at submit time (422 when inaccessible). */
export type InputResolver = (
  org: Organization,
  req: NormalisedRequest,
  opts?: { /** false: probe only, store nothing (cost analysis). */ keep?: boolean },
) => Promise<ResolvedInputs>;

/** Refuses a URL the outgoing client would refuse (private or loopback address, bad scheme). */
export type UrlCheck = (url: string, field: string) => Promise<void>;

export interface CreateResult {
  generation: GenerationRecord;
  replayed: boolean;
}

export interface CreateOptions {
  idempotencyKey: string | null;
  /** A multipart request's form: its files are saved as assets once the key is claimed. */
  upload?: UploadedForm;
  source?: string;
}

export interface GenerationServiceDeps {
  readonly config: Config;
  readonly store: Store;
  readonly admission: AdmissionService;
  readonly idempotency: IdempotencyService;
  readonly bus: EventBus;
  /** A draining instance answers a long-poll with the current state at once. */
  readonly drain?: Drain;
  readonly queue: JobQueue;
  readonly blobs: BlobStore;
  readonly assets: AssetService;
  readonly prices: PriceTable;
  readonly resolveInputs: InputResolver;
  readonly checkWebhookUrl: UrlCheck;
  /** Synthesizes text inputs at submit time (the generation then runs as with recorded audio). */
  readonly speech: SpeechService;
  /** Dubbing's translation providers: a dub's language pair is checked at submit. */
  readonly translation: TranslationService;
}

export class GenerationService {
  private readonly store: Store;

  private readonly admission: GenerationAdmission;

  /** viewWithJson's texts, by the frozen record they were written from. */
  private readonly viewTexts = new WeakMap<
    GenerationRecord,
    { outputUrl: string | null; stillUrl: string | null; progress: boolean; quality: boolean; text: string }
  >();

  constructor(private readonly deps: GenerationServiceDeps) {
    this.store = deps.store;
    this.admission = new GenerationAdmission(deps);
  }

  /** POST /v2/generate (src/services/generation-admission.ts). */
  create(auth: AuthContext, body: GenerationRequestBody, opts: CreateOptions): Promise<CreateResult> {
    return this.admission.create(auth, body, opts);
  }

  /** The refusals of a request that need no fetching (a batch validates each record with these). */
  preflight(org: Organization, req: NormalisedRequest): Promise<NormalisedRequest> {
    return this.admission.preflight(org, req);
  }

  /** A batch's record as a generation (a bulk job under the batch). */
  admitBatchChild(
    who: { organization: Organization; keyId: string | null },
    body: GenerationRequestBody,
    child: BatchChild,
  ): Promise<GenerationRecord> {
    return this.admission.admitBatchChild(who, body, child);
  }

  /** GET /v2/generate/{id}: the generation read with the key when the gatekeeper preloaded it. */
  async getFor(auth: AuthContext, id: string): Promise<GenerationRecord> {
    const pre = auth.preloaded;
    if (pre === undefined || pre.generationId !== id) return this.get(auth.organization.id, id);
    if (!pre.generation) throw new AppError('generation_not_found', { field: 'id' });
    return pre.generation;
  }

  async get(organizationId: string, id: string): Promise<GenerationRecord> {
    const g = isUuid(id) ? await this.store.generations.find(id, organizationId) : null;
    if (!g) throw new AppError('generation_not_found', { field: 'id' });
    return g;
  }

  /** Long-poll: returns at once when terminal, else when the state changes or the timeout passes. */
  async wait(
    organizationId: string,
    id: string,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<GenerationRecord> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      // Subscribe before reading: a change committed between the read and the subscription would
      // otherwise be missed and the waiter would sleep until its timeout.
      const stop = new AbortController();
      const onAbort = () => stop.abort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.deps.drain?.signal.addEventListener('abort', onAbort, { once: true });
      const change = this.deps.bus.waitForChange(id, Math.max(0, deadline - Date.now()), stop.signal);
      try {
        const g = await this.get(organizationId, id);
        if (endsWait(g.status) || Date.now() >= deadline || signal?.aborted || this.deps.drain?.draining)
          return g;
        if ((await change) === 'timeout') return await this.get(organizationId, id);
      } finally {
        stop.abort();
        signal?.removeEventListener('abort', onAbort);
        this.deps.drain?.signal.removeEventListener('abort', onAbort);
        await change;
      }
    }
  }

  async list(
    organizationId: string,
    q: {
      status?: string[];
      ids?: string[];
      source?: string[];
      projectId?: string;
      limit?: number;
      cursor?: string;
    },
  ): Promise<GenerationRecord[]> {
    for (const s of q.status ?? []) {
      if (!isStatus(s))
        throw new AppError('invalid_request', {
          field: 'status',
          message: `unknown status ${JSON.stringify(s)}`,
        });
    }
    if (q.cursor && !q.limit)
      throw new AppError('invalid_request', { field: 'cursor', message: 'cursor requires limit' });
    if (q.projectId && !isUuid(q.projectId)) {
      throw new AppError('invalid_request', { field: 'projectId', message: 'projectId must be a UUID' });
    }
    let cursor: GenerationRecord | null = null;
    if (q.cursor) {
      cursor = isUuid(q.cursor) ? await this.store.generations.find(q.cursor, organizationId) : null;
      if (!cursor)
        throw new AppError('invalid_request', {
          field: 'cursor',
          message: 'cursor is not a generation of this organization',
        });
    }
    return this.store.generations.list(organizationId, {
      statuses: q.status,
      ids: q.ids,
      sources: q.source,
      projectId: q.projectId,
      limit: q.limit,
      cursor,
    });
  }

  /** Marks it deleted, then removes its outputs and the inputs it fetched (signed URLs stop working). */
  async delete(organizationId: string, id: string): Promise<GenerationRecord> {
    const g = await this.get(organizationId, id);
    if (!endsWait(g.status)) throw new AppError('generation_not_deletable_while_processing');
    // A re-dub still running reads this dub's video and segment audio (409, as an asset in use).
    if (
      !(await this.store.generations.markDeletedUnlessRedubbed(g, new Date().toISOString(), ACTIVE_STATUSES))
    )
      throw new AppError('generation_not_deletable_while_processing', {
        field: 'id',
        message: `A re-dub of generation ${g.id} (dubParams.basedOn) is still pending or processing.`,
        suggestion:
          'Wait until the re-dubs of this generation have finished (or cancel them), then delete it again.',
      });
    const keys = [g.outputKey, g.watermarkedKey, g.stillKey];
    for (const m of Object.values(g.resolvedInput)) {
      const media = m as Partial<ResolvedMedia> | null;
      if (media?.source === 'url' && typeof media.blobKey === 'string') keys.push(media.blobKey);
    }
    const job = await this.store.jobs.findBySubject(GENERATION_KIND, g.id);
    if (job) keys.push(...(await this.deps.blobs.list(`jobs/${job.id}/`).catch(() => [])));
    for (const key of new Set(keys)) if (key) await this.deps.blobs.delete(key).catch(() => undefined);
    return g;
  }

  /** Which stored file a download serves: the watermarked derivative where the plan needs it. */
  async downloadTarget(
    org: Organization,
    id: string,
  ): Promise<{ generation: GenerationRecord; key: string | null; url: string | null }> {
    if (!isUuid(id))
      throw new AppError('invalid_request', { field: 'id', message: 'id must be a generation UUID' });
    const g = await this.get(org.id, id);
    const d = downloadDecision(g.status);
    if (d === 'not_ready') throw new AppError('generation_not_ready');
    if (d === 'not_downloadable') throw new AppError('generation_not_downloadable');
    if (!g.outputKey && g.outputUrl) return { generation: g, key: null, url: g.outputUrl };
    const key = deliverableKey(org.plan, g);
    if (!key) throw new AppError('generation_output_unavailable');
    return { generation: g, key, url: null };
  }

  /** The signed download URL of a generation's output (GET /v2/generations/{id}/download). */
  async downloadUrl(org: Organization, id: string, fileName?: string): Promise<string> {
    const t = await this.downloadTarget(org, id);
    if (!t.key) return t.url as string;
    try {
      if (!(await this.deps.blobs.exists(t.key))) throw new AppError('generation_output_unavailable');
      return await this.deps.blobs.signedUrl(t.key, { fileName: downloadName(t.generation, fileName) });
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw new AppError('generation_download_unavailable', { headers: { 'Retry-After': '5' } });
    }
  }

  /** GET /v2/generations/{id}/transcript: a completed dub's stored transcript. */
  async dubTranscript(
    org: Organization,
    id: string,
  ): Promise<{ generationId: string } & Omit<DubRecord, 'kept'>> {
    const g = await this.get(org.id, id);
    return { generationId: g.id, ...publicDub(completedDub(g)) };
  }

  /**
   * GET /v2/generations/{id}/dub/segments/{segmentId}/audio: a signed URL of one segment's fitted
   * speech as the dub placed it (a WAV), as the output download gives the output's.
   */
  async dubSegmentAudioUrl(org: Organization, id: string, segmentId: string): Promise<string> {
    const g = await this.get(org.id, id);
    const dub = completedDub(g);
    if (!dub.segments.some((s) => s.id === segmentId))
      throw new AppError('generation_output_unavailable', {
        field: 'segmentId',
        message: `The dub has no segment ${JSON.stringify(segmentId)}.`,
      });
    const clip = dub.kept?.clips.find((c) => c.id === segmentId);
    if (!clip)
      throw new AppError('generation_output_unavailable', {
        field: 'segmentId',
        message: 'This dub kept no audio per segment (it was made before segments were kept).',
      });
    try {
      if (!(await this.deps.blobs.exists(clip.key))) throw new AppError('generation_output_unavailable');
      return await this.deps.blobs.signedUrl(clip.key, { fileName: `${g.id}.${segmentId}.wav` });
    } catch (err) {
      if (err instanceof AppError) throw err;
      throw new AppError('generation_download_unavailable', { headers: { 'Retry-After': '5' }, cause: err });
    }
  }

  /** GET /v2/generations/{id}/subtitles: a completed dub's subtitles as a file. */
  async dubSubtitles(
    org: Organization,
    id: string,
    format: SubtitleFormat,
    lang: SubtitleLanguage,
  ): Promise<{ text: string; contentType: string; fileName: string }> {
    const g = await this.get(org.id, id);
    const dub = completedDub(g);
    return {
      text: renderSubtitles(dub, format, lang),
      contentType: SUBTITLE_CONTENT_TYPES[format],
      fileName: subtitlesFileName(g.id, dub, lang, format),
    };
  }

  /** The output URL a view shows: signed, and the watermarked derivative where the plan needs it. */
  async outputUrl(g: GenerationRecord, org: Organization): Promise<string | null> {
    if (g.status !== 'COMPLETED') return null;
    if (!g.outputKey) return g.outputUrl;
    const key = deliverableKey(org.plan, g);
    return key ? this.deps.blobs.signedUrl(key, { fileName: downloadName(g) }) : null;
  }

  /** A completed preview's still, signed (the watermarked picture where the plan needs it). */
  async stillUrl(g: GenerationRecord): Promise<string | null> {
    if (g.status !== 'COMPLETED' || !g.stillKey) return null;
    return this.deps.blobs.signedUrl(g.stillKey, { fileName: downloadName(g).replace(/\.[^.]+$/, '.jpg') });
  }

  async view(
    g: GenerationRecord,
    org: Organization,
    extra: { progress?: boolean; quality?: boolean } = {},
  ): Promise<GenerationView> {
    return generationView(g, {
      outputUrl: await this.outputUrl(g, org),
      stillUrl: await this.stillUrl(g),
      includeProgress: extra.progress,
      includeQuality: extra.quality,
    });
  }

  /**
   * The view and its JSON text, written by `serialize` (the route's response serializer). Records shared
   * through the store's read cache are frozen and stand for one state of the database, so their text
   * is kept with them and written again only when the output URL changes (each second: the signature's
   * expiry moves on) or other options are asked for; any other record is written every time. One
   * route's serializer only (GET /v2/generate/{id}): the kept text does not say which wrote it.
   */
  async viewWithJson(
    g: GenerationRecord,
    org: Organization,
    extra: { progress: boolean; quality: boolean },
    serialize: (view: GenerationView) => string,
  ): Promise<{ view: GenerationView; text: string }> {
    const outputUrl = await this.outputUrl(g, org);
    const stillUrl = await this.stillUrl(g);
    const view = generationView(g, {
      outputUrl,
      stillUrl,
      includeProgress: extra.progress,
      includeQuality: extra.quality,
    });
    const kept = this.viewTexts.get(g);
    if (
      kept !== undefined &&
      kept.outputUrl === outputUrl &&
      kept.stillUrl === stillUrl &&
      kept.progress === extra.progress &&
      kept.quality === extra.quality
    ) {
      return { view, text: kept.text };
    }
    const text = serialize(view);
    if (Object.isFrozen(g)) this.viewTexts.set(g, { outputUrl, stillUrl, ...extra, text });
    return { view, text };
  }

  /**
   * A webhook's body at delivery time: the generation as it is now, with a fresh output URL (its
   * status as stored when it was sent); null when the generation is gone.
   */
  async webhookBody(generationId: string, stored: string): Promise<string | null> {
    const g = await this.store.generations.findAny(generationId);
    const org = g ? await this.store.organizations.findById(g.organizationId) : null;
    if (!g || !org) return null;
    const payload = JSON.parse(stored) as Record<string, unknown>;
    return JSON.stringify({
      ...payload,
      ...generationView(g, { outputUrl: await this.outputUrl(g, org), stillUrl: await this.stillUrl(g) }),
      status: payload.status,
      finalStatus: g.status,
      // A dub says what was dubbed and how well (languages, voices, segments that fit, stretch).
      ...(g.dub ? { dub: dubSummary(g.dub) } : {}),
    });
  }

  /**
   * The official client's cost analysis (POST /v2/analyze/cost): a full generation request whose media
   * are probed (nothing stored, nothing created) and priced at the output's length and frame rate.
   */
  async analyzeCost(org: Organization, body: GenerationRequestBody): Promise<Estimate> {
    // A dialogue edit is quoted at its preview's length, with the same refusals as the render; a
    // re-dub at its earlier dub's video.
    const req = await attachRedub(
      this.store,
      org,
      await attachDialogueEdit(this.deps, org, normaliseGenerationRequest(body)),
    );
    if (req.text)
      throw new AppError('cost_estimate_unavailable', {
        field: req.text.field,
        message: 'The length of spoken text is known only once it is synthesized.',
        suggestion: 'Synthesize it with POST /v2/tts and send its url as the audio input to get a quote.',
      });
    const inputs = await this.deps.resolveInputs(org, req, { keep: false });
    return estimateCost(
      this.deps.prices,
      { model: req.model, duration: inputs.outputSeconds, fps: inputs.fps },
      org.billing,
    );
  }

  estimate(org: Organization, body: { model: string; duration: number; fps?: number }): Estimate {
    return estimateCost(this.deps.prices, body, org.billing);
  }

  /** POST /v2/generations/{id}/cancel: the organization's own generation, else as cancel(). */
  async cancelFor(organizationId: string, id: string): Promise<GenerationRecord> {
    return this.cancel((await this.get(organizationId, id)).id);
  }

  /** PENDING: canceled at once. PROCESSING: its worker stops at its next heartbeat. */
  async cancel(id: string): Promise<GenerationRecord> {
    const g = await this.store.generations.findAny(id);
    if (!g || g.deletedAt) throw new AppError('generation_not_found');
    if (endsWait(g.status)) return g;
    await this.deps.queue.cancel(GENERATION_KIND, id, JOB_CANCELED);
    return (await this.store.generations.findAny(id)) as GenerationRecord;
  }
}

/** The file name a download is served as: the requested or stored name with the output's extension. */
export function downloadName(g: GenerationRecord, requested?: string): string {
  const base = (requested ?? g.outputFileName ?? `generation-${g.id}`).replace(/\.[A-Za-z0-9]{1,5}$/, '');
  return `${base}.${g.outputFormat}`;
}
