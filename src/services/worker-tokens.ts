// Worker tokens: what a remote worker (`lipsync worker --server URL --token T`) presents on every call
// of the worker protocol. Created, listed and revoked by an operator on the database side; the token is
// shown once and only its SHA-256 is stored. A revoked token is refused on its next call.
import { randomBytes, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.js';
import { WorkerTokenRepository, type WorkerTokenRecord } from '../store/worker-tokens.js';
import { hashApiKey } from '../domain/api-keys.js';
import { AppError } from '../domain/errors.js';

export const WORKER_TOKEN_PREFIX = 'lwt_';

export function generateWorkerToken(): string {
  return WORKER_TOKEN_PREFIX + randomBytes(32).toString('base64url');
}

export function looksLikeWorkerToken(value: string): boolean {
  return (
    value.startsWith(WORKER_TOKEN_PREFIX) &&
    value.length >= WORKER_TOKEN_PREFIX.length + 43 &&
    value.length <= 200
  );
}

export function workerTokenView(t: WorkerTokenRecord): Record<string, unknown> {
  return {
    id: t.id,
    name: t.name,
    prefix: t.prefix,
    createdAt: t.createdAt,
    lastUsedAt: t.lastUsedAt,
    revokedAt: t.revokedAt,
    status: t.revokedAt ? 'revoked' : 'active',
  };
}

export class WorkerTokenService {
  private readonly repo: WorkerTokenRepository;
  // last_used_at is written at most once a minute per token.
  private readonly touched = new Map<string, number>();

  constructor(db: Kysely<Database>) {
    this.repo = new WorkerTokenRepository(db);
  }

  async create(name?: string | null): Promise<{ record: WorkerTokenRecord; token: string }> {
    const token = generateWorkerToken();
    const trimmed = (name ?? '').trim();
    const record: WorkerTokenRecord = {
      id: randomUUID(),
      name: trimmed === '' ? 'worker' : trimmed.slice(0, 200),
      prefix: token.slice(0, WORKER_TOKEN_PREFIX.length + 6),
      tokenHash: hashApiKey(token),
      createdAt: new Date().toISOString(),
      lastUsedAt: null,
      revokedAt: null,
    };
    await this.repo.insert(record);
    return { record, token };
  }

  list(): Promise<WorkerTokenRecord[]> {
    return this.repo.list();
  }

  async revoke(id: string): Promise<WorkerTokenRecord> {
    const t = await this.repo.findById(id);
    if (!t) throw new AppError('invalid_request', { status: 404, message: `worker token ${id} not found` });
    const at = t.revokedAt ?? new Date().toISOString();
    await this.repo.revoke(t.id, at);
    return { ...t, revokedAt: at };
  }

  /** The active token presented, or null (unknown, malformed or revoked). Read on every call. */
  async authenticate(raw: string | undefined): Promise<WorkerTokenRecord | null> {
    if (!raw || !looksLikeWorkerToken(raw)) return null;
    const t = await this.repo.findByHash(hashApiKey(raw));
    if (!t || t.revokedAt) return null;
    const now = Date.now();
    if (now - (this.touched.get(t.id) ?? 0) > 60_000) {
      this.touched.set(t.id, now);
      await this.repo.touch(t.id, new Date(now).toISOString()).catch(() => undefined);
    }
    return t;
  }
}
