// Use cases for generations: create (idempotent, admitted by plan concurrency and the plan's work
// budget), get/wait, list, delete, download URL, estimates, cancel, and the views clients receive.
import { randomUUID } from 'node:crypto';
import type { Config } from '../config.js';
import type { Store } from '../store/index.js';
import type { GenerationRecord } from '../store/generations.js';
import type { Organization } from '../store/organizations.js';
import type { BlobStore } from '../storage/blob-store.js';
import type { WebhookDelivery } from '../store/webhooks.js';
import type { AuthContext } from './api-keys.js';
import type { AdmissionService } from './admission.js';
import type { AssetService } from './assets.js';
import type { EventBus } from '../jobs/event-bus.js';
import type { JobQueue } from '../jobs/queue.js';
import { GENERATION_KIND } from '../handlers/generation.js';
import { CommitOutcomeUnknown, type IdempotencyClaim, type IdempotencyService } from './idempotency.js';
import { formFingerprintPayload, withUploadedAssets, type UploadedForm } from './generation-uploads.js';
import type { ResolvedMedia } from './generation-inputs.js';
import { generationView } from './generation-view.js';
import { attachDialogueEdit } from './dialogue-render.js';
import type { SpeechService } from './speech.js';
import { AppError } from '../domain/errors.js';
import {
  normaliseGenerationRequest,
  type GenerationRequestBody,
  type NormalisedRequest,
} from '../domain/generation-request.js';
import { fingerprint } from '../domain/idempotency.js';
import { JOB_CANCELED } from '../domain/jobs.js';
import { checkWorkBudget, deliverableKey, PLAN_LIMITS } from '../domain/plans.js';
import { downloadDecision, endsWait, isStatus } from '../domain/generation-status.js';
import { estimateCost, type Estimate, type PriceTable } from '../domain/pricing.js';
import { isUuid } from '../domain/ids.js';

const SCOPE = 'generate';

export interface ResolvedInputs {
  /** What the job needs: blob keys and probes per role (video/image/audio). */
  resolved: Record<string, ResolvedMedia>;
  /** Longest file among the inputs, for the plan's size limit. */
  maxFileBytes: number;
  /** Expected output length in seconds, for the plan's duration limit. */
  outputSeconds: number;
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
  readonly queue: JobQueue;
  readonly blobs: BlobStore;
  readonly assets: AssetService;
  readonly prices: PriceTable;
  readonly resolveInputs: InputResolver;
  readonly checkWebhookUrl: UrlCheck;
  /** Synthesizes text inputs at submit time (the generation then runs as with recorded audio). */
  readonly speech: SpeechService;
}

/** What a request stored before it was refused (removed again, so nothing is orphaned). */
interface Stored {
  assetIds: string[];
  inputs: ResolvedInputs | null;
}

export class GenerationService {
  private readonly store: Store;

  constructor(private readonly deps: GenerationServiceDeps) {
    this.store = deps.store;
  }

  async create(auth: AuthContext, body: GenerationRequestBody, opts: CreateOptions): Promise<CreateResult> {
    const org = auth.organization;
    const parsed = normaliseGenerationRequest(body); // 400s before the key is claimed
    const file = opts.upload?.files[0];
    if (parsed.dialogueEdit && file)
      throw new AppError('invalid_request', {
        field: file.fieldName,
        message:
          'Uploaded files cannot be combined with dialogueEdit: send the source video by url or assetId.',
      });
    const fp = fingerprint(opts.upload ? await formFingerprintPayload(body, opts.upload) : body);
    const r = await this.deps.idempotency.run({
      organizationId: org.id,
      scope: SCOPE,
      key: opts.idempotencyKey,
      fingerprint: fp,
      load: async (id) => {
        const g = await this.store.generations.findAny(id);
        return g && !g.deletedAt ? g : null;
      },
      describe: (id) => (id ? { generationId: id } : {}),
      create: (claim) => this.admit(auth, body, opts, claim),
    });
    return { generation: r.value, replayed: r.replayed };
  }

  private async checkConcurrency(org: Organization, active: number): Promise<void> {
    this.deps.admission.assertCapacity(org, active);
  }

  private async admit(
    auth: AuthContext,
    body: GenerationRequestBody,
    opts: CreateOptions,
    claim: IdempotencyClaim | null,
  ): Promise<GenerationRecord> {
    const org = auth.organization;
    await this.deps.admission.assertOpen();
    // Cheap refusals first: nothing is fetched or stored for a request refused here.
    await this.checkConcurrency(org, await this.store.generations.countActive(org.id));
    let req = await attachDialogueEdit(this.deps, org, normaliseGenerationRequest(body));
    if (
      req.projectId &&
      !(isUuid(req.projectId) && (await this.store.projects.find(org.id, req.projectId)))
    ) {
      throw new AppError('project_not_found', { status: 422, field: 'projectId' });
    }
    if (req.webhookUrl) await this.deps.checkWebhookUrl(req.webhookUrl, 'webhookUrl');
    checkWorkBudget(org.plan, {
      width: req.options.outputResolution?.[0],
      height: req.options.outputResolution?.[1],
    });

    const stored: Stored = { assetIds: [], inputs: null };
    let committed = false;
    try {
      if (opts.upload) req = await this.saveUploads(auth, body, opts.upload, stored);
      if (req.text) req = await this.synthesizeText(auth, req, stored, claim !== null);
      stored.inputs = await this.deps.resolveInputs(org, req);
      const g = await this.insert(auth, req, stored.inputs, opts.source ?? 'api', claim);
      committed = true;
      return g;
    } catch (err) {
      // A commit of unknown outcome may have stored the generation: its inputs must stay.
      if (!committed && !(err instanceof CommitOutcomeUnknown)) await this.discard(org.id, stored);
      throw err;
    }
  }

  /**
   * Rules 4-5: the text is spoken now, stored as a TTS asset (with its phoneme timeline) and used as
   * the audio input. A keyed request whose provider timed out cannot know whether the provider did
   * the work: 503 IDEMPOTENCY_OUTCOME_UNKNOWN (the key is released; retry with the same key).
   */
  private async synthesizeText(
    auth: AuthContext,
    req: NormalisedRequest,
    stored: Stored,
    keyed: boolean,
  ): Promise<NormalisedRequest> {
    const text = req.text as NonNullable<NormalisedRequest['text']>;
    try {
      const r = await this.deps.speech.synthesizeToAsset(auth.organization, auth.key.id, text.request, {
        prefix: `${text.field}.provider.`,
      });
      stored.assetIds.push(r.asset.id);
      return { ...req, audio: { ...req.audio, assetId: r.asset.id } };
    } catch (err) {
      if (
        keyed &&
        err instanceof AppError &&
        err.code === 'provider_service_unavailable' &&
        err.status === 504
      )
        throw new AppError('IDEMPOTENCY_OUTCOME_UNKNOWN', {
          message: 'The voice provider did not answer in time; the outcome of the synthesis is unknown.',
          suggestion: 'Retry with the same Idempotency-Key and payload after Retry-After.',
          headers: { 'Retry-After': '5' },
          cause: err,
        });
      throw err;
    }
  }

  /** Rule 2: each uploaded file becomes an asset, passed by assetId. */
  private async saveUploads(
    auth: AuthContext,
    body: GenerationRequestBody,
    form: UploadedForm,
    stored: Stored,
  ): Promise<NormalisedRequest> {
    const ids: Record<string, string> = {};
    for (const f of form.files) {
      const a = await this.deps.assets.upload({
        organization: auth.organization,
        keyId: auth.key.id,
        path: f.path,
        size: f.size,
        fileName: f.fileName,
      });
      stored.assetIds.push(a.id);
      ids[f.fieldName] = a.id;
    }
    return normaliseGenerationRequest(withUploadedAssets(body, ids));
  }

  private async discard(organizationId: string, stored: Stored): Promise<void> {
    for (const m of Object.values(stored.inputs?.resolved ?? {})) {
      if (m.source === 'url' && m.blobKey) await this.deps.blobs.delete(m.blobKey).catch(() => undefined);
    }
    for (const id of stored.assetIds)
      await this.deps.assets.delete(organizationId, id).catch(() => undefined);
  }

  private async insert(
    auth: AuthContext,
    req: NormalisedRequest,
    inputs: ResolvedInputs,
    source: string,
    claim: IdempotencyClaim | null,
  ): Promise<GenerationRecord> {
    const org = auth.organization;
    const limits = PLAN_LIMITS[org.plan];
    if (inputs.maxFileBytes > limits.maxFileBytes) {
      throw new AppError('file_size_exceeds_plan_limit', {
        message: `A file is ${inputs.maxFileBytes} bytes; the ${org.plan} plan allows ${limits.maxFileBytes}.`,
      });
    }
    if (inputs.outputSeconds > limits.maxDurationSeconds) {
      throw new AppError('generation_plan_duration_exceeded', {
        message: `The output would last ${inputs.outputSeconds.toFixed(1)} s; the ${org.plan} plan allows ${limits.maxDurationSeconds} s.`,
      });
    }
    checkWorkBudget(org.plan, {
      width: inputs.width,
      height: inputs.height,
      fps: inputs.fps,
      seconds: inputs.outputSeconds,
    });

    const now = new Date().toISOString();
    const g: GenerationRecord = {
      id: randomUUID(),
      organizationId: org.id,
      projectId: req.projectId,
      apiKeyId: auth.key.id,
      model: req.model,
      status: 'PENDING',
      source,
      input: inputItems(req),
      resolvedInput: { ...inputs.resolved, request: req },
      options: optionsView(req),
      segments: req.segments.length ? clientSegments(req) : null,
      webhookUrl: req.webhookUrl,
      outputFileName: req.outputFileName,
      outputFormat: req.options.outputFormat,
      outputKey: null,
      watermarkedKey: null,
      outputUrl: null,
      outputDuration: null,
      progress: 0,
      error: null,
      errorCode: null,
      quality: null,
      startedAt: null,
      finishedAt: null,
      createdAt: now,
      updatedAt: now,
      deletedAt: null,
    };
    if (claim) await claim.attach(g.id);
    let committing = false;
    try {
      await this.store.db.kysely.transaction().execute(async (trx) => {
        await this.store.generations.lockOrganization(org.id, trx);
        await this.checkConcurrency(org, await this.store.generations.countActive(org.id, trx));
        await this.store.generations.insert(g, trx);
        await this.deps.queue.enqueue(trx, {
          kind: GENERATION_KIND,
          subjectId: g.id,
          organizationId: org.id,
          payload: { generationId: g.id },
          payloadVersion: 1,
          maxAttempts: this.deps.config.jobMaxAttempts,
          timeoutMs: this.deps.config.jobTimeoutMs,
        });
        if (claim) await claim.complete(trx, g.id);
        committing = true;
      });
    } catch (err) {
      // A failure inside the transaction rolled it back; a failed COMMIT may or may not have landed.
      if (committing) throw new CommitOutcomeUnknown(g.id, err);
      throw err;
    }
    await this.deps.bus.publish(g.id).catch(() => undefined);
    await this.deps.queue.announce(GENERATION_KIND);
    return g;
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
      const change = this.deps.bus.waitForChange(id, Math.max(0, deadline - Date.now()), stop.signal);
      try {
        const g = await this.get(organizationId, id);
        if (endsWait(g.status) || Date.now() >= deadline || signal?.aborted) return g;
        if ((await change) === 'timeout') return await this.get(organizationId, id);
      } finally {
        stop.abort();
        signal?.removeEventListener('abort', onAbort);
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
    await this.store.generations.markDeleted(g.id, new Date().toISOString());
    const keys = [g.outputKey, g.watermarkedKey];
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

  /** The output URL a view shows: signed, and the watermarked derivative where the plan needs it. */
  async outputUrl(g: GenerationRecord, org: Organization): Promise<string | null> {
    if (g.status !== 'COMPLETED') return null;
    if (!g.outputKey) return g.outputUrl;
    const key = deliverableKey(org.plan, g);
    return key ? this.deps.blobs.signedUrl(key, { fileName: downloadName(g) }) : null;
  }

  async view(
    g: GenerationRecord,
    org: Organization,
    extra: { progress?: boolean; quality?: boolean } = {},
  ): Promise<Record<string, unknown>> {
    return generationView(g, {
      outputUrl: await this.outputUrl(g, org),
      includeProgress: extra.progress,
      includeQuality: extra.quality,
    });
  }

  /** A webhook's body at delivery time: the generation as it is now, with a fresh output URL. */
  async webhookBody(d: WebhookDelivery): Promise<string> {
    if (!d.generationId) return d.payload;
    const g = await this.store.generations.findAny(d.generationId);
    const org = g ? await this.store.organizations.findById(g.organizationId) : null;
    if (!g || !org) return d.payload;
    const payload = JSON.parse(d.payload) as Record<string, unknown>;
    return JSON.stringify({
      ...payload,
      ...generationView(g, { outputUrl: await this.outputUrl(g, org) }),
      status: payload.status,
      finalStatus: g.status,
    });
  }

  /**
   * The official client's cost analysis (POST /v2/analyze/cost): a full generation request whose media
   * are probed (nothing stored, nothing created) and priced at the output's length and frame rate.
   */
  async analyzeCost(org: Organization, body: GenerationRequestBody): Promise<Estimate> {
    // A dialogue edit is quoted at its preview's length, with the same refusals as the render.
    const req = await attachDialogueEdit(this.deps, org, normaliseGenerationRequest(body));
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

/** The inputs as the client sent them; a dialogue-edit render shows its video and the edit's id. */
function inputItems(req: NormalisedRequest): Record<string, unknown>[] {
  const refs = req.dialogueEdit ? [req.video] : [req.video ?? req.image, req.audio];
  const items: Record<string, unknown>[] = refs.map((r, i) => ({
    type: i === 1 ? (req.text ? 'text' : 'audio') : req.video ? 'video' : 'image',
    ...(i === 1 && req.text ? { provider: req.text.provider } : {}),
    ...(r?.url ? { url: r.url } : {}),
    ...(r?.assetId ? { assetId: r.assetId } : {}),
    ...(r?.refId ? { refId: r.refId } : {}),
  }));
  if (req.dialogueEdit) items.push({ type: 'dialogueEdit', dialogueEdit: { id: req.dialogueEdit.id } });
  return items;
}

function optionsView(req: NormalisedRequest): Record<string, unknown> {
  const o = req.options;
  return {
    sync_mode: o.syncMode,
    temperature: o.temperature,
    output_format: o.outputFormat,
    speedup: o.speedup,
    ...(o.pads ? { pads: o.pads } : {}),
    ...(o.fps ? { fps: o.fps } : {}),
    ...(o.outputResolution ? { output_resolution: o.outputResolution } : {}),
    ...(o.activeSpeaker ? { active_speaker: true } : {}),
  };
}

/** Segments as the official client writes them (seconds), or frame pairs as they were sent. */
function clientSegments(req: NormalisedRequest): Record<string, unknown>[] {
  return req.segments.map((s) => {
    if (s.unit === 'frames') return { startFrame: s.start, endFrame: s.end };
    const audioInput: Record<string, unknown> = {};
    if (req.audio.refId !== undefined) audioInput.refId = req.audio.refId;
    if (s.audioStart !== undefined) audioInput.startTime = s.audioStart;
    if (s.audioEnd !== undefined) audioInput.endTime = s.audioEnd;
    return { startTime: s.start, endTime: s.end, ...(Object.keys(audioInput).length ? { audioInput } : {}) };
  });
}
