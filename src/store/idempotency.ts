import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database, IdempotencyKeyTable } from './schema.js';
import type { IdempotencyRecord, IdempotencyState } from '../domain/idempotency.js';

function toRecord(r: Selectable<IdempotencyKeyTable>): IdempotencyRecord {
  return {
    organizationId: r.organization_id,
    scope: r.scope,
    key: r.key,
    fingerprint: r.fingerprint,
    state: r.state as IdempotencyState,
    resourceId: r.resource_id,
    createdAt: r.created_at,
    expiresAt: r.expires_at,
  };
}

export class IdempotencyRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** Binds the key to this request; false when it was already bound (by anyone, at any time). */
  async claim(r: IdempotencyRecord): Promise<boolean> {
    const res = await this.db
      .insertInto('idempotency_keys')
      .values({
        organization_id: r.organizationId,
        scope: r.scope,
        key: r.key,
        fingerprint: r.fingerprint,
        state: r.state,
        resource_id: r.resourceId,
        created_at: r.createdAt,
        expires_at: r.expiresAt,
      })
      .onConflict((oc) => oc.columns(['organization_id', 'scope', 'key']).doNothing())
      .executeTakeFirst();
    return Number(res.numInsertedOrUpdatedRows ?? 0) === 1;
  }

  async find(organizationId: string, scope: string, key: string): Promise<IdempotencyRecord | null> {
    const r = await this.db
      .selectFrom('idempotency_keys')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('scope', '=', scope)
      .where('key', '=', key)
      .executeTakeFirst();
    return r ? toRecord(r) : null;
  }

  async complete(
    trx: Transaction<Database>,
    organizationId: string,
    scope: string,
    key: string,
    resourceId: string,
    expiresAt: string,
  ): Promise<void> {
    await trx
      .updateTable('idempotency_keys')
      .set({ state: 'done', resource_id: resourceId, expires_at: expiresAt })
      .where('organization_id', '=', organizationId)
      .where('scope', '=', scope)
      .where('key', '=', key)
      .execute();
  }

  /**
   * Records on a pending claim the id its generation will get, just before the insert transaction, so
   * that a claim whose commit never resolved can name the generation to poll.
   */
  async attach(organizationId: string, scope: string, key: string, resourceId: string): Promise<void> {
    await this.db
      .updateTable('idempotency_keys')
      .set({ resource_id: resourceId })
      .where('organization_id', '=', organizationId)
      .where('scope', '=', scope)
      .where('key', '=', key)
      .where('state', '=', 'pending')
      .execute();
  }

  /**
   * Takes over an expired pending claim for a new request (only if it is still the same claim:
   * two requests taking it over at once cannot both win).
   */
  async takeOver(expired: IdempotencyRecord, fresh: IdempotencyRecord): Promise<boolean> {
    const r = await this.db
      .updateTable('idempotency_keys')
      .set({
        fingerprint: fresh.fingerprint,
        resource_id: null,
        created_at: fresh.createdAt,
        expires_at: fresh.expiresAt,
      })
      .where('organization_id', '=', expired.organizationId)
      .where('scope', '=', expired.scope)
      .where('key', '=', expired.key)
      .where('state', '=', 'pending')
      .where('created_at', '=', expired.createdAt)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  /** Binds a pending claim to a resource found to exist (its commit did land). */
  async markDone(organizationId: string, scope: string, key: string, resourceId: string): Promise<void> {
    await this.db
      .updateTable('idempotency_keys')
      .set({ state: 'done', resource_id: resourceId })
      .where('organization_id', '=', organizationId)
      .where('scope', '=', scope)
      .where('key', '=', key)
      .where('state', '=', 'pending')
      .execute();
  }

  /** Releases a claim whose request was refused before anything was created, so the client may retry. */
  async release(organizationId: string, scope: string, key: string): Promise<void> {
    await this.db
      .deleteFrom('idempotency_keys')
      .where('organization_id', '=', organizationId)
      .where('scope', '=', scope)
      .where('key', '=', key)
      .where('state', '=', 'pending')
      .execute();
  }

  /** Removes finished keys past their retention; pending (unresolved) ones are kept. */
  async deleteExpired(nowIso: string): Promise<number> {
    const r = await this.db
      .deleteFrom('idempotency_keys')
      .where('expires_at', '<', nowIso)
      .where('state', '=', 'done')
      .executeTakeFirst();
    return Number(r.numDeletedRows);
  }
}
