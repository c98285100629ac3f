// Which database the tests run on, and a fresh PostgreSQL schema per use.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export type TestDatabase = 'sqlite' | 'postgres';

/** TEST_DATABASE (sqlite by default). */
export function testDatabase(): TestDatabase {
  const v = (process.env.TEST_DATABASE ?? 'sqlite').trim().toLowerCase();
  if (v === 'sqlite' || v === '') return 'sqlite';
  if (v === 'postgres' || v === 'postgresql' || v === 'pg') return 'postgres';
  throw new Error(`TEST_DATABASE=${JSON.stringify(v)} must be sqlite or postgres`);
}

/** The PostgreSQL database the tests create their schemas in. */
export function testPostgresUrl(): string {
  return (
    process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test'
  );
}

export interface TestSchema {
  readonly name: string;
  /** DATABASE_URL whose connections use only this schema. */
  readonly url: string;
  drop(): Promise<void>;
}

async function withAdmin<T>(fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: testPostgresUrl(), connectionTimeoutMillis: 5000 });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** Creates `t_<random>` and returns a URL with `search_path` set to it. */
export async function createTestSchema(): Promise<TestSchema> {
  const name = `t_${randomBytes(6).toString('hex')}`;
  await withAdmin((c) => c.query(`CREATE SCHEMA ${name}`));
  const base = new URL(testPostgresUrl());
  base.searchParams.set('options', `-c search_path=${name}`);
  let dropped = false;
  return {
    name,
    url: base.toString(),
    async drop() {
      if (dropped) return;
      dropped = true;
      await withAdmin((c) => c.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`));
    },
  };
}
