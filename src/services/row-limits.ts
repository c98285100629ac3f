// Plan limits that count an organization's rows (cloned voices, active generations, unfinished
// batches). Each is counted and checked inside the transaction that inserts the new row, after the
// organization's lock, so parallel requests cannot all pass one count: the one mechanism for every
// such limit (docs/limits.md).
import type { Kysely, Transaction } from 'kysely';
import type { Store } from '../store/index.js';
import type { Database } from '../store/schema.js';

export interface RowLimit {
  /** The organization's rows that count against the limit. */
  count(db: Kysely<Database>): Promise<number>;
  /** Throws the limit's catalogue error when `current` rows leave no room for one more. */
  assertRoom(current: number): void;
}

/** A quick refusal before expensive work; insertWithinLimit decides. */
export async function precheckLimit(store: Store, limit: RowLimit): Promise<void> {
  limit.assertRoom(await limit.count(store.db.kysely));
}

/** Runs `insert` in the organization's exclusive transaction once `limit` (when given) has room. */
export function insertWithinLimit<T>(
  store: Store,
  organizationId: string,
  limit: RowLimit | null,
  insert: (trx: Transaction<Database>) => Promise<T>,
): Promise<T> {
  return store.organizations.exclusive(organizationId, async (trx) => {
    if (limit) limit.assertRoom(await limit.count(trx));
    return insert(trx);
  });
}
