// Transcriptions: POST /v2/transcriptions (a source in our own storage, a window; the same source and
// window reuse the existing job), GET /v2/transcriptions/{id}. The work is a `transcription` job.
import { randomUUID } from 'node:crypto';
import type { Config } from '../config.js';
import type { Store } from '../store/index.js';
import type { TranscriptionRecord } from '../store/transcriptions.js';
import type { AssetRecord } from '../store/assets.js';
import type { AuthContext } from './api-keys.js';
import type { AssetService } from './assets.js';
import type { JobQueue } from '../jobs/queue.js';
import { TRANSCRIPTION_KIND } from '../domain/job-kinds.js';
import { AppError } from '../domain/errors.js';
import { isUuid } from '../domain/ids.js';
import {
  checkCorrections,
  TRANSCRIPTION_CORRECTION_VERSION,
  normaliseTranscriptionRequest,
  REUSE_RUNNING_MS,
  type TranscriptionRequest,
  type WordCorrection,
} from '../domain/transcriptions.js';

export class TranscriptionService {
  constructor(
    private readonly deps: { config: Config; store: Store; assets: AssetService; queue: JobQueue },
  ) {}

  /** 201 with a new job, or the existing one for the same source and window (`reused`). */
  async create(
    auth: AuthContext,
    body: Record<string, unknown>,
  ): Promise<{ transcription: TranscriptionRecord; reused: boolean }> {
    const org = auth.organization;
    const req = normaliseTranscriptionRequest(body);
    if (
      req.projectId &&
      !(isUuid(req.projectId) && (await this.deps.store.projects.find(org.id, req.projectId)))
    )
      throw new AppError('project_not_found', { status: 422, field: 'projectId' });
    const asset = await this.source(org.id, req);
    const sourceMs = asset.durationSeconds !== null ? Math.round(asset.durationSeconds * 1000) : null;
    if (sourceMs !== null && req.startMs >= sourceMs)
      throw new AppError('invalid_request', {
        field: 'startMs',
        message: `startMs is past the end of the source (${sourceMs} ms).`,
      });

    const store = this.deps.store;
    const now = new Date();
    const t: TranscriptionRecord = {
      id: randomUUID(),
      organizationId: org.id,
      apiKeyId: auth.key?.id ?? null,
      projectId: req.projectId,
      status: 'PENDING',
      sourceKind: req.source.kind,
      sourceKey: asset.storageKey,
      sourceAssetId: asset.id,
      startMs: req.startMs,
      endMs: req.endMs,
      sourceEndMs: null,
      maxSourceSeconds: req.maxSourceSeconds,
      transcript: null,
      speakerCount: null,
      errorCode: null,
      errorMessage: null,
      createdAt: now.toISOString(),
      updatedAt: now.toISOString(),
      startedAt: null,
      finishedAt: null,
      revision: 1,
    };
    // One organization's creates for the same source serialize here, so two at once make one job.
    const existing = await store.organizations.exclusive(org.id, async (trx) => {
      const found = await store.transcriptions.findReusable(
        {
          organizationId: org.id,
          sourceKey: asset.storageKey,
          startMs: req.startMs,
          endMs: req.endMs,
          maxSourceSeconds: req.maxSourceSeconds,
          activeSince: new Date(now.getTime() - REUSE_RUNNING_MS).toISOString(),
        },
        trx,
      );
      if (found) return found;
      await store.transcriptions.insert(t, trx);
      await this.deps.queue.enqueue(trx, {
        kind: TRANSCRIPTION_KIND,
        subjectId: t.id,
        organizationId: org.id,
        payload: { transcriptionId: t.id },
        payloadVersion: 1,
        maxAttempts: this.deps.config.jobMaxAttempts,
        timeoutMs: this.deps.config.jobTimeoutMs,
      });
      return null;
    });
    if (existing) return { transcription: existing, reused: true };
    await this.deps.queue.announce(TRANSCRIPTION_KIND);
    return { transcription: t, reused: false };
  }

  async get(organizationId: string, id: string): Promise<TranscriptionRecord> {
    const t = isUuid(id) ? await this.deps.store.transcriptions.find(organizationId, id) : null;
    if (!t) throw new AppError('transcription_not_found', { field: 'id' });
    return t;
  }

  /**
   * PATCH /v2/transcriptions/{id} (our extension): words corrected by hand. The transcription goes back
   * to PENDING while its job re-times the corrected words by forced alignment; settled, it is the next
   * revision. Nothing to change: the transcription as it is.
   */
  async correct(
    organizationId: string,
    id: string,
    body: { revision: number; words: WordCorrection[] },
  ): Promise<{ transcription: TranscriptionRecord; queued: boolean }> {
    const t = await this.get(organizationId, id);
    if (t.status !== 'COMPLETED' || !t.transcript)
      throw new AppError('transcription_not_completed', { field: 'id' });
    if (body.revision !== t.revision)
      throw new AppError('transcription_revision_conflict', {
        field: 'revision',
        message: `The transcript is at revision ${t.revision}, not ${body.revision}.`,
      });
    const words = checkCorrections(t.transcript, body.words);
    if (words.length === 0) return { transcription: t, queued: false };
    const { store, queue } = this.deps;
    const now = new Date().toISOString();
    const started = await store.db.kysely.transaction().execute(async (trx) => {
      // Two corrections of the same revision at once: the first one wins, the other is stale.
      if (!(await store.transcriptions.beginCorrection(t.id, t.revision, now, trx))) return false;
      const job = await queue.reopen(trx, TRANSCRIPTION_KIND, t.id, {
        payload: { transcriptionId: t.id, correction: { revision: t.revision, words } },
        payloadVersion: TRANSCRIPTION_CORRECTION_VERSION,
      });
      // Its job has not settled yet (it is finishing the last revision): the transcript is not final.
      if (!job) throw new AppError('transcription_not_completed', { field: 'id' });
      return true;
    });
    if (!started) throw new AppError('transcription_revision_conflict', { field: 'revision' });
    await queue.announce(TRANSCRIPTION_KIND);
    return { transcription: await this.get(organizationId, id), queued: true };
  }

  /** The client's view (api-details 1.2); the source's URL is signed afresh. */
  async view(t: TranscriptionRecord) {
    const url = await this.deps.assets.urlOfKey(t.sourceKey);
    return {
      id: t.id,
      status: t.status,
      createdAt: t.createdAt,
      sourceStartMs: t.startMs,
      sourceEndMs: t.sourceEndMs ?? t.endMs,
      sourceVideoUrl: t.sourceKind === 'video' ? url : null,
      sourceAudioUrl: t.sourceKind === 'audio' ? url : null,
      transcript: t.status === 'COMPLETED' ? t.transcript : null,
      speakerCount: t.status === 'COMPLETED' ? t.speakerCount : null,
      projectId: t.projectId,
      startedAt: t.startedAt,
      finishedAt: t.finishedAt,
      revision: t.revision,
      // A correction that failed leaves the transcription COMPLETED at its revision, with the reason.
      error: t.status === 'FAILED' || t.errorCode ? { code: t.errorCode, message: t.errorMessage } : null,
    };
  }

  /** The source: an asset of this organization named by our own URL (or assetId), never a fetch. */
  private async source(orgId: string, req: TranscriptionRequest): Promise<AssetRecord> {
    const { field } = req.source;
    const r = await this.deps.assets.resolveOwn(orgId, req.source);
    if ('problem' in r) {
      if (r.problem === 'foreign') throw new AppError('transcription_source_upload_required', { field });
      throw new AppError('transcription_source_not_accessible', {
        field,
        message:
          r.problem === 'missing'
            ? 'The source is not an asset of this organization.'
            : `The source URL is ${r.problem === 'expired' ? 'expired' : 'not a valid signed URL'}.`,
      });
    }
    if (r.asset.type === 'IMAGE') throw new AppError('transcription_source_type_unsupported', { field });
    return r.asset;
  }
}
