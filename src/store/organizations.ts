import type { Kysely, Selectable } from 'kysely';
import type { Database, OrganizationTable } from './schema.js';
import type { BillingMode, Plan } from '../domain/plans.js';

export interface Organization {
  id: string;
  name: string;
  plan: Plan;
  billing: BillingMode;
  concurrencyLimit: number | null;
  flags: string[];
  draft: boolean;
  webhookSecret: string;
  createdAt: string;
  updatedAt: string;
}

export function toOrganization(r: Selectable<OrganizationTable>): Organization {
  return {
    id: r.id,
    name: r.name,
    plan: r.plan as Plan,
    billing: r.billing as BillingMode,
    concurrencyLimit: r.concurrency_limit,
    flags: JSON.parse(r.flags) as string[],
    draft: r.draft === 1,
    webhookSecret: r.webhook_secret,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

export class OrganizationRepository {
  constructor(private readonly db: Kysely<Database>) {}

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

  async update(o: Organization): Promise<void> {
    await this.db
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

  async findById(id: string): Promise<Organization | null> {
    const r = await this.db.selectFrom('organizations').selectAll().where('id', '=', id).executeTakeFirst();
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
}
