// Admission of a new generation (POST /v2/generate): the idempotency claim, the cheap refusals first,
// uploads saved as assets, text spoken into a TTS asset, a dialogue edit attached, inputs fetched and
// probed, the plan's limits, then the generation and its job in one transaction. Whatever a refused
// request stored is removed again. A batch's records are admitted here too (admitBatchChild): the same
// rules, without the per-generation concurrency, as bulk jobs under the organization's share.
import { randomUUID } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Database } from '../store/schema.js';
import type { Store } from '../store/index.js';
import type { GenerationRecord } from '../store/generations.js';
import type { Organization } from '../store/organizations.js';
import type { AuthContext } from './api-keys.js';
import { GENERATION_KIND } from '../domain/job-kinds.js';
import type { CreateOptions, CreateResult, GenerationServiceDeps, ResolvedInputs } from './generations.js';
import { CommitOutcomeUnknown, type IdempotencyClaim } from './idempotency.js';
import {
  formFileHashes,
  formFingerprintPayload,
  withUploadedAssets,
  type UploadedForm,
} from './generation-uploads.js';
import { attachRedub } from './redub.js';
import type { ProviderName } from '../domain/tts.js';
import { attachDialogueEdit } from './dialogue-render.js';
import { AppError } from '../domain/errors.js';
import {
  normaliseGenerationRequest,
  type GenerationRequestBody,
  type NormalisedRequest,
} from '../domain/generation-request.js';
import { fingerprint } from '../domain/idempotency.js';
import { JOB_PRIORITY } from '../domain/jobs.js';
import { checkWorkBudget, PLAN_LIMITS } from '../domain/plans.js';
import { isUuid } from '../domain/ids.js';
import { insertWithinLimit, precheckLimit, type RowLimit } from './row-limits.js';

const SCOPE = 'generate';

/** What a request stored before it was refused (removed again, so nothing is orphaned). */
interface Stored {
  assetIds: string[];
  inputs: ResolvedInputs | null;
}

/** Who asks: the organization and the key (a batch's child: the key that created the batch). */
interface Submitter {
  readonly organization: Organization;
  readonly keyId: string | null;
}

/** How a batch's record becomes a generation. */
export interface BatchChild {
  /** The generation's source (batch:<id>). */
  readonly source: string;
  readonly parentJobId: string;
  /** The most of the organization's batch children that may run at once. */
  readonly shareLimit: number;
  /** Inside the insert transaction: links the record to the generation (throws to roll back). */
  readonly attach: (trx: Transaction<Database>, generationId: string) => Promise<void>;
  readonly signal?: AbortSignal;
}

/** Where the insert differs for a batch's child. */
interface InsertMode {
  readonly claim: IdempotencyClaim | null;
  readonly child: BatchChild | null;
}

export class GenerationAdmission {
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

  /** The plan's concurrency: active (pending or processing) generations of the organization. */
  private activeGenerations(org: Organization): RowLimit {
    return {
      count: (db) => this.store.generations.countActive(org.id, db),
      assertRoom: (active) => this.deps.admission.assertCapacity(org, active),
    };
  }

  /**
   * The refusals that need no fetching and store nothing: a dialogue edit's rules, the project, the
   * webhook address, the asked-for frame size. Also a batch's validation of each record.
   */
  async preflight(org: Organization, req: NormalisedRequest): Promise<NormalisedRequest> {
    const r = await attachRedub(this.store, org, await attachDialogueEdit(this.deps, org, req));
    // A pair no provider here offers is refused before anything is fetched (422, with what is offered).
    // A re-dub translates nothing: its earlier dub's pair is not checked again.
    if (r.dub && !r.dub.basedOn) {
      const pair = this.deps.translation.checkPair(r.dub.provider, r.dub.sourceLang, r.dub.targetLang);
      // The local recognizer hears English only: other speech needs its words or a recognition server.
      const from = pair.from ?? 'en';
      if (from !== 'en' && !r.dub.transcript && this.deps.config.speech.recognition.provider === 'local')
        throw new AppError('dubbing_language_unsupported', {
          field: 'dubParams.sourceLang',
          message: `This server recognizes English speech only; give dubParams.transcript to dub from ${from}.`,
          details: { supported: { recognition: ['en'] } },
        });
    }
    // The dub's voice exists for the organization and (a local one) speaks the target language.
    if (r.dub?.voiceId) {
      const v = await this.deps.speech.resolveDubVoice(org, r.dub.voiceId, r.dub.targetLang);
      r.dub = { ...r.dub, chosenVoice: { provider: v.provider, name: v.name } };
    }
    if (r.dub?.voices) {
      const chosen: Record<string, { provider: ProviderName; name: string }> = {};
      for (const [speaker, id] of Object.entries(r.dub.voices)) {
        const field = `dubParams.voices.${speaker}`;
        const known = r.dub.chosenVoices?.[speaker];
        const v = await this.deps.speech.resolveDubVoice(org, id, r.dub.targetLang, known, field);
        chosen[speaker] = { provider: v.provider, name: v.name };
      }
      r.dub = { ...r.dub, chosenVoices: chosen };
    }
    if (r.projectId && !(isUuid(r.projectId) && (await this.store.projects.find(org.id, r.projectId)))) {
      throw new AppError('project_not_found', { status: 422, field: 'projectId' });
    }
    if (r.webhookUrl) await this.deps.checkWebhookUrl(r.webhookUrl, 'webhookUrl');
    checkWorkBudget(org.plan, {
      width: r.options.outputResolution?.[0],
      height: r.options.outputResolution?.[1],
    });
    return r;
  }

  /** A batch's record: fetched, spoken and probed now, inserted as a bulk job of the batch. */
  async admitBatchChild(
    who: Submitter,
    body: GenerationRequestBody,
    child: BatchChild,
  ): Promise<GenerationRecord> {
    const req = await this.preflight(who.organization, normaliseGenerationRequest(body));
    return this.storeAndInsert(who, req, { claim: null, child });
  }

  private async admit(
    auth: AuthContext,
    body: GenerationRequestBody,
    opts: CreateOptions,
    claim: IdempotencyClaim | null,
  ): Promise<GenerationRecord> {
    const org = auth.organization;
    const who: Submitter = { organization: org, keyId: auth.key?.id ?? null };
    await this.deps.admission.assertOpen();
    // Cheap refusals first: nothing is fetched or stored for a request refused here.
    await precheckLimit(this.store, this.activeGenerations(org));
    const req = await this.preflight(org, normaliseGenerationRequest(body));
    return this.storeAndInsert(who, req, { claim, child: null }, opts);
  }

  /** Uploads, speech and inputs stored, then the insert; whatever a refusal stored is removed. */
  private async storeAndInsert(
    who: Submitter,
    request: NormalisedRequest,
    mode: InsertMode,
    opts: CreateOptions = { idempotencyKey: null },
  ): Promise<GenerationRecord> {
    let req = request;
    const stored: Stored = { assetIds: [], inputs: null };
    let committed = false;
    try {
      if (opts.upload) req = await this.saveUploads(who, req, opts.upload, stored);
      if (req.text) req = await this.synthesizeText(who, req, stored, mode.claim !== null);
      mode.child?.signal?.throwIfAborted();
      stored.inputs = await this.deps.resolveInputs(who.organization, req);
      const g = await this.insert(who, req, stored.inputs, mode.child?.source ?? opts.source ?? 'api', mode);
      committed = true;
      return g;
    } catch (err) {
      // A commit of unknown outcome may have stored the generation: its inputs must stay.
      if (!committed && !(err instanceof CommitOutcomeUnknown))
        await this.discard(who.organization.id, stored);
      throw err;
    }
  }

  /**
   * Rules 4-5: the text is spoken now, stored as a TTS asset (with its phoneme timeline) and used as
   * the audio input. A keyed request whose provider timed out cannot know whether the provider did
   * the work: 503 IDEMPOTENCY_OUTCOME_UNKNOWN (the key is released; retry with the same key).
   */
  private async synthesizeText(
    who: Submitter,
    req: NormalisedRequest,
    stored: Stored,
    keyed: boolean,
  ): Promise<NormalisedRequest> {
    const text = req.text as NonNullable<NormalisedRequest['text']>;
    try {
      const r = await this.deps.speech.synthesizeToAsset(who.organization, who.keyId, text.request, {
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
    who: Submitter,
    req: NormalisedRequest,
    form: UploadedForm,
    stored: Stored,
  ): Promise<NormalisedRequest> {
    const ids: Record<string, string> = {};
    // Hashed once for the idempotency fingerprint; the asset keeps that hash (no second read).
    const hashes = await formFileHashes(form);
    // Saved (and probed) side by side: each ffprobe is mostly process start-up, and there are two cores.
    const saved = await Promise.allSettled(
      form.files.map((f) =>
        this.deps.assets.upload({
          organization: who.organization,
          keyId: who.keyId,
          path: f.path,
          size: f.size,
          fileName: f.fileName,
          contentSha256: hashes[f.fieldName],
        }),
      ),
    );
    for (const [i, r] of saved.entries()) {
      if (r.status === 'fulfilled') {
        stored.assetIds.push(r.value.id);
        ids[form.files[i].fieldName] = r.value.id;
      }
    }
    // The first file's refusal is reported, as when they were saved one after the other.
    const refused = saved.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (refused) throw refused.reason;
    return withUploadedAssets(req, ids);
  }

  private async discard(organizationId: string, stored: Stored): Promise<void> {
    for (const m of Object.values(stored.inputs?.resolved ?? {})) {
      if (m.source === 'url' && m.blobKey) await this.deps.blobs.delete(m.blobKey).catch(() => undefined);
    }
    for (const id of stored.assetIds)
      await this.deps.assets.delete(organizationId, id).catch(() => undefined);
  }

  private async insert(
    who: Submitter,
    req: NormalisedRequest,
    inputs: ResolvedInputs,
    source: string,
    mode: InsertMode,
  ): Promise<GenerationRecord> {
    const org = who.organization;
    const { claim, child } = mode;
    const limits = PLAN_LIMITS[org.plan];
    if (inputs.maxFileBytes > limits.maxFileBytes) {
      throw new AppError('file_size_exceeds_plan_limit', {
        message: `A file is ${inputs.maxFileBytes} bytes; the ${org.plan} plan allows ${limits.maxFileBytes}.`,
      });
    }
    if (inputs.workSeconds > limits.maxDurationSeconds) {
      throw new AppError('generation_plan_duration_exceeded', {
        message: `The output would last ${inputs.workSeconds.toFixed(1)} s; the ${org.plan} plan allows ${limits.maxDurationSeconds} s.`,
      });
    }
    checkWorkBudget(org.plan, {
      width: inputs.width,
      height: inputs.height,
      fps: inputs.fps,
      seconds: inputs.workSeconds,
    });

    const now = new Date().toISOString();
    const g: GenerationRecord = {
      id: randomUUID(),
      organizationId: org.id,
      projectId: req.projectId,
      apiKeyId: who.keyId,
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
      dub: null,
      dubAudioKey: null,
      stillKey: null,
      startedAt: null,
      finishedAt: null,
      createdAt: now,
      updatedAt: now,
      deletedAt: null,
    };
    if (claim) await claim.attach(g.id);
    let committing = false;
    try {
      // A batch's children run under the batch's limits, not the per-generation concurrency.
      await insertWithinLimit(this.store, org.id, child ? null : this.activeGenerations(org), async (trx) => {
        await this.store.generations.insert(g, trx);
        await this.deps.queue.enqueue(trx, {
          kind: GENERATION_KIND,
          subjectId: g.id,
          organizationId: org.id,
          payload: { generationId: g.id },
          payloadVersion: 1,
          maxAttempts: this.deps.config.jobMaxAttempts,
          timeoutMs: this.deps.config.jobTimeoutMs,
          ...(child
            ? { priority: JOB_PRIORITY.bulk, parentId: child.parentJobId, shareLimit: child.shareLimit }
            : {}),
        });
        if (child) await child.attach(trx, g.id);
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
    ...(o.preview ? { preview: { atMs: o.preview.atMs } } : {}),
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
