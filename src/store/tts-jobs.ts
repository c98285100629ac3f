// Text-to-speech jobs: the public resource of the `tts` job kind (how it runs lives in `jobs`).
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database, TtsJobTable } from './schema.js';
import type { TtsRequest } from '../domain/tts.js';

import type { TtsJobStatus } from '../domain/tts.js';

export type { TtsJobStatus };

export interface TtsJobRecord {
  id: string;
  organizationId: string;
  apiKeyId: string | null;
  status: TtsJobStatus;
  request: TtsRequest;
  assetId: string | null;
  durationSeconds: number | null;
  errorCode: string | null;
  errorMessage: string | null;
  createdAt: string;
  updatedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

function toJob(r: Selectable<TtsJobTable>): TtsJobRecord {
  return {
    id: r.id,
    organizationId: r.organization_id,
    apiKeyId: r.api_key_id,
    status: r.status as TtsJobStatus,
    request: JSON.parse(r.request) as TtsRequest,
    assetId: r.asset_id,
    durationSeconds: r.duration_seconds === null ? null : Number(r.duration_seconds),
    errorCode: r.error_code,
    errorMessage: r.error_message,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
  };
}

type Db = Kysely<Database> | Transaction<Database>;

export class TtsJobRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(j: TtsJobRecord, db: Db = this.db): Promise<void> {
    await db
      .insertInto('tts_jobs')
      .values({
        id: j.id,
        organization_id: j.organizationId,
        api_key_id: j.apiKeyId,
        status: j.status,
        request: JSON.stringify(j.request),
        asset_id: j.assetId,
        duration_seconds: j.durationSeconds,
        error_code: j.errorCode,
        error_message: j.errorMessage,
        created_at: j.createdAt,
        updated_at: j.updatedAt,
        started_at: j.startedAt,
        finished_at: j.finishedAt,
      })
      .execute();
  }

  async find(organizationId: string, id: string): Promise<TtsJobRecord | null> {
    const r = await this.db
      .selectFrom('tts_jobs')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    return r ? toJob(r) : null;
  }

  async findAny(id: string, db: Db = this.db): Promise<TtsJobRecord | null> {
    const r = await db.selectFrom('tts_jobs').selectAll().where('id', '=', id).executeTakeFirst();
    return r ? toJob(r) : null;
  }
}
