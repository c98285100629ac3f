// Use cases for generations: create (idempotent, admitted by plan concurrency), get/wait, list,
// delete, download URL, estimate, cancel.
import { randomUUID } from 'node:crypto';
import type { Config } from '../config.js';
import type { Store } from '../store/index.js';
import type { GenerationRecord } from '../store/generations.js';
import type { Organization } from '../store/organizations.js';
import type { AuthContext } from './api-keys.js';
import type { AdmissionService } from './admission.js';
import type { GenerationEventBus } from '../jobs/event-bus.js';
import type { GenerationFinisher } from '../jobs/finisher.js';
import { AppError } from '../domain/errors.js';
import {
  normaliseGenerationRequest,
  type GenerationRequestBody,
  type NormalisedRequest,
} from '../domain/generation-request.js';
import { decideReplay, fingerprint, IDEMPOTENCY_RETENTION_MS } from '../domain/idempotency.js';
import { concurrencyLimit, PLAN_LIMITS } from '../domain/plans.js';
import { downloadDecision, endsWait, isStatus } from '../domain/generation-status.js';
import { estimateCost, type Estimate, type PriceTable } from '../domain/pricing.js';

const SCOPE = 'generate';
const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface ResolvedInputs {
  /** What the job needs: blob keys and probes per role (video/image/audio). */
  resolved: Record<string, unknown>;
  /** Longest file among the inputs, for the plan's size limit. */
  maxFileBytes: number;
  /** Expected output length in seconds, for the plan's duration limit. */
  outputSeconds: number;
  /** The output's frame rate. */
  fps: number;
}

/** Fetches/locates and probes the inputs at submit time (422 when inaccessible). */
export type InputResolver = (
  org: Organization,
  req: NormalisedRequest,
  opts?: { /** false: probe only, store nothing (cost analysis). */ keep?: boolean },
) => Promise<ResolvedInputs>;

/** The commit of a generation's insert failed: it may or may not have been stored. */
class CommitOutcomeUnknown extends Error {
  constructor(
    readonly generationId: string,
    cause: unknown,
  ) {
    super(`the commit of generation ${generationId} failed: ${(cause as Error)?.message ?? String(cause)}`, {
      cause,
    });
    this.name = 'CommitOutcomeUnknown';
  }
}

export interface CreateResult {
  generation: GenerationRecord;
  replayed: boolean;
}

export class GenerationService {
  constructor(
    private readonly config: Config,
    private readonly store: Store,
    private readonly admission: AdmissionService,
    private readonly bus: GenerationEventBus,
    private readonly prices: PriceTable,
    private readonly resolveInputs: InputResolver,
    private readonly finisher: GenerationFinisher,
    private readonly onCreated: () => void,
  ) {}

  async create(
    auth: AuthContext,
    body: GenerationRequestBody,
    opts: {
      idempotencyKey: string | null;
      fingerprintPayload?: unknown;
      source?: string;
      /** Runs after the idempotency claim (e.g. saving uploaded files as assets); returns the final body. */
      prepare?: () => Promise<GenerationRequestBody>;
    },
  ): Promise<CreateResult> {
    const org = auth.organization;
    normaliseGenerationRequest(body); // 400s before the key is claimed
    const finalRequest = async () => normaliseGenerationRequest(opts.prepare ? await opts.prepare() : body);
    const key = opts.idempotencyKey;
    if (key) {
      if ((await this.store.settings.get('idempotency_disabled')) === '1')
        throw new AppError('IDEMPOTENCY_UNAVAILABLE', { headers: { 'Retry-After': '30' } });
      const fp = fingerprint(opts.fingerprintPayload ?? body);
      const now = new Date();
      let claimed: boolean;
      try {
        claimed = await this.store.idempotency.claim({
          organizationId: org.id,
          scope: SCOPE,
          key,
          fingerprint: fp,
          state: 'pending',
          resourceId: null,
          createdAt: now.toISOString(),
          expiresAt: new Date(now.getTime() + IDEMPOTENCY_RETENTION_MS).toISOString(),
        });
      } catch {
        throw new AppError('IDEMPOTENCY_UNAVAILABLE', { headers: { 'Retry-After': '5' } });
      }
      if (!claimed) return this.replay(org.id, key, fp);
      try {
        const g = await this.admit(auth, finalRequest, key, opts.source);
        return { generation: g, replayed: false };
      } catch (err) {
        if (err instanceof CommitOutcomeUnknown) {
          // We cannot tell whether the insert committed: the key stays bound (it names the generation).
          throw new AppError('IDEMPOTENCY_OUTCOME_UNKNOWN', {
            generationId: err.generationId,
            headers: { 'Retry-After': '2' },
          });
        }
        // Refused, or failed before the commit (rolled back): nothing was created, so the key is
        // released and the client may retry with the same key (a 5xx stays a 5xx).
        await this.store.idempotency.release(org.id, SCOPE, key).catch(() => undefined);
        throw err;
      }
    }
    return { generation: await this.admit(auth, finalRequest, null, opts.source), replayed: false };
  }

  private async replay(organizationId: string, key: string, fp: string): Promise<CreateResult> {
    const existing = await this.store.idempotency.find(organizationId, SCOPE, key);
    if (!existing) throw new AppError('IDEMPOTENCY_IN_PROGRESS', { headers: { 'Retry-After': '2' } });
    const d = decideReplay(existing, fp, Date.now());
    switch (d.kind) {
      case 'conflict':
        throw new AppError('IDEMPOTENCY_KEY_CONFLICT');
      case 'in_progress':
        throw new AppError('IDEMPOTENCY_IN_PROGRESS', { headers: { 'Retry-After': '2' } });
      case 'outcome_unknown':
        throw new AppError('IDEMPOTENCY_OUTCOME_UNKNOWN', {
          generationId: d.resourceId ?? undefined,
          headers: { 'Retry-After': '2' },
        });
      case 'replay': {
        const g = await this.store.generations.findAny(d.resourceId);
        if (!g || g.deletedAt)
          throw new AppError('IDEMPOTENCY_ORIGINAL_DELETED', { generationId: d.resourceId });
        return { generation: g, replayed: true };
      }
    }
  }

  private async checkConcurrency(org: Organization, active: number): Promise<void> {
    const limit = concurrencyLimit(org.plan, org.concurrencyLimit);
    if (active >= limit) {
      throw new AppError('concurrency_limit_reached', {
        message: `Your plan allows ${limit} concurrent generation${limit === 1 ? '' : 's'} (pending or processing).`,
        retryAfter: 5,
        headers: { 'Retry-After': '5' },
        details: { concurrencyLimit: limit, activeGenerations: active },
      });
    }
  }

  private async admit(
    auth: AuthContext,
    finalRequest: () => Promise<NormalisedRequest>,
    key: string | null,
    source = 'api',
  ): Promise<GenerationRecord> {
    const org = auth.organization;
    const adm = await this.admission.state();
    if (adm.paused) {
      throw new AppError('generation_admission_paused', { headers: { 'Retry-After': '60' }, retryAfter: 60 });
    }
    // Cheap early refusal before fetching media; the authoritative check is in the transaction.
    await this.checkConcurrency(org, await this.store.generations.countActive(org.id));
    const req = await finalRequest();
    if (
      req.projectId &&
      !(UUID_RE.test(req.projectId) && (await this.store.projects.find(org.id, req.projectId)))
    ) {
      throw new AppError('project_not_found', { status: 422, field: 'projectId' });
    }
    const inputs = await this.resolveInputs(org, req);
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

    const now = new Date();
    const g: GenerationRecord = {
      id: randomUUID(),
      organizationId: org.id,
      projectId: req.projectId,
      apiKeyId: auth.key.id,
      model: req.model,
      status: 'PENDING',
      source,
      input: [req.video ?? req.image, req.audio].map((r, i) => ({
        type: i === 1 ? 'audio' : req.video ? 'video' : 'image',
        ...(r?.url ? { url: r.url } : {}),
        ...(r?.assetId ? { assetId: r.assetId } : {}),
        ...(r?.refId ? { refId: r.refId } : {}),
      })),
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
      attempts: 0,
      maxAttempts: this.config.jobMaxAttempts,
      leaseOwner: null,
      leaseExpiresAt: null,
      cancelRequested: false,
      startedAt: null,
      finishedAt: null,
      deadlineAt: new Date(now.getTime() + this.config.jobTimeoutMs).toISOString(),
      createdAt: now.toISOString(),
      updatedAt: now.toISOString(),
      deletedAt: null,
    };
    if (key) await this.store.idempotency.attach(org.id, SCOPE, key, g.id);
    let committing = false;
    try {
      await this.store.db.kysely.transaction().execute(async (trx) => {
        await this.store.generations.lockOrganization(org.id, trx);
        await this.checkConcurrency(org, await this.store.generations.countActive(org.id, trx));
        await this.store.generations.insert(g, trx);
        if (key) {
          const exp = new Date(now.getTime() + IDEMPOTENCY_RETENTION_MS).toISOString();
          await this.store.idempotency.complete(trx, org.id, SCOPE, key, g.id, exp);
        }
        committing = true;
      });
    } catch (err) {
      // A failure inside the transaction rolled it back; a failed COMMIT may or may not have landed.
      if (committing) throw new CommitOutcomeUnknown(g.id, err);
      throw err;
    }
    await this.bus.publish(g.id).catch(() => undefined);
    this.onCreated();
    return g;
  }

  async get(organizationId: string, id: string): Promise<GenerationRecord> {
    const g = UUID_RE.test(id) ? await this.store.generations.find(id, organizationId) : null;
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
      const change = this.bus.waitForChange(id, Math.max(0, deadline - Date.now()), stop.signal);
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
    if (q.projectId && !UUID_RE.test(q.projectId)) {
      throw new AppError('invalid_request', { field: 'projectId', message: 'projectId must be a UUID' });
    }
    let cursor: GenerationRecord | null = null;
    if (q.cursor) {
      cursor = UUID_RE.test(q.cursor) ? await this.store.generations.find(q.cursor, organizationId) : null;
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

  async delete(organizationId: string, id: string): Promise<GenerationRecord> {
    const g = await this.get(organizationId, id);
    if (!endsWait(g.status)) throw new AppError('generation_not_deletable_while_processing');
    await this.store.generations.markDeleted(g.id, new Date().toISOString());
    return g;
  }

  /** Which stored file a download serves: the watermarked derivative where the plan needs it. */
  async downloadTarget(
    org: Organization,
    id: string,
  ): Promise<{ generation: GenerationRecord; key: string | null; url: string | null }> {
    if (!UUID_RE.test(id))
      throw new AppError('invalid_request', { field: 'id', message: 'id must be a generation UUID' });
    const g = await this.get(org.id, id);
    const d = downloadDecision(g.status);
    if (d === 'not_ready') throw new AppError('generation_not_ready');
    if (d === 'not_downloadable') throw new AppError('generation_not_downloadable');
    if (!g.outputKey && g.outputUrl) return { generation: g, key: null, url: g.outputUrl };
    const key = PLAN_LIMITS[org.plan].watermark ? (g.watermarkedKey ?? g.outputKey) : g.outputKey;
    if (!key) throw new AppError('generation_output_unavailable');
    return { generation: g, key, url: null };
  }

  /**
   * The official client's cost analysis (POST /v2/analyze/cost): a full generation request whose media
   * are probed (nothing stored, nothing created) and priced at the output's length and frame rate.
   */
  async analyzeCost(org: Organization, body: GenerationRequestBody): Promise<Estimate> {
    const req = normaliseGenerationRequest(body);
    const inputs = await this.resolveInputs(org, req, { keep: false });
    return estimateCost(
      this.prices,
      { model: req.model, duration: inputs.outputSeconds, fps: inputs.fps },
      org.billing,
    );
  }

  estimate(org: Organization, body: { model: string; duration: number; fps?: number }): Estimate {
    return estimateCost(this.prices, body, org.billing);
  }

  async cancel(id: string): Promise<GenerationRecord> {
    const g = await this.store.generations.findAny(id);
    if (!g || g.deletedAt) throw new AppError('generation_not_found');
    if (endsWait(g.status)) return g;
    await this.store.generations.requestCancel(id);
    if (g.status === 'PENDING') {
      await this.finisher.finish(
        id,
        { statuses: ['PENDING'] },
        { status: 'CANCELED', error: 'The generation was canceled.', errorCode: 'generation_canceled' },
      );
    }
    return (await this.store.generations.findAny(id)) as GenerationRecord;
  }
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
