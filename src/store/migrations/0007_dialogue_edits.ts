// Dialogue edits (issue 11): the public resource of the `dialogue_edit` job kind (the preview).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('dialogue_edits')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('api_key_id', 'text')
    .addColumn('project_id', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('source_key', 'text', (c) => c.notNull())
    .addColumn('source_asset_id', 'text')
    .addColumn('start_ms', 'bigint', (c) => c.notNull())
    .addColumn('end_ms', 'bigint')
    .addColumn('source_transcript', 'text', (c) => c.notNull())
    .addColumn('edits', 'text', (c) => c.notNull())
    .addColumn('voice_id', 'text')
    .addColumn('voice_profile', 'text')
    .addColumn('segment_lipsync', 'integer', (c) => c.notNull())
    .addColumn('section_expansion', 'integer', (c) => c.notNull())
    .addColumn('rerun_of', 'text')
    .addColumn('preview_key', 'text')
    .addColumn('preview_duration_ms', 'bigint')
    .addColumn('result', 'text')
    .addColumn('error_code', 'text')
    .addColumn('error_message', 'text')
    .addColumn('error_details', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .execute();
  await db.schema
    .createIndex('dialogue_edits_org')
    .on('dialogue_edits')
    .columns(['organization_id', 'created_at'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('dialogue_edits').execute();
}
