// Speech (issue 10): cloned voices, operator blocks on voices, text-to-speech jobs, the word and
// phoneme timelines of synthesized assets, and organizations' own provider keys.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('voices')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('name_key', 'text', (c) => c.notNull())
    .addColumn('provider', 'text', (c) => c.notNull())
    .addColumn('provider_voice_id', 'text')
    .addColumn('base_voice', 'text')
    .addColumn('profile', 'text')
    .addColumn('sample_asset_id', 'text')
    .addColumn('sample_seconds', 'double precision')
    .addColumn('verified_at', 'text')
    .addColumn('created_by_key_id', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('voices_org_name')
    .on('voices')
    .columns(['organization_id', 'name_key'])
    .unique()
    .execute();

  // Any voice id (a built-in provider voice or a clone's id) an operator blocked.
  await db.schema
    .createTable('voice_blocks')
    .addColumn('voice_id', 'text', (c) => c.primaryKey())
    .addColumn('reason', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('tts_jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('api_key_id', 'text')
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('request', 'text', (c) => c.notNull())
    .addColumn('asset_id', 'text')
    .addColumn('duration_seconds', 'double precision')
    .addColumn('error_code', 'text')
    .addColumn('error_message', 'text')
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .addColumn('started_at', 'text')
    .addColumn('finished_at', 'text')
    .execute();
  await db.schema
    .createIndex('tts_jobs_org')
    .on('tts_jobs')
    .columns(['organization_id', 'created_at'])
    .execute();

  await db.schema
    .createTable('asset_timelines')
    .addColumn('asset_id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('timeline', 'text', (c) => c.notNull())
    .execute();

  await db.schema.alterTable('organizations').addColumn('provider_keys', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('organizations').dropColumn('provider_keys').execute();
  await db.schema.dropTable('asset_timelines').execute();
  await db.schema.dropTable('tts_jobs').execute();
  await db.schema.dropTable('voice_blocks').execute();
  await db.schema.dropTable('voices').execute();
}
