// Use cases for API keys: create (the only time the full key is shown), list, rename, revoke, and
// authenticate. Role rules live in domain/api-keys.ts.
import { randomUUID } from 'node:crypto';
import type { Store } from '../store/index.js';
import type { ApiKeyRecord } from '../store/api-keys.js';
import type { Organization } from '../store/organizations.js';
import type { GenerationRecord } from '../store/generations.js';
import {
  canGrantRole,
  canManageKey,
  canSeeKey,
  displayPrefix,
  generateApiKey,
  hashApiKey,
  isKeyUsable,
  isRole,
  looksLikeApiKey,
  normaliseKeyName,
  type KeyActor,
  type Role,
} from '../domain/api-keys.js';
import { AppError } from '../domain/errors.js';

/** A signed-in user's web session (src/services/web-sessions.ts). */
export interface SessionCredential {
  readonly id: string;
  readonly userId: string;
  readonly email: string;
  readonly name: string;
  readonly expiresAt: string;
}

export interface AuthContext {
  readonly organization: Organization;
  /** The request's API key; null when a web session authenticated it. */
  readonly key: ApiKeyRecord | null;
  /** The request's web session (cookie); null when an API key authenticated it. */
  readonly session: SessionCredential | null;
  /** The key's role, or the signed-in user's role in the organization (spec rule 5 for both). */
  readonly role: Role;
  /**
   * A generation read in the same query as the key (GET /v2/generate/{id}): null when the
   * organization has no live generation of that id. Absent when none was asked for.
   */
  readonly preloaded?: { readonly generationId: string; readonly generation: GenerationRecord | null };
}

/** Who acts, for the role rules of domain/api-keys.ts. */
export function actorOf(auth: AuthContext): KeyActor {
  return { keyId: auth.key?.id ?? null, userId: auth.session?.userId ?? null, role: auth.role };
}

export interface CreatedKey {
  record: ApiKeyRecord;
  key: string;
}

export function apiKeyView(k: ApiKeyRecord) {
  return {
    id: k.id,
    organizationId: k.organizationId,
    name: k.name,
    prefix: k.prefix,
    role: k.role,
    createdByKeyId: k.createdByKeyId,
    createdByUserId: k.createdByUserId,
    createdAt: k.createdAt,
    lastUsedAt: k.lastUsedAt,
    expiresAt: k.expiresAt,
    revokedAt: k.revokedAt,
    status: k.revokedAt
      ? 'revoked'
      : k.expiresAt && new Date(k.expiresAt) <= new Date()
        ? 'expired'
        : 'active',
  };
}

export class ApiKeyService {
  // last_used_at is written at most once a minute per key so authentication stays read-only.
  private readonly touched = new Map<string, number>();

  constructor(private readonly store: Store) {}

  async create(opts: {
    organizationId: string;
    name?: string | null;
    role?: string;
    expiresAt?: string | null;
    actor?: KeyActor | null;
  }): Promise<CreatedKey> {
    const role = opts.role ?? 'member';
    if (!isRole(role))
      throw new AppError('invalid_request', {
        field: 'role',
        message: 'role must be owner, admin or member',
      });
    if (opts.actor && !canGrantRole(opts.actor.role, role)) {
      throw new AppError('forbidden', { message: `a ${opts.actor.role} key cannot create a ${role} key` });
    }
    if (opts.expiresAt && Number.isNaN(Date.parse(opts.expiresAt))) {
      throw new AppError('invalid_request', {
        field: 'expiresAt',
        message: 'expiresAt must be an ISO 8601 date-time',
      });
    }
    if (opts.expiresAt && Date.parse(opts.expiresAt) <= Date.now()) {
      throw new AppError('invalid_request', {
        field: 'expiresAt',
        message: 'expiresAt must be in the future',
      });
    }
    const org = await this.store.organizations.findById(opts.organizationId);
    if (!org)
      throw new AppError('invalid_request', {
        status: 404,
        field: 'org',
        message: `organization ${opts.organizationId} not found`,
      });
    // A key made with a key answers to the user behind the creating key (removing or demoting that
    // user revokes it too: MemberService).
    const parent =
      opts.actor?.keyId && !opts.actor.userId ? await this.store.apiKeys.findById(opts.actor.keyId) : null;
    const key = generateApiKey();
    const record: ApiKeyRecord = {
      id: randomUUID(),
      organizationId: org.id,
      name: normaliseKeyName(opts.name),
      prefix: displayPrefix(key),
      keyHash: hashApiKey(key),
      role: role as Role,
      createdByKeyId: opts.actor?.keyId ?? null,
      createdByUserId: opts.actor?.userId ?? parent?.createdByUserId ?? null,
      createdAt: new Date().toISOString(),
      lastUsedAt: null,
      expiresAt: opts.expiresAt ? new Date(opts.expiresAt).toISOString() : null,
      revokedAt: null,
    };
    await this.store.apiKeys.insert(record);
    return { record, key };
  }

  /** Keys the actor may see; without an actor (operator CLI) every key of the organization. */
  async list(organizationId: string, actor?: KeyActor | null): Promise<ApiKeyRecord[]> {
    const all = await this.store.apiKeys.listByOrganization(organizationId);
    return actor ? all.filter((k) => canSeeKey(actor, k)) : all;
  }

  async rename(
    id: string,
    name: string,
    scope?: { organizationId: string; actor: KeyActor },
  ): Promise<ApiKeyRecord> {
    const k = await this.findManageable(id, scope);
    const next = normaliseKeyName(name);
    await this.store.apiKeys.rename(k.id, next);
    return { ...k, name: next };
  }

  async revoke(id: string, scope?: { organizationId: string; actor: KeyActor }): Promise<ApiKeyRecord> {
    const k = await this.findManageable(id, scope);
    const at = k.revokedAt ?? new Date().toISOString();
    await this.store.apiKeys.revoke(k.id, at);
    this.touched.delete(k.id);
    return { ...k, revokedAt: at };
  }

  private async findManageable(
    id: string,
    scope?: { organizationId: string; actor: KeyActor },
  ): Promise<ApiKeyRecord> {
    const k = await this.store.apiKeys.findById(id);
    if (!k || (scope && k.organizationId !== scope.organizationId)) throw new AppError('api_key_not_found');
    if (scope && !canManageKey(scope.actor, k)) {
      // A key the actor may not even see is reported as missing, not as forbidden.
      if (!canSeeKey(scope.actor, k)) throw new AppError('api_key_not_found');
      throw new AppError('forbidden');
    }
    return k;
  }

  /**
   * Resolves an x-api-key value; null for anything that is not a usable key. With a generation id
   * (a UUID), that generation of the key's organization is read in the same query. Every answer is
   * the database's state after the call began (SQLite: the exact read cache; PostgreSQL: a query sent
   * after the call, shared with the calls of the same moment; ADR 13, ADR 14): revoking a key takes
   * effect at once on every instance.
   */
  async authenticate(raw: string | undefined, generationId?: string): Promise<AuthContext | null> {
    if (!raw || !looksLikeApiKey(raw)) return null;
    const hash = hashApiKey(raw);
    const found: {
      key: ApiKeyRecord;
      organization: Organization;
      generation?: GenerationRecord | null;
    } | null =
      generationId === undefined
        ? await this.store.apiKeys.findByHashWithOrganization(hash)
        : await this.store.apiKeys.findByHashWithGeneration(hash, generationId);
    const now = Date.now();
    if (!found || !isKeyUsable(found.key, new Date(now))) return null;
    const { key: record, organization } = found;
    const last = this.touched.get(record.id) ?? 0;
    if (now - last > 60_000) {
      this.touched.set(record.id, now);
      await this.store.apiKeys.touch(record.id, new Date(now).toISOString());
    }
    const auth = { organization, key: record, session: null, role: record.role };
    if (generationId === undefined || found.generation === undefined) return auth;
    return { ...auth, preloaded: { generationId, generation: found.generation } };
  }
}
