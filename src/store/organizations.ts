import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { Database, OrganizationTable } from './schema.js';
import type { BillingMode, Plan } from '../domain/plans.js';
import type { Dialect } from './database.js';
import type { BatchLimitOverrides } from '../domain/batches.js';

export interface Organization {
  id: string;
  name: string;
  plan: Plan;
  billing: BillingMode;
  concurrencyLimit: number | null;
  flags: string[];
  /** False when the stored rollout flags could not be read (they then count as none; see readFlags). */
  flagsReadable: boolean;
  draft: boolean;
  webhookSecret: string;
  createdAt: string;
  updatedAt: string;
}

/**
 * The rollout flags of a row. A value that is not a JSON list of strings is not guessed at: it reads
 * as no flags, marked unreadable, so flag-gated features can answer 503 rather than a wrong 422.
 */
function readFlags(raw: string): { flags: string[]; flagsReadable: boolean } {
  try {
    const v: unknown = JSON.parse(raw);
    if (Array.isArray(v) && v.every((f) => typeof f === 'string')) return { flags: v, flagsReadable: true };
  } catch {
    // fall through
  }
  return { flags: [], flagsReadable: false };
}

export function toOrganization(
  r: Omit<Selectable<OrganizationTable>, 'provider_keys' | 'batch_limits'>,
): Organization {
  return {
    id: r.id,
    name: r.name,
    plan: r.plan as Plan,
    billing: r.billing as BillingMode,
    concurrencyLimit: r.concurrency_limit,
    ...readFlags(r.flags),
    draft: r.draft === 1,
    webhookSecret: r.webhook_secret,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export class OrganizationRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  /**
   * Runs `work` in one transaction that begins with lock(): a count of the organization's rows that
   * `work` compares with a plan limit stays true until its insert commits, however many requests race.
   */
  async exclusive<T>(organizationId: string, work: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(async (trx) => {
      await this.lock(organizationId, trx);
      return work(trx);
    });
  }

  /**
   * Serialises one organization's creates (generations, transcription dedupe). Call it first in the transaction. PostgreSQL: a row lock on
   * the organization. SQLite: a no-op write, so that the transaction takes the database's write lock
   * before it reads anything; a deferred transaction that read first and wrote later would fail with
   * SQLITE_BUSY_SNAPSHOT whenever another process (`lipsync worker`) committed in between.
   */
  async lock(organizationId: string, trx: Transaction<Database>): Promise<void> {
    if (this.dialect === 'postgres') {
      await sql`select id from organizations where id = ${organizationId} for update`.execute(trx);
    } else {
      await sql`update organizations set name = name where id = ${organizationId}`.execute(trx);
    }
  }

  async insert(o: Organization): Promise<void> {
    await this.db
      .insertInto('organizations')
      .values({
        id: o.id,
        name: o.name,
        plan: o.plan,
        billing: o.billing,
        concurrency_limit: o.concurrencyLimit,
        flags: JSON.stringify(o.flags),
        draft: o.draft ? 1 : 0,
        webhook_secret: o.webhookSecret,
        created_at: o.createdAt,
        updated_at: o.updatedAt,
      })
      .execute();
  }

  async update(o: Organization, trx: Kysely<Database> | Transaction<Database> = this.db): Promise<void> {
    await trx
      .updateTable('organizations')
      .set({
        name: o.name,
        plan: o.plan,
        billing: o.billing,
        concurrency_limit: o.concurrencyLimit,
        flags: JSON.stringify(o.flags),
        draft: o.draft ? 1 : 0,
        webhook_secret: o.webhookSecret,
        updated_at: o.updatedAt,
      })
      .where('id', '=', o.id)
      .execute();
  }

  async findById(
    id: string,
    trx: Kysely<Database> | Transaction<Database> = this.db,
  ): Promise<Organization | null> {
    const r = await trx.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
    return r ? toOrganization(r) : null;
  }

  async list(): Promise<Organization[]> {
    const rows = await this.db
      .selectFrom('organizations')
      .selectAll()
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toOrganization);
  }

  async count(): Promise<number> {
    const r = await this.db
      .selectFrom('organizations')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /** The organization's own key for a voice provider (kept apart from Organization: it is a secret). */
  async providerKey(id: string, provider: string): Promise<string | null> {
    const r = await this.db
      .selectFrom('organizations')
      .select('provider_keys')
      .where('id', '=', id)
      .executeTakeFirst();
    const keys = r?.provider_keys ? (JSON.parse(r.provider_keys) as Record<string, string>) : {};
    return keys[provider] ?? null;
  }

  /** Sets (or, with null, removes) the organization's own key for a provider. */
  async setProviderKey(id: string, provider: string, key: string | null): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const r = await trx
        .selectFrom('organizations')
        .select('provider_keys')
        .where('id', '=', id)
        .executeTakeFirst();
      if (!r) return false;
      const keys = r.provider_keys ? (JSON.parse(r.provider_keys) as Record<string, string>) : {};
      if (key === null) delete keys[provider];
      else keys[provider] = key;
      await trx
        .updateTable('organizations')
        .set({ provider_keys: JSON.stringify(keys), updated_at: new Date().toISOString() })
        .where('id', '=', id)
        .execute();
      return true;
    });
  }

  /** Which providers the organization has its own key for (never the keys). */
  async providerKeyNames(id: string): Promise<string[]> {
    const r = await this.db
      .selectFrom('organizations')
      .select('provider_keys')
      .where('id', '=', id)
      .executeTakeFirst();
    return r?.provider_keys ? Object.keys(JSON.parse(r.provider_keys) as Record<string, string>) : [];
  }

  /** An operator's batch limits for the organization (null: the plan's defaults). */
  async batchLimits(
    id: string,
    trx: Kysely<Database> | Transaction<Database> = this.db,
  ): Promise<BatchLimitOverrides | null> {
    const r = await trx
      .selectFrom('organizations')
      .select('batch_limits')
      .where('id', '=', id)
      .executeTakeFirst();
    return r?.batch_limits ? (JSON.parse(r.batch_limits) as BatchLimitOverrides) : null;
  }

  async setBatchLimits(id: string, limits: BatchLimitOverrides | null): Promise<boolean> {
    const r = await this.db
      .updateTable('organizations')
      .set({ batch_limits: limits ? JSON.stringify(limits) : null, updated_at: new Date().toISOString() })
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }
}
