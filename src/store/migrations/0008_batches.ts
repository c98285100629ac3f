// Batches (issue 13): the public resource of the `batch` job kind, one row per JSONL record, the
// organization's batch limits set by an operator, and the per-organization share of running batch
// children that a claim respects (jobs.share_limit).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('batches')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('api_key_id', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('total', 'integer', (c) => c.notNull())
    .addColumn('success_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('failed_count', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('children_started', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('jobs_created', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('webhook_url', 'text')
    .addColumn('canceled_at', 'text')
    .addColumn('error_code', 'text')
    .addColumn('error_message', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('finished_at', 'text')
    .execute();
  await db.schema
    .createIndex('batches_org')
    .on('batches')
    .columns(['organization_id', 'created_at'])
    .execute();
  await db.schema
    .createTable('batch_items')
    .addColumn('batch_id', 'text', (c) => c.notNull())
    .addColumn('line', 'integer', (c) => c.notNull())
    .addColumn('request_id', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('generation_id', 'text')
    .addColumn('error_code', 'text')
    .addColumn('error_message', 'text')
    .addPrimaryKeyConstraint('batch_items_pk', ['batch_id', 'line'])
    .execute();
  await db.schema.createIndex('batch_items_generation').on('batch_items').column('generation_id').execute();
  await db.schema.alterTable('organizations').addColumn('batch_limits', 'text').execute();
  await db.schema.alterTable('jobs').addColumn('share_limit', 'integer').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('jobs').dropColumn('share_limit').execute();
  await db.schema.alterTable('organizations').dropColumn('batch_limits').execute();
  await db.schema.dropTable('batch_items').execute();
  await db.schema.dropTable('batches').execute();
}
