// Transcriptions (issue 11): the public resource of the `transcription` job kind.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('transcriptions')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('api_key_id', 'text')
    .addColumn('project_id', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('source_kind', 'text', (c) => c.notNull())
    .addColumn('source_key', 'text', (c) => c.notNull())
    .addColumn('source_asset_id', 'text')
    .addColumn('start_ms', 'bigint', (c) => c.notNull())
    .addColumn('end_ms', 'bigint')
    .addColumn('source_end_ms', 'bigint')
    .addColumn('max_source_seconds', 'integer')
    .addColumn('transcript', 'text')
    .addColumn('speaker_count', 'integer')
    .addColumn('error_code', 'text')
    .addColumn('error_message', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .execute();
  // Dedupe looks up the same source and window within an organization.
  await db.schema
    .createIndex('transcriptions_source')
    .on('transcriptions')
    .columns(['organization_id', 'source_key', 'start_ms'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('transcriptions').execute();
}
