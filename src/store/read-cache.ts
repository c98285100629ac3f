// Results of hot reads (the key, its organization, a generation) kept while the database is provably
// unchanged, so that a client polling GET /v2/generate/{id} does not run the same join again and
// again. Validity is exact, not a time to live: every read first takes the database's change stamp
// (database.ts changeStamp), and all entries are dropped as soon as it differs from the one they were
// read under. Any committed write, by this process or another (a key revoked from the CLI or on
// another instance), changes the stamp, so an answer from here is always the one the query would give
// now. Where no exact stamp exists (PostgreSQL, or while a transaction holds the SQLite connection),
// nothing is cached and every read runs its query.
import type { ChangeStamp } from './database.js';

/** Entries kept at most; when full, the cache starts again empty (a stamp change empties it anyway). */
const MAX_ENTRIES = 10_000;

export class ReadCache<V extends object> {
  private changes = -1;
  private version = -1;
  private readonly entries = new Map<string, V>();

  constructor(private readonly stamp: ChangeStamp | null) {}

  /**
   * The value of `load()` for `key`, from the cache when the database has not changed since it was
   * read. Values are frozen (deeply) when kept: they are shared by every later reader. null is
   * never kept (an unknown key: caching guesses would only fill the cache).
   */
  async read(key: string, load: () => Promise<V | null>): Promise<V | null> {
    const before = this.stamp?.();
    if (!before) return load();
    if (before[0] !== this.changes || before[1] !== this.version) {
      this.entries.clear();
      this.changes = before[0];
      this.version = before[1];
    }
    const hit = this.entries.get(key);
    if (hit !== undefined) return hit;
    const value = await load();
    const after = this.stamp?.();
    // Kept only when nothing changed while it was read (it then is the state of `before`), and only
    // among entries of that same state: another read may have moved the cache on meanwhile.
    if (
      value !== null &&
      after &&
      after[0] === before[0] &&
      after[1] === before[1] &&
      this.changes === before[0] &&
      this.version === before[1]
    ) {
      if (this.entries.size >= MAX_ENTRIES) this.entries.clear();
      this.entries.set(key, deepFreeze(value));
    }
    return value;
  }
}

/** Freezes a plain value and everything in it (typed arrays excepted: they cannot be frozen). */
export function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value) || ArrayBuffer.isView(value))
    return value;
  Object.freeze(value);
  for (const v of Object.values(value as Record<string, unknown>)) deepFreeze(v);
  return value;
}
