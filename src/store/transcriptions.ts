// Transcriptions: the public resource of the `transcription` job kind (how it runs lives in `jobs`).
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Transcript } from '../domain/transcriptions.js';
import type { Database, TranscriptionTable } from './schema.js';

import type { TranscriptionStatus } from '../domain/transcriptions.js';

export type { TranscriptionStatus };

export type { Transcript, TranscriptWord } from '../domain/transcriptions.js';

export interface TranscriptionRecord {
  id: string;
  organizationId: string;
  apiKeyId: string | null;
  projectId: string | null;
  status: TranscriptionStatus;
  sourceKind: 'video' | 'audio';
  /** The blob the source lives in (our own storage). */
  sourceKey: string;
  sourceAssetId: string | null;
  startMs: number;
  /** The window's end as asked (null: to the end of the source). */
  endMs: number | null;
  /** The window's end as used (clamped to the source), once known. */
  sourceEndMs: number | null;
  maxSourceSeconds: number | null;
  transcript: Transcript | null;
  speakerCount: number | null;
  errorCode: string | null;
  errorMessage: string | null;
  createdAt: string;
  updatedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  /** 1 for the recognizer's words; one more for each settled correction. */
  revision: number;
}

type Db = Kysely<Database> | Transaction<Database>;

const num = (v: number | string | null): number | null => (v === null ? null : Number(v));

function toRecord(r: Selectable<TranscriptionTable>): TranscriptionRecord {
  return {
    id: r.id,
    organizationId: r.organization_id,
    apiKeyId: r.api_key_id,
    projectId: r.project_id,
    status: r.status as TranscriptionStatus,
    sourceKind: r.source_kind as 'video' | 'audio',
    sourceKey: r.source_key,
    sourceAssetId: r.source_asset_id,
    startMs: Number(r.start_ms),
    endMs: num(r.end_ms),
    sourceEndMs: num(r.source_end_ms),
    maxSourceSeconds: r.max_source_seconds,
    transcript: r.transcript ? (JSON.parse(r.transcript) as Transcript) : null,
    speakerCount: r.speaker_count,
    errorCode: r.error_code,
    errorMessage: r.error_message,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    revision: Number(r.revision),
  };
}

export class TranscriptionRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(t: TranscriptionRecord, db: Db = this.db): Promise<void> {
    await db
      .insertInto('transcriptions')
      .values({
        id: t.id,
        organization_id: t.organizationId,
        api_key_id: t.apiKeyId,
        project_id: t.projectId,
        status: t.status,
        source_kind: t.sourceKind,
        source_key: t.sourceKey,
        source_asset_id: t.sourceAssetId,
        start_ms: t.startMs,
        end_ms: t.endMs,
        source_end_ms: t.sourceEndMs,
        max_source_seconds: t.maxSourceSeconds,
        transcript: t.transcript ? JSON.stringify(t.transcript) : null,
        speaker_count: t.speakerCount,
        error_code: t.errorCode,
        error_message: t.errorMessage,
        created_at: t.createdAt,
        updated_at: t.updatedAt,
        started_at: t.startedAt,
        finished_at: t.finishedAt,
        revision: t.revision,
      })
      .execute();
  }

  async find(organizationId: string, id: string): Promise<TranscriptionRecord | null> {
    const r = await this.db
      .selectFrom('transcriptions')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    return r ? toRecord(r) : null;
  }

  async findAny(id: string, db: Db = this.db): Promise<TranscriptionRecord | null> {
    const r = await db.selectFrom('transcriptions').selectAll().where('id', '=', id).executeTakeFirst();
    return r ? toRecord(r) : null;
  }

  /**
   * Starts a correction: the row goes back to PENDING while it is COMPLETED at `revision` (false
   * otherwise: a stale revision, or a correction already under way).
   */
  async beginCorrection(id: string, revision: number, now: string, db: Db = this.db): Promise<boolean> {
    const r = await db
      .updateTable('transcriptions')
      .set({ status: 'PENDING', updated_at: now, error_code: null, error_message: null })
      .where('id', '=', id)
      .where('status', '=', 'COMPLETED')
      .where('revision', '=', revision)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /**
   * A job for the same source, window and refusal length that can be reused: COMPLETED, or still PENDING/PROCESSING
   * and created after `activeSince` (ISO). The newest first.
   */
  async findReusable(
    q: {
      organizationId: string;
      sourceKey: string;
      startMs: number;
      endMs: number | null;
      maxSourceSeconds: number | null;
      activeSince: string;
    },
    db: Db = this.db,
  ): Promise<TranscriptionRecord | null> {
    let query = db
      .selectFrom('transcriptions')
      .selectAll()
      .where('organization_id', '=', q.organizationId)
      .where('source_key', '=', q.sourceKey)
      .where('start_ms', '=', q.startMs)
      .where((eb) =>
        eb.or([
          eb('status', '=', 'COMPLETED'),
          eb.and([eb('status', 'in', ['PENDING', 'PROCESSING']), eb('created_at', '>=', q.activeSince)]),
        ]),
      );
    query = q.endMs === null ? query.where('end_ms', 'is', null) : query.where('end_ms', '=', q.endMs);
    // A different refusal length is a different request (it may fail where the other succeeded).
    query =
      q.maxSourceSeconds === null
        ? query.where('max_source_seconds', 'is', null)
        : query.where('max_source_seconds', '=', q.maxSourceSeconds);
    const r = await query.orderBy('created_at', 'desc').executeTakeFirst();
    return r ? toRecord(r) : null;
  }
}
