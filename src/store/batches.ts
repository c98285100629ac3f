// Batches and their records. The counters move only inside the transactions that end a record (a
// child's terminal state, or a record refused while its child was being created): never by a scan.
import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { BatchItemTable, BatchTable, Database } from './schema.js';
import type { Dialect } from './database.js';
import { ACTIVE_BATCH_STATUSES, type BatchStatus } from '../domain/batches.js';

export interface BatchRecord {
  id: string;
  organizationId: string;
  apiKeyId: string | null;
  status: BatchStatus;
  total: number;
  succeeded: number;
  failed: number;
  childrenStarted: boolean;
  jobsCreated: boolean;
  webhookUrl: string | null;
  canceledAt: string | null;
  errorCode: string | null;
  errorMessage: string | null;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
}

export type BatchItemStatus = 'queued' | 'created' | 'failed' | 'canceled';

export interface BatchItemRecord {
  batchId: string;
  line: number;
  requestId: string;
  payload: Record<string, unknown>;
  status: BatchItemStatus;
  generationId: string | null;
  errorCode: string | null;
  errorMessage: string | null;
}

/** A record as the results file shows it: the item joined with its generation. */
export interface BatchResultRow extends BatchItemRecord {
  generationStatus: string | null;
  generationErrorCode: string | null;
  generationError: string | null;
}

type Q = Kysely<Database> | Transaction<Database>;

function toBatch(r: Selectable<BatchTable>): BatchRecord {
  return {
    id: r.id,
    organizationId: r.organization_id,
    apiKeyId: r.api_key_id,
    status: r.status as BatchStatus,
    total: Number(r.total),
    succeeded: Number(r.success_count),
    failed: Number(r.failed_count),
    childrenStarted: Number(r.children_started) === 1,
    jobsCreated: Number(r.jobs_created) === 1,
    webhookUrl: r.webhook_url,
    canceledAt: r.canceled_at,
    errorCode: r.error_code,
    errorMessage: r.error_message,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    finishedAt: r.finished_at,
  };
}

function toItem(r: Selectable<BatchItemTable>): BatchItemRecord {
  return {
    batchId: r.batch_id,
    line: Number(r.line),
    requestId: r.request_id,
    payload: JSON.parse(r.payload) as Record<string, unknown>,
    status: r.status as BatchItemStatus,
    generationId: r.generation_id,
    errorCode: r.error_code,
    errorMessage: r.error_message,
  };
}

export interface BatchListFilter {
  status?: BatchStatus;
  createdAfter?: string;
  createdBefore?: string;
  limit: number;
  cursor?: BatchRecord | null;
}

export class BatchRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  async insert(
    trx: Q,
    b: BatchRecord,
    items: { line: number; requestId: string; payload: unknown }[],
  ): Promise<void> {
    await trx
      .insertInto('batches')
      .values({
        id: b.id,
        organization_id: b.organizationId,
        api_key_id: b.apiKeyId,
        status: b.status,
        total: b.total,
        success_count: 0,
        failed_count: 0,
        children_started: 0,
        jobs_created: 0,
        webhook_url: b.webhookUrl,
        canceled_at: null,
        error_code: null,
        error_message: null,
        created_at: b.createdAt,
        updated_at: b.updatedAt,
        finished_at: null,
      })
      .execute();
    // Chunks keep every statement under SQLite's bound-parameter limit.
    for (let i = 0; i < items.length; i += 100) {
      await trx
        .insertInto('batch_items')
        .values(
          items.slice(i, i + 100).map((it) => ({
            batch_id: b.id,
            line: it.line,
            request_id: it.requestId,
            payload: JSON.stringify(it.payload),
            status: 'queued',
            generation_id: null,
            error_code: null,
            error_message: null,
          })),
        )
        .execute();
    }
  }

  async find(id: string, organizationId?: string, trx: Q = this.db): Promise<BatchRecord | null> {
    let q = trx.selectFrom('batches').selectAll().where('id', '=', id);
    if (organizationId) q = q.where('organization_id', '=', organizationId);
    const r = await q.executeTakeFirst();
    return r ? toBatch(r) : null;
  }

  /** Takes the batch's row lock (PostgreSQL) so that its counters and status move one at a time. */
  async lock(trx: Transaction<Database>, id: string): Promise<BatchRecord | null> {
    if (this.dialect === 'postgres') {
      const r = await sql<Selectable<BatchTable>>`select * from batches where id = ${id} for update`.execute(
        trx,
      );
      return r.rows[0] ? toBatch(r.rows[0]) : null;
    }
    await sql`update batches set id = id where id = ${id}`.execute(trx);
    return this.find(id, undefined, trx);
  }

  async countActive(organizationId: string, trx: Q = this.db): Promise<number> {
    const r = await trx
      .selectFrom('batches')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('organization_id', '=', organizationId)
      .where('status', 'in', [...ACTIVE_BATCH_STATUSES])
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async list(organizationId: string, f: BatchListFilter): Promise<BatchRecord[]> {
    let q = this.db.selectFrom('batches').selectAll().where('organization_id', '=', organizationId);
    if (f.status) q = q.where('status', '=', f.status);
    if (f.createdAfter) q = q.where('created_at', '>', f.createdAfter);
    if (f.createdBefore) q = q.where('created_at', '<', f.createdBefore);
    const c = f.cursor;
    if (c)
      q = q.where((eb) =>
        eb.or([
          eb('created_at', '<', c.createdAt),
          eb.and([eb('created_at', '=', c.createdAt), eb('id', '<', c.id)]),
        ]),
      );
    const rows = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(f.limit).execute();
    return rows.map(toBatch);
  }

  async update(trx: Q, id: string, set: Partial<Omit<BatchTable, 'id' | 'organization_id'>>): Promise<void> {
    await trx
      .updateTable('batches')
      .set({ ...set, updated_at: new Date().toISOString() })
      .where('id', '=', id)
      .execute();
  }

  /** Counts `n` records' ends (the caller holds the batch's lock). */
  async countEnd(trx: Q, id: string, succeeded: boolean, n = 1): Promise<void> {
    if (n <= 0) return;
    await trx
      .updateTable('batches')
      .set((eb) => ({
        ...(succeeded
          ? { success_count: eb('success_count', '+', n) }
          : { failed_count: eb('failed_count', '+', n) }),
        updated_at: new Date().toISOString(),
      }))
      .where('id', '=', id)
      .execute();
  }

  /** Records still waiting for their generation, in file order. */
  async queuedItems(batchId: string): Promise<BatchItemRecord[]> {
    const rows = await this.db
      .selectFrom('batch_items')
      .selectAll()
      .where('batch_id', '=', batchId)
      .where('status', '=', 'queued')
      .orderBy('line')
      .execute();
    return rows.map(toItem);
  }

  /**
   * Moves a queued record on (to created, with its generation, or to failed/canceled). False when it
   * was not queued any more: another run got there first, and the caller must roll back.
   */
  async moveItem(
    trx: Q,
    batchId: string,
    line: number,
    to: {
      status: Exclude<BatchItemStatus, 'queued'>;
      generationId?: string;
      errorCode?: string;
      errorMessage?: string;
    },
  ): Promise<boolean> {
    const r = await trx
      .updateTable('batch_items')
      .set({
        status: to.status,
        generation_id: to.generationId ?? null,
        error_code: to.errorCode ?? null,
        error_message: to.errorMessage ?? null,
      })
      .where('batch_id', '=', batchId)
      .where('line', '=', line)
      .where('status', '=', 'queued')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Every queued record of the batch ends as `status` (a cancel, or a creation that gave up). */
  async endQueuedItems(
    trx: Q,
    batchId: string,
    status: 'failed' | 'canceled',
    error: { code: string; message: string },
  ): Promise<number> {
    const r = await trx
      .updateTable('batch_items')
      .set({ status, error_code: error.code, error_message: error.message })
      .where('batch_id', '=', batchId)
      .where('status', '=', 'queued')
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  async itemOfGeneration(trx: Q, generationId: string): Promise<BatchItemRecord | null> {
    const r = await trx
      .selectFrom('batch_items')
      .selectAll()
      .where('generation_id', '=', generationId)
      .executeTakeFirst();
    return r ? toItem(r) : null;
  }

  /** Generation ids of the batch's children that have not ended. */
  async unfinishedChildren(batchId: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom('batch_items')
      .innerJoin('generations', 'generations.id', 'batch_items.generation_id')
      .select('generations.id')
      .where('batch_items.batch_id', '=', batchId)
      .where('generations.status', 'in', ['PENDING', 'PROCESSING'])
      .execute();
    return rows.map((r) => r.id);
  }

  /** The results file's rows, in file order. */
  async results(batchId: string): Promise<BatchResultRow[]> {
    const rows = await this.db
      .selectFrom('batch_items')
      .leftJoin('generations', 'generations.id', 'batch_items.generation_id')
      .selectAll('batch_items')
      .select([
        'generations.status as g_status',
        'generations.error_code as g_error_code',
        'generations.error as g_error',
      ])
      .where('batch_items.batch_id', '=', batchId)
      .orderBy('batch_items.line')
      .execute();
    return rows.map((r) => ({
      ...toItem(r),
      generationStatus: r.g_status,
      generationErrorCode: r.g_error_code,
      generationError: r.g_error,
    }));
  }
}
