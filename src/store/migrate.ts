// Numbered migrations, applied in order, the same files for SQLite and PostgreSQL.
import { Migrator, sql, type Migration, type MigrationProvider } from 'kysely';
import type { Db } from './database.js';
import * as m0001 from './migrations/0001_initial.js';
import * as m0002 from './migrations/0002_assets_extra.js';
import * as m0003 from './migrations/0003_generations.js';
import * as m0004 from './migrations/0004_jobs.js';
import * as m0005 from './migrations/0005_speech.js';
import * as m0006 from './migrations/0006_transcriptions.js';
import * as m0007 from './migrations/0007_dialogue_edits.js';
import * as m0008 from './migrations/0008_batches.js';
import * as m0009 from './migrations/0009_asset_sha256.js';
import * as m0010 from './migrations/0010_worker_tokens.js';
import * as m0011 from './migrations/0011_asset_probe.js';
import * as m0012 from './migrations/0012_webhook_subjects.js';
import * as m0013 from './migrations/0013_asset_upload_used.js';
import * as m0014 from './migrations/0014_job_turns.js';
import * as m0015 from './migrations/0015_generation_dub.js';
import * as m0017 from './migrations/0017_web_sessions.js';
import * as m0018 from './migrations/0018_account_link_email.js';
import * as m0019 from './migrations/0019_transcription_revision.js';
import * as m0020 from './migrations/0020_generation_still.js';
import * as m0021 from './migrations/0021_generation_notes.js';

const MIGRATIONS: Record<string, Migration> = {
  '0001_initial': m0001,
  '0002_assets_extra': m0002,
  '0003_generations': m0003,
  '0004_jobs': m0004,
  '0005_speech': m0005,
  '0006_transcriptions': m0006,
  '0007_dialogue_edits': m0007,
  '0008_batches': m0008,
  '0009_asset_sha256': m0009,
  '0010_worker_tokens': m0010,
  '0011_asset_probe': m0011,
  '0012_webhook_subjects': m0012,
  '0013_asset_upload_used': m0013,
  '0014_job_turns': m0014,
  '0015_generation_dub': m0015,
  '0017_web_sessions': m0017,
  '0018_account_link_email': m0018,
  '0019_transcription_revision': m0019,
  '0020_generation_still': m0020,
  '0021_generation_notes': m0021,
};

class StaticProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return MIGRATIONS;
  }
}

export async function migrateToLatest(db: Db): Promise<string[]> {
  // On PostgreSQL, Kysely looks for its migration tables in every schema unless told which one; another
  // deployment's tables in a different schema of the same database would then be taken for ours. Keep
  // them in the schema our tables go to (the first of search_path).
  let migrationTableSchema: string | undefined;
  if (db.dialect === 'postgres') {
    const r = await sql<{ schema: string | null }>`select current_schema() as schema`.execute(db.kysely);
    migrationTableSchema = r.rows[0]?.schema ?? undefined;
  }
  const migrator = new Migrator({ db: db.kysely, provider: new StaticProvider(), migrationTableSchema });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
