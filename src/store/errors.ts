// Database errors by their codes (never their message text): SQLite's extended result codes as
// better-sqlite3 reports them, and PostgreSQL's SQLSTATE.

/** A row that a unique index (or primary key) already holds. */
export function isUniqueViolation(err: unknown): boolean {
  if (typeof err !== 'object' || err === null || !('code' in err)) return false;
  const code = (err as { code: unknown }).code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === '23505';
}
