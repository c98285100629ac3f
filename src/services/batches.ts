// Batches (POST/GET /v2/batch): a JSONL file of generation requests, each record validated by the rules
// of POST /v2/generate before anything is created; the batch and its `batch` job in one transaction.
// The job (handlers/batch.ts) turns the records into child generations; the children's ends move the
// batch's counters (batch-progress.ts). Results are a JSONL file behind a signed URL.
import { randomUUID } from 'node:crypto';
import { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Store } from '../store/index.js';
import type { BatchRecord } from '../store/batches.js';
import type { Organization } from '../store/organizations.js';
import type { BlobStore } from '../storage/blob-store.js';
import type { UrlSigner } from '../storage/url-signer.js';
import type { JobQueue } from '../jobs/queue.js';
import type { AuthContext } from './api-keys.js';
import type { AssetService } from './assets.js';
import type { AdmissionService } from './admission.js';
import type { GenerationService, UrlCheck } from './generations.js';
import type { SpeechService } from './speech.js';
import { AppError } from '../domain/errors.js';
import {
  assertBatchCapacity,
  assertBatchPlan,
  batchLimits,
  isBatchStatus,
  parseBatchFile,
  pendingCount,
  recordError,
  type BatchLimits,
  type BatchRecordLine,
} from '../domain/batches.js';
import { normaliseGenerationRequest, type GenerationRequestBody } from '../domain/generation-request.js';
import { JOB_CANCELED, JOB_PRIORITY } from '../domain/jobs.js';
import { isUuid } from '../domain/ids.js';
import { BATCH_KIND, GENERATION_KIND } from '../domain/job-kinds.js';
import { batchResultLine, batchView, type BatchView } from './batch-view.js';
import type { BatchProgress } from './batch-progress.js';
import { insertWithinLimit, type RowLimit } from './row-limits.js';

/** Checks a record's payload against the POST /v2/generate body schema; an AppError when it fails. */
export type PayloadValidator = (payload: unknown) => AppError | null;

export interface BatchServiceDeps {
  readonly config: Config;
  readonly store: Store;
  readonly queue: JobQueue;
  readonly admission: AdmissionService;
  readonly generations: GenerationService;
  readonly assets: AssetService;
  readonly speech: SpeechService;
  readonly blobs: BlobStore;
  readonly urlSigner: UrlSigner;
  readonly validatePayload: PayloadValidator;
  readonly checkUrl: UrlCheck;
  readonly progress: BatchProgress;
  /** Resolves an API key (401 when missing or invalid). */
  readonly authenticate: (key: string | undefined) => Promise<AuthContext>;
  readonly logger: Logger;
}

export interface BatchForm {
  /** The JSONL file's bytes (input or file field), or null when none was sent. */
  readonly file: Buffer | null;
  readonly webhookUrl?: string;
  readonly dryRun?: string;
}

export interface ValidatedBatch {
  readonly status: 'VALIDATED';
  readonly summary: {
    readonly total_records: number;
    readonly request_ids: { readonly first: string; readonly last: string };
    readonly models: Record<string, number>;
    readonly assets_resolved: number;
    readonly projects_resolved: number;
    readonly text_inputs: number;
  };
}

export interface BatchListQuery {
  status?: string;
  createdAfter?: string;
  createdBefore?: string;
  limit?: number;
  cursor?: string;
}

const RESULTS_SIGNING_PREFIX = 'batch-results/';

export class BatchService {
  constructor(private readonly deps: BatchServiceDeps) {}

  /** The organization's limits: the plan's defaults, the operator's overrides, the configured concurrency. */
  async limits(org: Organization): Promise<BatchLimits> {
    return batchLimits(
      org.plan,
      await this.deps.store.organizations.batchLimits(org.id),
      this.deps.config.batchConcurrency,
    );
  }

  /** POST /v2/batch: every record validated first; a dry run creates nothing. */
  async create(auth: AuthContext, form: BatchForm): Promise<BatchView | ValidatedBatch> {
    const org = auth.organization;
    assertBatchPlan(org.plan);
    // A batch is new generations: the operator's pause holds it too (503).
    await this.deps.admission.assertOpen();
    const dryRun = parseBoolean(form.dryRun, 'dry_run');
    const webhookUrl = form.webhookUrl?.trim() ? form.webhookUrl.trim() : null;
    if (webhookUrl) await this.deps.checkUrl(webhookUrl, 'webhook_url');
    if (!form.file)
      throw new AppError('batch_input_invalid', {
        field: 'input',
        message: 'Send the JSONL file in the multipart field "input" (or its alias "file").',
      });
    const limits = await this.limits(org);
    const records = parseBatchFile(form.file, limits);
    const summary = await this.validateRecords(org, records);
    if (dryRun) return { status: 'VALIDATED', summary };

    const now = new Date().toISOString();
    const batch: BatchRecord = {
      id: randomUUID(),
      organizationId: org.id,
      apiKeyId: auth.key?.id ?? null,
      status: 'PENDING',
      total: records.length,
      succeeded: 0,
      failed: 0,
      childrenStarted: false,
      jobsCreated: false,
      webhookUrl,
      canceledAt: null,
      errorCode: null,
      errorMessage: null,
      createdAt: now,
      updatedAt: now,
      finishedAt: null,
    };
    const unfinished: RowLimit = {
      count: (db) => this.deps.store.batches.countActive(org.id, db),
      assertRoom: (active) => assertBatchCapacity(limits, active),
    };
    await insertWithinLimit(this.deps.store, org.id, unfinished, async (trx) => {
      await this.deps.store.batches.insert(
        trx,
        batch,
        records.map((r) => ({ line: r.line, requestId: r.requestId, payload: r.payload })),
      );
      await this.deps.queue.enqueue(trx, {
        kind: BATCH_KIND,
        subjectId: batch.id,
        organizationId: org.id,
        payload: { batchId: batch.id },
        payloadVersion: 1,
        priority: JOB_PRIORITY.bulk,
        maxAttempts: this.deps.config.jobMaxAttempts,
        // One run creates children for a few seconds and yields: the usual run limit is plenty.
        timeoutMs: this.deps.config.jobTimeoutMs,
      });
    });
    await this.deps.queue.announce(BATCH_KIND);
    this.deps.logger.info({ batchId: batch.id, records: records.length }, 'batch created');
    return this.view(batch);
  }

  /**
   * The rules of POST /v2/generate for each record, and every referenced asset, project, voice and
   * dialogue edit resolved; nothing is fetched or stored. The first refusal names its line.
   */
  private async validateRecords(org: Organization, records: BatchRecordLine[]) {
    const models: Record<string, number> = {};
    let assetsResolved = 0;
    let projectsResolved = 0;
    let textInputs = 0;
    // Records of a batch mostly name the same few assets and projects: each is looked up once.
    const owned = new Map<string, Promise<boolean>>();
    const isOwn = (ref: { url?: string; assetId?: string }) => {
      const key = ref.assetId ? `id:${ref.assetId}` : `url:${ref.url ?? ''}`;
      let found = owned.get(key);
      if (!found) {
        found = this.deps.assets.resolveOwn(org.id, ref).then((r) => 'asset' in r);
        owned.set(key, found);
      }
      return found;
    };
    for (const rec of records) {
      try {
        const invalid = this.deps.validatePayload(rec.payload);
        if (invalid) throw invalid;
        const req = await this.deps.generations.preflight(
          org,
          normaliseGenerationRequest(rec.payload as unknown as GenerationRequestBody),
        );
        for (const ref of [req.video, req.image, req.audio]) {
          if (!ref || (!ref.assetId && !ref.url)) continue;
          if (await isOwn({ url: ref.url, assetId: ref.assetId })) assetsResolved++;
          else if (ref.assetId)
            throw new AppError('asset_not_found', {
              status: 422,
              field: `${ref.field}.assetId`,
              message: `Asset ${ref.assetId} not found.`,
            });
          else if (ref.url) await this.deps.checkUrl(ref.url, `${ref.field}.url`);
        }
        if (req.projectId) projectsResolved++;
        if (req.text) {
          textInputs++;
          await this.deps.speech.resolveVoice(org, req.text.request, `${req.text.field}.provider.`);
        }
        models[req.model] = (models[req.model] ?? 0) + 1;
      } catch (err) {
        if (err instanceof AppError) throw recordError(err, rec.line);
        throw err;
      }
    }
    return {
      total_records: records.length,
      request_ids: { first: records[0]!.requestId, last: records[records.length - 1]!.requestId },
      models,
      assets_resolved: assetsResolved,
      projects_resolved: projectsResolved,
      text_inputs: textInputs,
    };
  }

  async get(organizationId: string, id: string): Promise<BatchRecord> {
    const b = isUuid(id) ? await this.deps.store.batches.find(id, organizationId) : null;
    if (!b) throw new AppError('batch_not_found', { field: 'id' });
    return b;
  }

  async list(organizationId: string, q: BatchListQuery): Promise<BatchRecord[]> {
    const status = q.status?.trim().toUpperCase();
    if (status && !isBatchStatus(status))
      throw new AppError('invalid_request', {
        field: 'status',
        message: 'status must be one of PENDING, JOBS_CREATED, PROCESSING, COMPLETED, FAILED',
      });
    const after = isoDate(q.createdAfter, 'created_after');
    const before = isoDate(q.createdBefore, 'created_before');
    const cursor = q.cursor ? await this.get(organizationId, q.cursor).catch(() => null) : null;
    if (q.cursor && !cursor)
      throw new AppError('invalid_request', {
        field: 'cursor',
        message: 'cursor is not a batch of this organization',
      });
    return this.deps.store.batches.list(organizationId, {
      status: status && isBatchStatus(status) ? status : undefined,
      createdAfter: after,
      createdBefore: before,
      limit: q.limit ?? 100,
      cursor,
    });
  }

  /**
   * POST /v2/batch/{id}/cancel: records not yet turned into generations end as canceled, the job that
   * creates them stops, and every unfinished child is canceled (running ones at their next heartbeat).
   */
  async cancel(organizationId: string, id: string): Promise<BatchRecord> {
    const b = await this.get(organizationId, id);
    if (b.status === 'COMPLETED' || b.status === 'FAILED') return b;
    await this.deps.store.db.kysely.transaction().execute(async (trx) => {
      const locked = await this.deps.store.batches.lock(trx, b.id);
      if (!locked || locked.canceledAt) return;
      await this.deps.store.batches.update(trx, b.id, { canceled_at: new Date().toISOString() });
      await this.deps.progress.endQueued(trx, b.id, 'canceled', {
        code: 'batch_canceled',
        message: 'The batch was canceled before this record started.',
      });
    });
    await this.deps.queue.cancel(BATCH_KIND, b.id, JOB_CANCELED);
    for (const gid of await this.deps.store.batches.unfinishedChildren(b.id))
      await this.deps.queue.cancel(GENERATION_KIND, gid, JOB_CANCELED);
    this.deps.logger.info({ batchId: b.id }, 'batch canceled');
    return this.get(organizationId, id);
  }

  async view(b: BatchRecord): Promise<BatchView> {
    return batchView(b, this.resultsUrl(b.id));
  }

  /** The signed URL of GET /v2/batch/{id}/results (seven days, like download URLs). */
  resultsUrl(id: string): string {
    const signed = new URL(this.deps.urlSigner.sign(`${RESULTS_SIGNING_PREFIX}${id}`));
    return `${this.deps.config.publicUrl}/v2/batch/${id}/results${signed.search}`;
  }

  /**
   * The batch a results request may read: any batch with a valid signature (the outputUrl), else one of
   * the organization of the API key sent.
   */
  async resultsTarget(
    id: string,
    q: { expires?: string; sig?: string },
    apiKey: string | string[] | undefined,
  ): Promise<BatchRecord> {
    if (q.sig !== undefined || q.expires !== undefined) {
      const check = this.deps.urlSigner.check(`${RESULTS_SIGNING_PREFIX}${id}`, q);
      if (check === 'expired') throw new AppError('url_expired');
      if (check === 'valid') {
        const b = isUuid(id) ? await this.deps.store.batches.find(id) : null;
        if (!b) throw new AppError('batch_not_found');
        return b;
      }
    }
    const auth = await this.deps.authenticate(typeof apiKey === 'string' ? apiKey.trim() : undefined);
    return this.get(auth.organization.id, id);
  }

  /**
   * Writes the results file as it stands (one line per record, in file order, with fresh signed output
   * URLs) and returns its signed URL: the target of GET /v2/batch/{id}/results.
   */
  async resultsFileUrl(b: BatchRecord): Promise<string> {
    const org = await this.deps.store.organizations.findById(b.organizationId);
    if (!org) throw new AppError('batch_not_found');
    const lines: string[] = [];
    for (const row of await this.deps.store.batches.results(b.id)) {
      let outputUrl: string | null = null;
      if (row.generationId && row.generationStatus === 'COMPLETED') {
        const g = await this.deps.store.generations.findAny(row.generationId);
        if (g && !g.deletedAt) outputUrl = await this.deps.generations.outputUrl(g, org);
      }
      lines.push(JSON.stringify(batchResultLine(row, outputUrl)));
    }
    const key = `batches/${b.id}/results.jsonl`;
    await this.deps.blobs.put(key, Readable.from([Buffer.from(lines.join('\n') + '\n')]), {
      contentType: 'application/x-ndjson',
    });
    return this.deps.blobs.signedUrl(key, { fileName: `batch-${b.id}-results.jsonl` });
  }

  /** A batch webhook's body at delivery time: the batch as it is now. */
  async webhookBody(batchId: string): Promise<string | null> {
    const b = await this.deps.store.batches.find(batchId);
    return b ? JSON.stringify(await this.view(b)) : null;
  }

  /** For the CLI and logs: how far a batch is. */
  static pending(b: BatchRecord): number {
    return pendingCount({ total: b.total, succeeded: b.succeeded, failed: b.failed });
  }
}

function parseBoolean(v: string | undefined, field: string): boolean {
  if (v === undefined || v.trim() === '') return false;
  const s = v.trim().toLowerCase();
  if (s === 'true' || s === '1') return true;
  if (s === 'false' || s === '0') return false;
  throw new AppError('invalid_request', { field, message: `${field} must be true or false` });
}

function isoDate(v: string | undefined, field: string): string | undefined {
  if (v === undefined || v.trim() === '') return undefined;
  const t = Date.parse(v);
  if (!/^\d{4}-\d{2}-\d{2}/.test(v.trim()) || Number.isNaN(t))
    throw new AppError('invalid_request', { field, message: `${field} must be an ISO 8601 date-time` });
  return new Date(t).toISOString();
}
