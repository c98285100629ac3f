// Wakes long-poll waiters the moment a generation changes state. One listener set per process (no
// polling loop per waiter): PostgreSQL LISTEN/NOTIFY reaches every API instance; on SQLite a single
// shared watcher notices changes written by other processes (e.g. `lipsync worker`).
import { EventEmitter } from 'node:events';
import pg from 'pg';
import type { Logger } from 'pino';
import type { GenerationRepository } from '../store/generations.js';

const CHANNEL = 'lipsync_generation';

export interface GenerationEventBus {
  /** Announces that a generation changed (after the change is committed). */
  publish(generationId: string): Promise<void>;
  /** Resolves when the generation changes, or after timeoutMs, or on abort. */
  waitForChange(
    generationId: string,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<'changed' | 'timeout'>;
  waiterCount(): number;
  close(): Promise<void>;
}

abstract class BaseBus implements GenerationEventBus {
  protected readonly emitter = new EventEmitter();
  protected waiting = new Map<string, number>();

  constructor() {
    this.emitter.setMaxListeners(0);
  }

  abstract publish(generationId: string): Promise<void>;

  protected emitLocal(id: string): void {
    this.emitter.emit(id);
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
  }
}

export class SqliteEventBus extends BaseBus {
  private timer: NodeJS.Timeout | null = null;
  private lastCheck = new Date().toISOString();
  private checking = false;
  private readonly seen = new Map<string, string>();

  constructor(
    private readonly generations: GenerationRepository,
    private readonly intervalMs = 250,
  ) {
    super();
    this.timer = setInterval(() => void this.check(), this.intervalMs);
    this.timer.unref();
  }

  async publish(id: string): Promise<void> {
    this.emitLocal(id);
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
        for (const c of await this.generations.changedSince(since, ids.slice(i, i + 500))) {
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

export class PostgresEventBus extends BaseBus {
  private client: pg.Client | null = null;
  private closed = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly connectionString: string,
    private readonly logger: Logger,
  ) {
    super();
  }

  async start(): Promise<void> {
    if (this.closed) return;
    const client = new pg.Client({ connectionString: this.connectionString });
    client.on('notification', (msg) => {
      if (msg.channel === CHANNEL && msg.payload) this.emitLocal(msg.payload);
    });
    client.on('error', (err) => {
      this.logger.warn({ err }, 'event bus connection lost; reconnecting');
      this.client = null;
      // Wake every waiter so that none sleeps through a change missed while disconnected.
      for (const id of this.waiting.keys()) this.emitLocal(id);
      setTimeout(() => void this.start().catch(() => undefined), 1000).unref();
    });
    await client.connect();
    await client.query(`LISTEN ${CHANNEL}`);
    this.client = client;
  }

  async publish(id: string): Promise<void> {
    this.emitLocal(id);
    await this.pool.query('select pg_notify($1, $2)', [CHANNEL, id]);
  }

  override async close(): Promise<void> {
    this.closed = true;
    await this.client?.end().catch(() => undefined);
    await super.close();
  }
}
