// Text-to-speech: synchronous (POST /v2/tts: synthesize now, store as a TTS asset) and asynchronous
// (POST /v2/tts/jobs: idempotent, a `tts` job of the job system; GET /v2/tts/jobs/{id}).
import { randomUUID } from 'node:crypto';
import type { Config } from '../config.js';
import type { Store } from '../store/index.js';
import type { TtsJobRecord } from '../store/tts-jobs.js';
import type { AuthContext } from './api-keys.js';
import type { AssetService } from './assets.js';
import type { IdempotencyService } from './idempotency.js';
import { CommitOutcomeUnknown } from './idempotency.js';
import type { JobQueue } from '../jobs/queue.js';
import type { SpeechService } from './speech.js';
import { TTS_KIND } from '../domain/job-kinds.js';
import { AppError } from '../domain/errors.js';
import { fingerprint } from '../domain/idempotency.js';
import { isUuid } from '../domain/ids.js';
import { normaliseTtsRequest } from '../domain/tts.js';
import { TTS_ASYNC_FLAG } from '../domain/feature-flags.js';

const SCOPE = 'tts_jobs';

export interface TtsSpeech {
  id: string;
  url: string;
  duration: number;
  assetId: string;
}

export class TtsService {
  constructor(
    private readonly deps: {
      config: Config;
      store: Store;
      speech: SpeechService;
      assets: AssetService;
      idempotency: IdempotencyService;
      queue: JobQueue;
    },
  ) {}

  /** POST /v2/tts: the audio is stored as a TTS asset; its URL works as an audio input. */
  async synthesize(
    auth: AuthContext,
    body: Record<string, unknown>,
    signal?: AbortSignal,
  ): Promise<TtsSpeech> {
    const req = normaliseTtsRequest(body);
    const r = await this.deps.speech.synthesizeToAsset(auth.organization, auth.key?.id ?? null, req, {
      signal,
    });
    const url = await this.deps.assets.url(r.asset);
    return { id: r.asset.id, url, duration: round3(r.durationSeconds), assetId: r.asset.id };
  }

  /** POST /v2/tts/jobs. */
  async createJob(
    auth: AuthContext,
    body: Record<string, unknown>,
    idempotencyKey: string | null,
  ): Promise<{ job: TtsJobRecord; replayed: boolean }> {
    const org = auth.organization;
    const req = normaliseTtsRequest(body);
    if (!org.flags.includes(TTS_ASYNC_FLAG))
      throw new AppError('tts_async_unavailable', { headers: { 'Retry-After': '3600' } });
    const r = await this.deps.idempotency.run({
      organizationId: org.id,
      scope: SCOPE,
      key: idempotencyKey,
      fingerprint: fingerprint(body),
      load: (id) => this.deps.store.ttsJobs.find(org.id, id),
      describe: () => ({}),
      create: async (claim) => {
        // Refused now rather than failed later: an unknown, blocked or foreign voice.
        await this.deps.speech.resolveVoice(org, req);
        const now = new Date().toISOString();
        const job: TtsJobRecord = {
          id: randomUUID(),
          organizationId: org.id,
          apiKeyId: auth.key?.id ?? null,
          status: 'PENDING',
          request: req,
          assetId: null,
          durationSeconds: null,
          errorCode: null,
          errorMessage: null,
          createdAt: now,
          updatedAt: now,
          startedAt: null,
          finishedAt: null,
        };
        if (claim) await claim.attach(job.id);
        let committing = false;
        try {
          await this.deps.store.db.kysely.transaction().execute(async (trx) => {
            await this.deps.store.ttsJobs.insert(job, trx);
            await this.deps.queue.enqueue(trx, {
              kind: TTS_KIND,
              subjectId: job.id,
              organizationId: org.id,
              payload: { ttsJobId: job.id },
              payloadVersion: 1,
              maxAttempts: this.deps.config.jobMaxAttempts,
              timeoutMs: Math.max(60_000, this.deps.config.speech.synthesisTimeoutMs * 2),
            });
            if (claim) await claim.complete(trx, job.id);
            committing = true;
          });
        } catch (err) {
          if (committing) throw new CommitOutcomeUnknown(job.id, err);
          throw err;
        }
        await this.deps.queue.announce(TTS_KIND);
        return job;
      },
    });
    return { job: r.value, replayed: r.replayed };
  }

  async getJob(organizationId: string, id: string): Promise<TtsJobRecord> {
    const j = isUuid(id) ? await this.deps.store.ttsJobs.find(organizationId, id) : null;
    if (!j) throw new AppError('tts_job_not_found', { field: 'id' });
    return j;
  }

  /** The client's view (api-details 3.4): url and duration only once SUCCESS. */
  async jobView(j: TtsJobRecord) {
    let url: string | null = null;
    if (j.status === 'SUCCESS' && j.assetId) {
      const a = await this.deps.store.assets.find(j.organizationId, j.assetId);
      url = a ? await this.deps.assets.url(a) : null;
    }
    return {
      id: j.id,
      status: j.status,
      createdAt: j.createdAt,
      url,
      duration: j.status === 'SUCCESS' && j.durationSeconds !== null ? round3(j.durationSeconds) : null,
      error: j.status === 'FAILED' ? { code: j.errorCode, message: j.errorMessage } : null,
      startedAt: j.startedAt,
      finishedAt: j.finishedAt,
      assetId: j.status === 'SUCCESS' ? j.assetId : null,
    };
  }
}

function round3(n: number): number {
  return Math.round(n * 1000) / 1000;
}
