import type { Kysely, Selectable } from 'kysely';
import type { ApiKeyTable, Database } from './schema.js';
import type { Role } from '../domain/api-keys.js';
import { toOrganization, type Organization } from './organizations.js';

export interface ApiKeyRecord {
  id: string;
  organizationId: string;
  name: string;
  prefix: string;
  keyHash: string;
  role: Role;
  createdByKeyId: string | null;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
  revokedAt: string | null;
}

function toRecord(r: Selectable<ApiKeyTable>): ApiKeyRecord {
  return {
    id: r.id,
    organizationId: r.organization_id,
    name: r.name,
    prefix: r.prefix,
    keyHash: r.key_hash,
    role: r.role as Role,
    createdByKeyId: r.created_by_key_id,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
    expiresAt: r.expires_at,
    revokedAt: r.revoked_at,
  };
}

export class ApiKeyRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(k: ApiKeyRecord): Promise<void> {
    await this.db
      .insertInto('api_keys')
      .values({
        id: k.id,
        organization_id: k.organizationId,
        name: k.name,
        prefix: k.prefix,
        key_hash: k.keyHash,
        role: k.role,
        created_by_key_id: k.createdByKeyId,
        created_at: k.createdAt,
        last_used_at: k.lastUsedAt,
        expires_at: k.expiresAt,
        revoked_at: k.revokedAt,
      })
      .execute();
  }

  async findByHash(hash: string): Promise<ApiKeyRecord | null> {
    const r = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('key_hash', '=', hash)
      .executeTakeFirst();
    return r ? toRecord(r) : null;
  }

  /** The key and its organization in one round trip (the authentication hot path). */
  async findByHashWithOrganization(
    hash: string,
  ): Promise<{ key: ApiKeyRecord; organization: Organization } | null> {
    const r = await this.db
      .selectFrom('api_keys as k')
      .innerJoin('organizations as o', 'o.id', 'k.organization_id')
      .selectAll('k')
      .select([
        'o.name as o_name',
        'o.plan as o_plan',
        'o.billing as o_billing',
        'o.concurrency_limit as o_concurrency_limit',
        'o.flags as o_flags',
        'o.draft as o_draft',
        'o.webhook_secret as o_webhook_secret',
        'o.created_at as o_created_at',
        'o.updated_at as o_updated_at',
      ])
      .where('k.key_hash', '=', hash)
      .executeTakeFirst();
    if (!r) return null;
    const organization = toOrganization({
      id: r.organization_id,
      name: r.o_name,
      plan: r.o_plan,
      billing: r.o_billing,
      concurrency_limit: r.o_concurrency_limit,
      flags: r.o_flags,
      draft: r.o_draft,
      webhook_secret: r.o_webhook_secret,
      created_at: r.o_created_at,
      updated_at: r.o_updated_at,
    });
    return { key: toRecord(r), organization };
  }

  async findById(id: string): Promise<ApiKeyRecord | null> {
    const r = await this.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
    return r ? toRecord(r) : null;
  }

  async listByOrganization(organizationId: string): Promise<ApiKeyRecord[]> {
    const rows = await this.db
      .selectFrom('api_keys')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .orderBy('created_at')
      .orderBy('id')
      .execute();
    return rows.map(toRecord);
  }

  async rename(id: string, name: string): Promise<void> {
    await this.db.updateTable('api_keys').set({ name }).where('id', '=', id).execute();
  }

  async revoke(id: string, at: string): Promise<void> {
    await this.db
      .updateTable('api_keys')
      .set({ revoked_at: at })
      .where('id', '=', id)
      .where('revoked_at', 'is', null)
      .execute();
  }

  async touch(id: string, at: string): Promise<void> {
    await this.db.updateTable('api_keys').set({ last_used_at: at }).where('id', '=', id).execute();
  }
}
