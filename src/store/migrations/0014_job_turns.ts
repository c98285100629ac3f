// Fair share across organizations: the claim serves the organization whose turn came longest ago. A
// counter, not a time, so that two claims within one clock tick still order (docs/jobs.md, "Claims").
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('job_turns')
    .addColumn('organization_id', 'text', (c) => c.primaryKey())
    .addColumn('turn', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('job_turns_turn').on('job_turns').column('turn').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('job_turns').execute();
}
