import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('generations')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) =>
      c.notNull().references('organizations.id').onDelete('cascade'),
    )
    .addColumn('project_id', 'text')
    .addColumn('api_key_id', 'text')
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('source', 'text', (c) => c.notNull().defaultTo('api'))
    .addColumn('input', 'text', (c) => c.notNull())
    .addColumn('resolved_input', 'text', (c) => c.notNull().defaultTo('{}'))
    .addColumn('options', 'text')
    .addColumn('segments', 'text')
    .addColumn('webhook_url', 'text')
    .addColumn('output_file_name', 'text')
    .addColumn('output_format', 'text', (c) => c.notNull().defaultTo('mp4'))
    .addColumn('output_key', 'text')
    .addColumn('watermarked_key', 'text')
    .addColumn('output_url', 'text')
    .addColumn('output_duration', 'double precision')
    .addColumn('progress', 'double precision', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .addColumn('error_code', 'text')
    .addColumn('quality', 'text')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('max_attempts', 'integer', (c) => c.notNull().defaultTo(3))
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', 'text')
    .addColumn('cancel_requested', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .addColumn('deadline_at', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('deleted_at', 'text')
    .execute();
  await db.schema
    .createIndex('generations_org_created')
    .on('generations')
    .columns(['organization_id', 'created_at'])
    .execute();
  await db.schema
    .createIndex('generations_status_created')
    .on('generations')
    .columns(['status', 'created_at'])
    .execute();

  await db.schema
    .createTable('idempotency_keys')
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('fingerprint', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('resource_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_keys_pk', ['organization_id', 'scope', 'key'])
    .execute();
  await db.schema
    .createIndex('idempotency_keys_expires')
    .on('idempotency_keys')
    .column('expires_at')
    .execute();

  await db.schema
    .createTable('webhook_deliveries')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('generation_id', 'text')
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', 'text', (c) => c.notNull())
    .addColumn('lease_expires_at', 'text')
    .addColumn('last_status_code', 'integer')
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_due')
    .on('webhook_deliveries')
    .columns(['status', 'next_attempt_at'])
    .execute();
  await db.schema
    .createIndex('webhook_deliveries_generation')
    .on('webhook_deliveries')
    .column('generation_id')
    .execute();

  await db.schema
    .createTable('webhook_attempts')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('delivery_id', 'text', (c) => c.notNull())
    .addColumn('generation_id', 'text')
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('attempted_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('webhook_attempts_generation')
    .on('webhook_attempts')
    .column('generation_id')
    .execute();

  await db.schema
    .createTable('usage_records')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('generation_id', 'text', (c) => c.notNull().unique())
    .addColumn('api_key_id', 'text')
    .addColumn('api_key_name', 'text')
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('seconds', 'double precision', (c) => c.notNull())
    .addColumn('frames', 'integer', (c) => c.notNull())
    .addColumn('cost', 'double precision', (c) => c.notNull())
    .addColumn('credits', 'double precision')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  for (const t of [
    'usage_records',
    'webhook_attempts',
    'webhook_deliveries',
    'idempotency_keys',
    'generations',
  ]) {
    await db.schema.dropTable(t).ifExists().execute();
  }
}
