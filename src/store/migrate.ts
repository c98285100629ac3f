// Numbered migrations, applied in order, the same files for SQLite and PostgreSQL.
import { Migrator, type Migration, type MigrationProvider } from 'kysely';
import type { Db } from './database.js';
import * as m0001 from './migrations/0001_initial.js';

const MIGRATIONS: Record<string, Migration> = {
  '0001_initial': m0001,
};

class StaticProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return MIGRATIONS;
  }
}

export async function migrateToLatest(db: Db): Promise<string[]> {
  const migrator = new Migrator({ db: db.kysely, provider: new StaticProvider() });
  const { error, results } = await migrator.migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}
