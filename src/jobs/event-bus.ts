// Wakes long-poll waiters the moment a resource changes state, and idle workers the moment work is
// queued. One listener set per process (no polling loop per waiter): PostgreSQL LISTEN/NOTIFY reaches
// every process; on SQLite a single shared watcher notices changes written by other processes (e.g.
// `lipsync worker`), and idle workers in other processes poll.
import { EventEmitter } from 'node:events';
import type pg from 'pg';
import type { Logger } from 'pino';
import { PgListenConnection, pgNotify } from '../store/pg-channels.js';

const SUBJECT_CHANNEL = 'lipsync_subject';
const WORK_CHANNEL = 'lipsync_work';
/** Work announced for every kind (after a reconnect, when announcements may have been missed). */
export const ANY_KIND = '*';

/** Ids (and update times) of the given resources changed since a time: the SQLite cross-process feed. */
export type ChangeFeed = (sinceIso: string, ids: string[]) => Promise<{ id: string; updatedAt: string }[]>;

export interface EventBus {
  /** Announces that a resource changed (after the change is committed). */
  publish(subjectId: string): Promise<void>;
  /** Resolves when the resource changes, or after timeoutMs, or on abort. */
  waitForChange(subjectId: string, timeoutMs: number, signal?: AbortSignal): Promise<'changed' | 'timeout'>;
  waiterCount(): number;
  /** Tells idle workers, here and (on PostgreSQL) in other processes, that jobs of a kind are ready. */
  announceWork(kind: string): Promise<void>;
  /** Calls the listener with the kind (or ANY_KIND) whenever work is announced; returns an unsubscribe. */
  onWork(listener: (kind: string) => void): () => void;
  close(): Promise<void>;
}

abstract class BaseBus implements EventBus {
  protected readonly emitter = new EventEmitter();
  protected readonly work = new EventEmitter();
  protected waiting = new Map<string, number>();

  constructor() {
    this.emitter.setMaxListeners(0);
    this.work.setMaxListeners(0);
  }

  abstract publish(subjectId: string): Promise<void>;
  abstract announceWork(kind: string): Promise<void>;

  protected emitLocal(id: string): void {
    this.emitter.emit(id);
  }

  protected emitWork(kind: string): void {
    this.work.emit('work', kind);
  }

  onWork(listener: (kind: string) => void): () => void {
    this.work.on('work', listener);
    return () => this.work.off('work', listener);
  }

  waiterCount(): number {
    let n = 0;
    for (const v of this.waiting.values()) n += v;
    return n;
  }

  waitForChange(id: string, timeoutMs: number, signal?: AbortSignal): Promise<'changed' | 'timeout'> {
    return new Promise((resolve) => {
      this.waiting.set(id, (this.waiting.get(id) ?? 0) + 1);
      const done = (r: 'changed' | 'timeout') => {
        clearTimeout(timer);
        this.emitter.off(id, onChange);
        signal?.removeEventListener('abort', onAbort);
        const left = (this.waiting.get(id) ?? 1) - 1;
        if (left <= 0) this.waiting.delete(id);
        else this.waiting.set(id, left);
        resolve(r);
      };
      const onChange = () => done('changed');
      const onAbort = () => done('timeout');
      const timer = setTimeout(() => done('timeout'), timeoutMs);
      this.emitter.once(id, onChange);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  async close(): Promise<void> {
    this.emitter.removeAllListeners();
    this.work.removeAllListeners();
  }
}

export class SqliteEventBus extends BaseBus {
  private timer: NodeJS.Timeout | null = null;
  private lastCheck = new Date().toISOString();
  private checking = false;
  private readonly seen = new Map<string, string>();

  constructor(
    private readonly changedSince: ChangeFeed,
    private readonly intervalMs = 250,
  ) {
    super();
    this.timer = setInterval(() => void this.check(), this.intervalMs);
    this.timer.unref();
  }

  async publish(id: string): Promise<void> {
    this.emitLocal(id);
  }

  async announceWork(kind: string): Promise<void> {
    this.emitWork(kind);
  }

  /** One query for all waited ids: picks up changes other processes made to the same file. */
  private async check(): Promise<void> {
    if (this.checking || this.waiting.size === 0) return;
    this.checking = true;
    const since = this.lastCheck;
    this.lastCheck = new Date(Date.now() - 1000).toISOString();
    try {
      const ids = [...this.waiting.keys()];
      // Chunks keep each query under SQLite's bound-parameter limit however many clients wait.
      for (let i = 0; i < ids.length; i += 500) {
        for (const c of await this.changedSince(since, ids.slice(i, i + 500))) {
          // The look-back window overlaps ticks: wake only for a change not seen before.
          if (this.seen.get(c.id) === c.updatedAt) continue;
          this.seen.set(c.id, c.updatedAt);
          this.emitLocal(c.id);
        }
      }
      for (const id of this.seen.keys()) if (!this.waiting.has(id)) this.seen.delete(id);
    } catch {
      // the database may be busy; the next tick tries again
    } finally {
      this.checking = false;
    }
  }

  override async close(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await super.close();
  }
}

export const LISTENER_APPLICATION_NAME = 'lipsync-listener';

/**
 * LISTENs on its own connection, and keeps doing so: a lost connection is reopened with exponential
 * backoff (capped) for as long as it takes. After every (re)connection every waiter and every idle
 * worker is woken, since changes may have been missed while disconnected.
 */
export class PostgresEventBus extends BaseBus {
  private conn: PgListenConnection | null = null;
  private closed = false;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | null = null;
  /** 'listening' (with the backend pid) after each successful LISTEN. */
  readonly events = new EventEmitter();

  constructor(
    private readonly pool: pg.Pool,
    private readonly connectionString: string,
    private readonly logger: Logger,
    private readonly maxBackoffMs = 30_000,
  ) {
    super();
  }

  /** The first connection: a failure here is the caller's (the process should not start). */
  async start(): Promise<void> {
    await this.connect();
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const conn = await PgListenConnection.open(
      this.connectionString,
      [SUBJECT_CHANNEL, WORK_CHANNEL],
      LISTENER_APPLICATION_NAME,
      {
        onMessage: (channel, payload) => {
          if (channel === SUBJECT_CHANNEL) this.emitLocal(payload);
          else if (channel === WORK_CHANNEL) this.emitWork(payload);
        },
        onLost: (err) => this.lost(conn, err),
      },
    );
    if (this.closed) {
      await conn.close();
      return;
    }
    this.conn = conn;
    this.failures = 0;
    this.events.emit('listening', conn.pid);
    // Anything announced while we were away was missed: everyone looks again.
    for (const id of this.waiting.keys()) this.emitLocal(id);
    this.emitWork(ANY_KIND);
  }

  private lost(conn: PgListenConnection, err: Error | null): void {
    if (this.conn !== conn || this.closed) return;
    this.conn = null;
    this.logger.warn({ err }, 'event bus connection lost; reconnecting');
    for (const id of this.waiting.keys()) this.emitLocal(id);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.retryTimer) return;
    const delay = Math.min(this.maxBackoffMs, 250 * 2 ** Math.min(this.failures, 10));
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.connect().catch((err: unknown) => {
        this.failures++;
        this.logger.warn({ err, attempt: this.failures }, 'event bus reconnect failed; trying again');
        this.scheduleReconnect();
      });
    }, delay);
    this.retryTimer.unref();
  }

  async publish(id: string): Promise<void> {
    this.emitLocal(id);
    await pgNotify(this.pool, SUBJECT_CHANNEL, id);
  }

  async announceWork(kind: string): Promise<void> {
    this.emitWork(kind);
    await pgNotify(this.pool, WORK_CHANNEL, kind);
  }

  override async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    const c = this.conn;
    this.conn = null;
    await c?.close();
    await super.close();
    this.events.removeAllListeners();
  }
}
