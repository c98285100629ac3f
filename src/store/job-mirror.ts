// The one place that copies a job's state onto its resource's row, for every kind alike: the job system
// (src/jobs/queue.ts) calls it in the transaction of each transition, so that a resource's reads (GET
// /v2/generate/{id} above all) stay one indexed row. The kinds differ only in data: their table, their
// status names and their error columns (each kind's mirror description, src/jobs/handler.ts).
import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

/** The resource tables that show a job's state: each has id, status, started_at, finished_at, updated_at. */
export type MirroredTable = 'generations' | 'tts_jobs' | 'transcriptions' | 'dialogue_edits';

export type MirroredValue = string | number | null;

export interface MirrorWrite {
  readonly status?: string;
  /** Other columns (progress, error, result columns), by name. */
  readonly values?: Readonly<Record<string, MirroredValue>>;
  /** Sets started_at unless the row has one (a retry keeps the first start). */
  readonly startedAt?: string;
  readonly finishedAt?: string;
  readonly updatedAt: string;
}

type Q = Kysely<Database> | Transaction<Database>;

export class JobMirrorRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * Writes `w` onto the resource row while its status is one of `from` (a settled resource never moves
   * back). True when the row moved.
   */
  async write(
    table: MirroredTable,
    id: string,
    from: readonly string[],
    w: MirrorWrite,
    q: Q = this.db,
  ): Promise<boolean> {
    // One statement for four tables: their shared columns are checked by MirroredTable, the kind's own
    // columns by its mirror description.
    const r = await q
      .updateTable(table as 'generations')
      .set(
        (eb) =>
          ({
            ...w.values,
            ...(w.status !== undefined ? { status: w.status } : {}),
            ...(w.startedAt !== undefined
              ? { started_at: eb.fn.coalesce('started_at', eb.val(w.startedAt)) }
              : {}),
            ...(w.finishedAt !== undefined ? { finished_at: w.finishedAt } : {}),
            updated_at: w.updatedAt,
          }) as never,
      )
      .where('id', '=', id)
      .where('status', 'in', [...from])
      .returning('id')
      .executeTakeFirst();
    return r !== undefined;
  }
}
