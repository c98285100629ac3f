// Usage records: one per completed generation, written in the transaction that completes it.
import { randomUUID } from 'node:crypto';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.js';

type Q = Kysely<Database> | Transaction<Database>;

export interface UsageEntry {
  organizationId: string;
  generationId: string;
  apiKeyId: string | null;
  model: string;
  seconds: number;
  frames: number;
  cost: number;
  credits: number | null;
}

export class UsageRepository {
  constructor(private readonly db: Kysely<Database>) {}

  /** The organization's billing mode, read inside the completing transaction. */
  async billingOf(trx: Q, organizationId: string): Promise<string | null> {
    const r = await trx
      .selectFrom('organizations')
      .select('billing')
      .where('id', '=', organizationId)
      .executeTakeFirst();
    return r?.billing ?? null;
  }

  async record(trx: Q, e: UsageEntry): Promise<void> {
    // The key's name is kept with the record: the key may be renamed or deleted later.
    const key = e.apiKeyId
      ? await trx.selectFrom('api_keys').select('name').where('id', '=', e.apiKeyId).executeTakeFirst()
      : undefined;
    await trx
      .insertInto('usage_records')
      .values({
        id: randomUUID(),
        organization_id: e.organizationId,
        generation_id: e.generationId,
        api_key_id: e.apiKeyId,
        api_key_name: key?.name ?? null,
        model: e.model,
        seconds: e.seconds,
        frames: e.frames,
        cost: e.cost,
        credits: e.credits,
        created_at: new Date().toISOString(),
      })
      .execute();
  }

  /** Generations created since `since` by status, and the seconds of output recorded since then. */
  async summarySince(
    organizationId: string,
    since: string,
  ): Promise<{ byStatus: Record<string, number>; outputSeconds: number }> {
    const rows = await this.db
      .selectFrom('generations')
      .select(['status', (eb) => eb.fn.countAll<number | string>().as('n')])
      .where('organization_id', '=', organizationId)
      .where('created_at', '>=', since)
      .groupBy('status')
      .execute();
    const seconds = await this.db
      .selectFrom('usage_records')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number | string>('seconds'), eb.lit(0)).as('s'))
      .where('organization_id', '=', organizationId)
      .where('created_at', '>=', since)
      .executeTakeFirstOrThrow();
    return {
      byStatus: Object.fromEntries(rows.map((r) => [r.status, Number(r.n)])),
      outputSeconds: Number(seconds.s),
    };
  }

  async countFor(generationId: string): Promise<number> {
    const rows = await this.db
      .selectFrom('usage_records')
      .select('id')
      .where('generation_id', '=', generationId)
      .execute();
    return rows.length;
  }
}
