// Opens the Kysely database: SQLite (a file in the data folder) by default, PostgreSQL when
// DATABASE_URL is set. Only store/ touches SQL.
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { Kysely, PostgresDialect, SqliteDialect, sql } from 'kysely';
import type { Database } from './schema.js';
import { ensurePrivateFileSync, tightenFileSync } from '../private-files.js';

export type Dialect = 'sqlite' | 'postgres';

export interface Db {
  readonly kysely: Kysely<Database>;
  readonly dialect: Dialect;
  /** The pg pool when on PostgreSQL (LISTEN/NOTIFY needs its own client). */
  readonly pgPool: pg.Pool | null;
  /** One round trip to the database (health checks). */
  ping(): Promise<void>;
  close(): Promise<void>;
}

async function ping(kysely: Kysely<Database>): Promise<void> {
  await sql`select 1`.execute(kysely);
}

export function openDatabase(opts: { databaseUrl: string | null; dataDir: string }): Db {
  if (opts.databaseUrl) {
    // Keep BIGINT/NUMERIC as numbers: our sizes stay far below 2^53.
    pg.types.setTypeParser(20, (v) => Number(v));
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: 10 });
    const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    return {
      kysely,
      dialect: 'postgres',
      pgPool: pool,
      ping: () => ping(kysely),
      close: () => kysely.destroy(),
    };
  }
  // The database file is created 0600 (in a 0700 folder when we create it) before SQLite opens it;
  // SQLite gives its -wal and -shm files the mode of the database file.
  const file = join(opts.dataDir, 'lipsync.sqlite');
  ensurePrivateFileSync(file);
  const sqlite = new SQLite(file);
  sqlite.pragma('journal_mode = WAL');
  for (const extra of [`${file}-wal`, `${file}-shm`]) tightenFileSync(extra);
  sqlite.pragma('busy_timeout = 5000');
  sqlite.pragma('foreign_keys = ON');
  sqlite.pragma('synchronous = NORMAL');
  const kysely = new Kysely<Database>({
    dialect: new SqliteDialect({ database: withStatementCache(sqlite) }),
  });
  return { kysely, dialect: 'sqlite', pgPool: null, ping: () => ping(kysely), close: () => kysely.destroy() };
}

/**
 * Kysely prepares every query anew; on a hot path that costs more than running it. Reuse prepared
 * statements by SQL text (bounded). Safe because no code streams results (a streaming statement
 * could not be reused while its iterator is open).
 */
function withStatementCache(db: SQLite.Database, max = 500): SQLite.Database {
  const cache = new Map<string, SQLite.Statement>();
  const prepare = db.prepare.bind(db);
  return new Proxy(db, {
    get(target, prop, receiver) {
      if (prop !== 'prepare') return Reflect.get(target, prop, receiver);
      return (sqlText: string) => {
        let stmt = cache.get(sqlText);
        if (stmt) {
          cache.delete(sqlText);
        } else {
          stmt = prepare(sqlText);
          if (cache.size >= max) cache.delete(cache.keys().next().value as string);
        }
        cache.set(sqlText, stmt);
        return stmt;
      };
    },
  });
}
