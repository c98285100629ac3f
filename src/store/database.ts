// Opens the Kysely database: SQLite (a file in the data folder) by default, PostgreSQL when
// DATABASE_URL is set. Only store/ touches SQL.
import { join } from 'node:path';
import SQLite from 'better-sqlite3';
import pg from 'pg';
import { createHash } from 'node:crypto';
import { Kysely, PostgresDialect, SqliteDialect, sql, type Compilable, type CompiledQuery } from 'kysely';
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

/** The SQLite database file of a data folder. */
export const sqliteFile = (dataDir: string): string => join(dataDir, 'lipsync.sqlite');

export function openDatabase(opts: {
  databaseUrl: string | null;
  dataDir: string;
  /** Told when the server ends an idle connection of the pool (a restart, a failover, a timeout). */
  onIdleConnectionLost?: (err: Error) => void;
}): Db {
  if (opts.databaseUrl) {
    // Keep BIGINT/NUMERIC as numbers: our sizes stay far below 2^53.
    pg.types.setTypeParser(20, (v) => Number(v));
    const pool = new pg.Pool({ connectionString: opts.databaseUrl, max: 10 });
    pool.on('connect', preparesHotQueries);
    // The pool drops such a connection and opens another when needed; without a listener the error
    // would be thrown as an uncaught exception and stop the process.
    pool.on('error', (err) => opts.onIdleConnectionLost?.(err));
    const kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
    pgPools.set(kysely, pool);
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
  const file = sqliteFile(opts.dataDir);
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
  sqliteHandles.set(kysely, sqlite);
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

/** SQL text of the queries compiled once (compileOnce) -> the name of their PostgreSQL prepared statement. */
const hotStatements = new Map<string, string>();

/**
 * On PostgreSQL, the hot queries run as named prepared statements: each connection parses and plans
 * them once instead of on every request (the database shares the machine's cores with the service).
 * Only compileOnce's queries are named, so their number stays fixed.
 */
function preparesHotQueries(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...args: unknown[]) => unknown;
  (client as { query: unknown }).query = (text: unknown, ...rest: unknown[]) => {
    const name = typeof text === 'string' ? hotStatements.get(text) : undefined;
    if (name === undefined || !Array.isArray(rest[0])) return query(text, ...rest);
    return query({ name, text, values: rest[0] }, ...rest.slice(1));
  };
}

/** A raw row as better-sqlite3 would give it as an object: keys in column order, a later duplicate wins. */
function rowObject(columns: readonly string[], values: readonly unknown[]): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (let i = 0; i < columns.length; i++) row[columns[i]!] = values[i];
  return row;
}

/** The better-sqlite3 handle under each SQLite Kysely instance (compileOnce runs on it directly). */
const sqliteHandles = new WeakMap<Kysely<Database>, SQLite.Database>();
/** The pg pool under each PostgreSQL Kysely instance (compileOnce runs on it directly). */
const pgPools = new WeakMap<Kysely<Database>, pg.Pool>();

/**
 * SQLite's stamp of the committed state this connection sees: [rows changed through this connection
 * (total_changes(), triggers included), data_version (changes whenever another connection, in this
 * process or another, commits)]. Equal stamps mean no row has changed. null while a transaction holds
 * the connection: its uncommitted writes are not the state other readers see.
 */
export type ChangeStamp = () => readonly [number, number] | null;

/** Whether this Kysely instance runs on PostgreSQL (through openDatabase). */
export function isPostgres(db: Kysely<Database>): boolean {
  return pgPools.has(db);
}

/** How long one reading of data_version stands for the requests of the same event-loop turn. */
export const DATA_VERSION_REUSE_MS = 1;

/**
 * The change stamp of a SQLite database; null on PostgreSQL, which has no such cheap exact stamp.
 *
 * total_changes() is read on every call: it takes no lock (0.05 µs), and it alone moves on this
 * connection's own commits. data_version needs SQLite's shared lock on the WAL index, two fcntl calls
 * that cost about 5 µs on a virtual machine (bench/results/2026-history.md), so one reading serves every call of
 * the same event-loop turn, for at most DATA_VERSION_REUSE_MS (ADR 13). A request whose bytes arrive
 * after another process's commit is read in a later turn than any stamp taken before that commit (a
 * turn reads only the sockets that were ready when it began polling), so it still sees the commit.
 */
export function changeStamp(db: Kysely<Database>): ChangeStamp | null {
  const handle = sqliteHandles.get(db);
  if (handle === undefined) return null;
  let changes: SQLite.Statement | undefined;
  let dataVersion: SQLite.Statement | undefined;
  let version = -1;
  let readAt = 0;
  let forgetting = false;
  const forget = () => {
    version = -1;
    forgetting = false;
  };
  return () => {
    if (handle.inTransaction) return null;
    changes ??= handle.prepare('select total_changes()').pluck(true);
    const now = performance.now();
    if (version < 0 || now - readAt > DATA_VERSION_REUSE_MS) {
      dataVersion ??= handle.prepare('pragma data_version').pluck(true);
      version = dataVersion.get() as number;
      readAt = now;
      if (!forgetting) {
        forgetting = true;
        setImmediate(forget).unref();
      }
    }
    return [changes.get() as number, version];
  };
}

export interface CompiledOnce<P extends string, R> {
  /** Runs the query with these parameter values, on the database or inside a transaction. */
  run(db: Kysely<Database>, values: Readonly<Record<P, unknown>>): Promise<R[]>;
}

/**
 * A select built and compiled by Kysely once; each run only substitutes its parameters. Building and
 * compiling a query costs more CPU than SQLite takes to run a point lookup (bench/results/2026-history.md). The
 * builder gets a placeholder value per named parameter; they are found again among the compiled
 * parameters, so the order of the parameters in the SQL does not matter.
 *
 * On SQLite, outside a transaction, the prepared statement runs directly on the better-sqlite3
 * handle: it is synchronous, so it cannot interleave with another query, and Kysely's connection lock
 * and result plumbing are skipped. While a Kysely transaction holds the connection (it spans awaits)
 * the run goes through Kysely and waits its turn, so it never reads that transaction's uncommitted rows.
 * On PostgreSQL, outside a transaction, it runs on a connection of the pool as the named prepared
 * statement, without Kysely's connection provider and result layers (bench/results/2026-history.md, issue 15);
 * the rows are the ones Kysely would return. Inside a transaction it goes through Kysely on the
 * transaction's connection.
 */
export function compileOnce<P extends string, R>(
  db: Kysely<Database>,
  names: readonly P[],
  build: (db: Kysely<Database>, param: Readonly<Record<P, string>>) => Compilable<R>,
): CompiledOnce<P, R> {
  const placeholders = Object.fromEntries(names.map((n) => [n, `\u0000compileOnce:${n}`])) as Record<
    P,
    string
  >;
  const compiled: CompiledQuery<R> = build(db, placeholders).compile();
  const byPlaceholder = new Map(names.map((n) => [placeholders[n], n]));
  const slots = compiled.parameters.map((v) => (typeof v === 'string' ? byPlaceholder.get(v) : undefined));
  for (const n of names) {
    if (!slots.includes(n)) throw new Error(`compileOnce: parameter ${n} is not used by the query`);
  }
  const name = `hot_${createHash('sha1').update(compiled.sql).digest('hex').slice(0, 16)}`;
  hotStatements.set(compiled.sql, name);
  const handle = sqliteHandles.get(db);
  const pool = pgPools.get(db);
  let direct: SQLite.Statement | undefined;
  let columns: readonly string[] = [];
  return {
    run: async (target, values) => {
      const parameters = compiled.parameters.map((v, i) => {
        const slot = slots[i];
        return slot === undefined ? v : values[slot];
      });
      if (handle !== undefined && target === db && !handle.inTransaction) {
        if (direct === undefined) {
          // Rows as arrays, made objects here: better-sqlite3 builds a wide row object (the key +
          // organization + generation join has 47 columns) slower than this loop does.
          direct = handle.prepare(compiled.sql).raw(true);
          columns = direct.columns().map((c) => c.name);
        }
        return (direct.all(...parameters) as unknown[][]).map((values) => rowObject(columns, values) as R);
      }
      if (pool !== undefined && target === db) {
        // Outside a transaction: a connection of the pool, as Kysely would take, without its layers.
        const res = await pool.query({ name, text: compiled.sql, values: parameters });
        return res.rows as R[];
      }
      const res = await target.executeQuery<R>({ ...compiled, parameters });
      return res.rows;
    },
  };
}
