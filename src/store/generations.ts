// The generation row: what clients see of a generation. How its work runs is its job row (jobs.ts).
import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { Database, GenerationTable } from './schema.js';
import { compileOnce, type Dialect } from './database.js';
import type { GenerationStatus } from '../domain/generation-status.js';
import { BATCH_SOURCE_PREFIX } from '../domain/batches.js';
import type { DubRecord } from '../domain/dub.js';

export interface GenerationRecord {
  id: string;
  organizationId: string;
  projectId: string | null;
  apiKeyId: string | null;
  model: string;
  status: GenerationStatus;
  source: string;
  input: unknown[];
  resolvedInput: Record<string, unknown>;
  options: Record<string, unknown> | null;
  segments: unknown[] | null;
  webhookUrl: string | null;
  outputFileName: string | null;
  outputFormat: string;
  outputKey: string | null;
  watermarkedKey: string | null;
  outputUrl: string | null;
  outputDuration: number | null;
  progress: number;
  error: string | null;
  errorCode: string | null;
  quality: Record<string, unknown> | null;
  /** A dub's public transcript (domain/dub.ts); null for other generations. */
  dub: DubRecord | null;
  dubAudioKey: string | null;
  /** A preview's still (options.preview): the JPEG of its first frame; null for other generations. */
  stillKey: string | null;
  startedAt: string | null;
  finishedAt: string | null;
  createdAt: string;
  updatedAt: string;
  deletedAt: string | null;
}

const j = <T>(s: string | null): T | null => (s === null ? null : (JSON.parse(s) as T));

export function toGeneration(r: Selectable<GenerationTable>): GenerationRecord {
  return {
    id: r.id,
    organizationId: r.organization_id,
    projectId: r.project_id,
    apiKeyId: r.api_key_id,
    model: r.model,
    status: r.status as GenerationStatus,
    source: r.source,
    input: j<unknown[]>(r.input) ?? [],
    resolvedInput: j<Record<string, unknown>>(r.resolved_input) ?? {},
    options: j(r.options),
    segments: j(r.segments),
    webhookUrl: r.webhook_url,
    outputFileName: r.output_file_name,
    outputFormat: r.output_format,
    outputKey: r.output_key,
    watermarkedKey: r.watermarked_key,
    outputUrl: r.output_url,
    outputDuration: r.output_duration === null ? null : Number(r.output_duration),
    progress: Number(r.progress),
    error: r.error,
    errorCode: r.error_code,
    quality: j(r.quality),
    dub: j<DubRecord>(r.dub),
    dubAudioKey: r.dub_audio_key,
    stillKey: r.still_key,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    deletedAt: r.deleted_at,
  };
}

export function toRow(g: GenerationRecord): GenerationTable {
  return {
    id: g.id,
    organization_id: g.organizationId,
    project_id: g.projectId,
    api_key_id: g.apiKeyId,
    model: g.model,
    status: g.status,
    source: g.source,
    input: JSON.stringify(g.input),
    resolved_input: JSON.stringify(g.resolvedInput),
    options: g.options === null ? null : JSON.stringify(g.options),
    segments: g.segments === null ? null : JSON.stringify(g.segments),
    webhook_url: g.webhookUrl,
    output_file_name: g.outputFileName,
    output_format: g.outputFormat,
    output_key: g.outputKey,
    watermarked_key: g.watermarkedKey,
    output_url: g.outputUrl,
    output_duration: g.outputDuration,
    progress: g.progress,
    error: g.error,
    error_code: g.errorCode,
    quality: g.quality === null ? null : JSON.stringify(g.quality),
    dub: g.dub === null ? null : JSON.stringify(g.dub),
    dub_audio_key: g.dubAudioKey,
    still_key: g.stillKey,
    started_at: g.startedAt,
    finished_at: g.finishedAt,
    created_at: g.createdAt,
    updated_at: g.updatedAt,
    deleted_at: g.deletedAt,
  };
}

export interface ListFilter {
  statuses?: string[];
  ids?: string[];
  sources?: string[];
  projectId?: string;
  limit?: number;
  cursor?: GenerationRecord | null;
}

type Q = Kysely<Database> | Transaction<Database>;

/**
 * Every column, named: the hot reads are PostgreSQL prepared statements, and a `*` in one would fail
 * ("cached plan must not change result type") once a migration adds a column while it runs.
 */
export const GENERATION_COLUMNS = [
  'id',
  'organization_id',
  'project_id',
  'api_key_id',
  'model',
  'status',
  'source',
  'input',
  'resolved_input',
  'options',
  'segments',
  'webhook_url',
  'output_file_name',
  'output_format',
  'output_key',
  'watermarked_key',
  'output_url',
  'output_duration',
  'progress',
  'error',
  'error_code',
  'quality',
  'dub',
  'dub_audio_key',
  'still_key',
  'started_at',
  'finished_at',
  'created_at',
  'updated_at',
  'deleted_at',
] as const satisfies readonly (keyof GenerationTable)[];

export class GenerationRepository {
  // The read path of GET /v2/generate/{id} and its long-poll, compiled once (database.ts).
  private readonly findLive;
  private readonly findLiveOfOrganization;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {
    this.findLive = compileOnce(db, ['id'], (q, p) =>
      q
        .selectFrom('generations')
        .select(GENERATION_COLUMNS)
        .where('id', '=', p.id)
        .where('deleted_at', 'is', null),
    );
    this.findLiveOfOrganization = compileOnce(db, ['id', 'organizationId'], (q, p) =>
      q
        .selectFrom('generations')
        .select(GENERATION_COLUMNS)
        .where('id', '=', p.id)
        .where('organization_id', '=', p.organizationId)
        .where('deleted_at', 'is', null),
    );
  }

  async insert(g: GenerationRecord, trx: Q = this.db): Promise<void> {
    await trx.insertInto('generations').values(toRow(g)).execute();
  }

  async find(id: string, organizationId?: string): Promise<GenerationRecord | null> {
    const [r] = organizationId
      ? await this.findLiveOfOrganization.run(this.db, { id, organizationId })
      : await this.findLive.run(this.db, { id });
    return r ? toGeneration(r) : null;
  }

  /** Including deleted rows (idempotent replays must tell "deleted" from "never existed"). */
  async findAny(id: string, q: Q = this.db): Promise<GenerationRecord | null> {
    const r = await q.selectFrom('generations').selectAll().where('id', '=', id).executeTakeFirst();
    return r ? toGeneration(r) : null;
  }

  async countActive(organizationId: string, trx: Q = this.db): Promise<number> {
    const r = await trx
      .selectFrom('generations')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('organization_id', '=', organizationId)
      .where('status', 'in', ['PENDING', 'PROCESSING'])
      .where('deleted_at', 'is', null)
      // A batch's children have their own limits (the batch concurrency and the organization's share).
      .where('source', 'not like', `${BATCH_SOURCE_PREFIX}%`)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async list(organizationId: string, f: ListFilter): Promise<GenerationRecord[]> {
    let q = this.db
      .selectFrom('generations')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('deleted_at', 'is', null);
    if (f.statuses?.length) q = q.where('status', 'in', f.statuses);
    if (f.ids?.length) q = q.where('id', 'in', f.ids);
    if (f.sources?.length) q = q.where('source', 'in', f.sources);
    if (f.projectId) q = q.where('project_id', '=', f.projectId);
    const c = f.cursor;
    if (c) {
      q = q.where((eb) =>
        eb.or([
          eb('created_at', '<', c.createdAt),
          eb.and([eb('created_at', '=', c.createdAt), eb('id', '<', c.id)]),
        ]),
      );
    }
    q = q.orderBy('created_at', 'desc').orderBy('id', 'desc');
    if (f.limit) q = q.limit(f.limit);
    return (await q.execute()).map(toGeneration);
  }

  /**
   * Marks it deleted unless a re-dub based on it (dubParams.basedOn) is in one of `activeStatuses`:
   * that re-dub still reads its video and kept segment audio. The check and the mark are one
   * statement; its notes are deleted in the same transaction. false: refused (the row is left as it was).
   */
  async markDeletedUnlessRedubbed(
    g: Pick<GenerationRecord, 'id' | 'organizationId'>,
    at: string,
    activeStatuses: readonly GenerationStatus[],
  ): Promise<boolean> {
    // The re-dub's stored request names it as {"basedOn":{"generationId":ID,...}} (src/domain/dub.ts).
    const named = JSON.stringify({ basedOn: { generationId: g.id } }).slice(1, -2);
    const pattern = `%${named.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    return this.db.transaction().execute(async (trx) => {
      const r = await trx
        .updateTable('generations')
        .set({ deleted_at: at, updated_at: at })
        .where('id', '=', g.id)
        .where(({ not, exists, selectFrom }) =>
          not(
            exists(
              selectFrom('generations as r')
                .select(sql`1`.as('one'))
                .where('r.organization_id', '=', g.organizationId)
                .where('r.status', 'in', [...activeStatuses])
                .where('r.resolved_input', 'like', sql<string>`${pattern} escape '\\'`),
            ),
          ),
        )
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) return false;
      // Its review notes go with it (no orphans); an insert racing this waits on the row (store/notes.ts).
      await trx.deleteFrom('generation_notes').where('generation_id', '=', g.id).execute();
      return true;
    });
  }

  /** Ids (and update times) of rows changed since `sinceIso`, for the SQLite cross-process wake-up. */
  async changedSince(sinceIso: string, ids: string[]): Promise<{ id: string; updatedAt: string }[]> {
    if (ids.length === 0) return [];
    const rows = await this.db
      .selectFrom('generations')
      .select(['id', 'updated_at'])
      .where('id', 'in', ids)
      .where('updated_at', '>', sinceIso)
      .execute();
    return rows.map((r) => ({ id: r.id, updatedAt: r.updated_at }));
  }
}
