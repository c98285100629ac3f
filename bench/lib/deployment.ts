// Data folders and PostgreSQL schemas for benchmark servers (the test harness's deployments), with
// clean-up registered.
import pg from 'pg';
import { createDeployment, type TestDeployment } from '../../test/helpers/process.js';
import { testPostgresUrl, type TestDatabase } from '../../test/helpers/database.js';
import { onCleanup } from './cleanup.js';

export type { TestDeployment as Deployment };

/**
 * A fresh data folder (and a fresh schema on PostgreSQL). The service logs only warnings unless
 * `env` says otherwise, and writes its logs to /dev/null (see child.ts).
 */
export async function deployment(
  database: TestDatabase,
  env: Record<string, string> = {},
): Promise<TestDeployment> {
  const dep = await createDeployment({ database, env: { LOG_LEVEL: 'warn', ...env } });
  onCleanup(`deployment ${dep.dataDir}`, () => dep.cleanup());
  return dep;
}

/** Null when PostgreSQL answers at the test database URL (default 127.0.0.1:5432), else why not. */
export async function postgresProblem(): Promise<string | null> {
  const client = new pg.Client({ connectionString: testPostgresUrl(), connectionTimeoutMillis: 2000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('select 1');
    return null;
  } catch (err) {
    return (err as Error)?.message ?? String(err);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The database URL PostgreSQL benchmarks use (TEST_DATABASE_URL, DATABASE_URL or the local one). */
export function postgresUrlForDisplay(): string {
  const u = new URL(testPostgresUrl());
  if (u.password) u.password = '***';
  return u.toString();
}
