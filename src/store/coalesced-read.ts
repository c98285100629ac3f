// On PostgreSQL every read is a round trip, and its cost in the service (the protocol messages, the
// row description, the pool) is most of what a polled GET costs (bench/results/2026-history.md, issue 15). Reads
// of one kind that start close together (requests that arrived together, or while the previous query
// of the kind was out) are sent as one query instead, each lookup answered from its row (ADR 14).
//
// Freshness is the same as one query per read: a read only ever joins a batch that has not been sent
// yet, so the query that answers it starts after the read did. A key revoked before a request arrived
// is refused by it, exactly as before. Equal lookups in one batch share one answer; answers are frozen.
import { deepFreeze } from './read-cache.js';

/** Lookups sent in one query at most; more start another batch. */
const MAX_BATCH = 256;
/**
 * Queries of one kind out at once. While they are, new lookups gather into the next batch: under load
 * the batches grow instead of the number of queries (measured with 10 clients: 4.5 lookups a query),
 * and the hot lookups never hold more than two of the pool's connections.
 */
const MAX_IN_FLIGHT = 2;

interface Pending<P, V> {
  readonly params: P;
  readonly waiters: { resolve: (v: V | null) => void; reject: (e: unknown) => void }[];
}

type Batch<P, V> = Map<string, Pending<P, V>>;

export class CoalescedRead<P, V extends object> {
  /** Batches not sent yet, oldest first; new lookups join the last one while it has room. */
  private readonly waiting: Batch<P, V>[] = [];
  private inFlight = 0;
  private scheduled = false;

  /**
   * `runBatch` answers every lookup of a batch in one query: the value for params[i] at index i, null
   * where there is none.
   */
  constructor(private readonly runBatch: (params: readonly P[]) => Promise<readonly (V | null)[]>) {}

  /** The value for `params`; `key` identifies equal lookups (they share one row of the batch). */
  read(key: string, params: P): Promise<V | null> {
    let batch = this.waiting.at(-1);
    if (batch === undefined || batch.size >= MAX_BATCH) {
      batch = new Map();
      this.waiting.push(batch);
    }
    if (!this.scheduled) {
      this.scheduled = true;
      // After the poll phase: every request whose bytes were read in this turn has joined by then.
      setImmediate(() => {
        this.scheduled = false;
        this.sendWaiting();
      });
    }
    let pending = batch.get(key);
    if (pending === undefined) {
      pending = { params, waiters: [] };
      batch.set(key, pending);
    }
    const waiters = pending.waiters;
    return new Promise((resolve, reject) => waiters.push({ resolve, reject }));
  }

  private sendWaiting(): void {
    while (this.inFlight < MAX_IN_FLIGHT && this.waiting.length > 0) this.send(this.waiting.shift()!);
  }

  private send(batch: Batch<P, V>): void {
    this.inFlight++;
    const entries = [...batch.values()];
    const settled = () => {
      this.inFlight--;
      this.sendWaiting();
    };
    let run: Promise<readonly (V | null)[]>;
    try {
      run = this.runBatch(entries.map((e) => e.params));
    } catch (err) {
      run = Promise.reject(err);
    }
    run.then(
      (values) => {
        settled();
        entries.forEach((e, i) => {
          const value = values[i] ?? null;
          // Shared by every waiter of this lookup (and frozen like the SQLite read cache's answers,
          // so that callers see the same kind of value on both databases).
          if (value !== null) deepFreeze(value);
          for (const w of e.waiters) w.resolve(value);
        });
      },
      (err: unknown) => {
        settled();
        for (const e of entries) for (const w of e.waiters) w.reject(err);
      },
    );
  }
}
