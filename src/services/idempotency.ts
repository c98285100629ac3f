// Idempotent creation as a concern any create endpoint uses with its own scope (generations today,
// text-to-speech jobs and others next): claim the key, create once, replay the same answer, refuse a
// different body under the same key, and resolve claims left behind by requests that died.
import type { Transaction } from 'kysely';
import type { Store } from '../store/index.js';
import type { Database } from '../store/schema.js';
import { AppError, type AppErrorExtras } from '../domain/errors.js';
import { decideReplay, IDEMPOTENCY_RETENTION_MS, type IdempotencyRecord } from '../domain/idempotency.js';

/** What a create does with its claim: name the resource before committing, bind it in the commit. */
export interface IdempotencyClaim {
  /** Records the id the resource will get, before its transaction (a dead commit can name it). */
  attach(resourceId: string): Promise<void>;
  /** Binds the key to the resource, inside the transaction that creates it. */
  complete(trx: Transaction<Database>, resourceId: string): Promise<void>;
}

/** The commit of a resource's insert failed: it may or may not have been stored. */
export class CommitOutcomeUnknown extends Error {
  constructor(
    readonly resourceId: string,
    cause: unknown,
  ) {
    super(`the commit of ${resourceId} failed: ${(cause as Error)?.message ?? String(cause)}`, { cause });
    this.name = 'CommitOutcomeUnknown';
  }
}

export interface IdempotentCreate<T> {
  readonly organizationId: string;
  readonly scope: string;
  readonly key: string | null;
  readonly fingerprint: string;
  /** The resource a replay answers with, or null when it does not exist (never did, or deleted). */
  load(resourceId: string): Promise<T | null>;
  create(claim: IdempotencyClaim | null): Promise<T>;
  /** How a response names the resource (e.g. { generationId }). */
  describe(resourceId: string | null): AppErrorExtras;
}

export class IdempotencyService {
  constructor(private readonly store: Store) {}

  async run<T>(op: IdempotentCreate<T>): Promise<{ value: T; replayed: boolean }> {
    const { key } = op;
    if (!key) return { value: await op.create(null), replayed: false };
    if ((await this.store.settings.get('idempotency_disabled')) === '1')
      throw new AppError('IDEMPOTENCY_UNAVAILABLE', { headers: { 'Retry-After': '30' } });
    const fresh = this.record(op);
    let claimed: boolean;
    try {
      claimed = await this.store.idempotency.claim(fresh);
    } catch {
      throw new AppError('IDEMPOTENCY_UNAVAILABLE', { headers: { 'Retry-After': '5' } });
    }
    if (!claimed) {
      const replayed = await this.replay(op, fresh);
      if (replayed !== 'take_over') return { value: replayed, replayed: true };
    }
    return { value: await this.createClaimed(op), replayed: false };
  }

  private record(op: IdempotentCreate<unknown>): IdempotencyRecord {
    const now = new Date();
    return {
      organizationId: op.organizationId,
      scope: op.scope,
      key: op.key as string,
      fingerprint: op.fingerprint,
      state: 'pending',
      resourceId: null,
      createdAt: now.toISOString(),
      expiresAt: new Date(now.getTime() + IDEMPOTENCY_RETENTION_MS).toISOString(),
    };
  }

  private async createClaimed<T>(op: IdempotentCreate<T>): Promise<T> {
    const { organizationId: org, scope } = op;
    const key = op.key as string;
    try {
      return await op.create({
        attach: (id) => this.store.idempotency.attach(org, scope, key, id),
        complete: (trx, id) =>
          this.store.idempotency.complete(
            trx,
            org,
            scope,
            key,
            id,
            new Date(Date.now() + IDEMPOTENCY_RETENTION_MS).toISOString(),
          ),
      });
    } catch (err) {
      if (err instanceof CommitOutcomeUnknown) {
        // We cannot tell whether the insert committed: the key stays bound (it names the resource).
        throw new AppError('IDEMPOTENCY_OUTCOME_UNKNOWN', {
          ...op.describe(err.resourceId),
          headers: { 'Retry-After': '2' },
        });
      }
      // Refused, or failed before the commit (rolled back): nothing was created, so the key is
      // released and the client may retry with the same key (a 5xx stays a 5xx).
      await this.store.idempotency.release(org, scope, key).catch(() => undefined);
      throw err;
    }
  }

  private async replay<T>(op: IdempotentCreate<T>, fresh: IdempotencyRecord): Promise<T | 'take_over'> {
    const existing = await this.store.idempotency.find(op.organizationId, op.scope, op.key as string);
    if (!existing) throw new AppError('IDEMPOTENCY_IN_PROGRESS', { headers: { 'Retry-After': '2' } });
    const d = decideReplay(existing, op.fingerprint, Date.now());
    switch (d.kind) {
      case 'conflict':
        throw new AppError('IDEMPOTENCY_KEY_CONFLICT');
      case 'in_progress':
        throw new AppError('IDEMPOTENCY_IN_PROGRESS', { headers: { 'Retry-After': '2' } });
      case 'outcome_unknown':
      case 'expired': {
        // The request that claimed the key died. If its resource exists, its commit landed: bind it.
        const found = d.resourceId ? await op.load(d.resourceId) : null;
        if (found && d.resourceId) {
          await this.store.idempotency.markDone(op.organizationId, op.scope, existing.key, d.resourceId);
          return found;
        }
        if (d.kind === 'outcome_unknown')
          throw new AppError('IDEMPOTENCY_OUTCOME_UNKNOWN', {
            ...op.describe(d.resourceId),
            headers: { 'Retry-After': '2' },
          });
        // Expired: nothing was created under it; this request starts afresh.
        if (await this.store.idempotency.takeOver(existing, fresh)) return 'take_over';
        throw new AppError('IDEMPOTENCY_IN_PROGRESS', { headers: { 'Retry-After': '2' } });
      }
      case 'replay': {
        const found = await op.load(d.resourceId);
        if (found) return found;
        throw new AppError('IDEMPOTENCY_ORIGINAL_DELETED', op.describe(d.resourceId));
      }
    }
  }
}
