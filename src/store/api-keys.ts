import { sql, type Kysely, type Selectable } from 'kysely';
import type { ApiKeyTable, Database, GenerationTable } from './schema.js';
import type { Role } from '../domain/api-keys.js';
import { toOrganization, type Organization } from './organizations.js';
import { toGeneration, type GenerationRecord } from './generations.js';
import { changeStamp, compileOnce, isPostgres } from './database.js';
import { ReadCache } from './read-cache.js';
import { CoalescedRead } from './coalesced-read.js';

const ORGANIZATION_COLUMNS = [
  'o.name as o_name',
  'o.plan as o_plan',
  'o.billing as o_billing',
  'o.concurrency_limit as o_concurrency_limit',
  'o.flags as o_flags',
  'o.draft as o_draft',
  'o.webhook_secret as o_webhook_secret',
  'o.created_at as o_created_at',
  'o.updated_at as o_updated_at',
] as const;

/** Every generation column, prefixed: the key's own columns have the same names. */
const GENERATION_COLUMNS = [
  'g.id as g_id',
  'g.organization_id as g_organization_id',
  'g.project_id as g_project_id',
  'g.api_key_id as g_api_key_id',
  'g.model as g_model',
  'g.status as g_status',
  'g.source as g_source',
  'g.input as g_input',
  'g.resolved_input as g_resolved_input',
  'g.options as g_options',
  'g.segments as g_segments',
  'g.webhook_url as g_webhook_url',
  'g.output_file_name as g_output_file_name',
  'g.output_format as g_output_format',
  'g.output_key as g_output_key',
  'g.watermarked_key as g_watermarked_key',
  'g.output_url as g_output_url',
  'g.output_duration as g_output_duration',
  'g.progress as g_progress',
  'g.error as g_error',
  'g.error_code as g_error_code',
  'g.quality as g_quality',
  'g.dub as g_dub',
  'g.dub_audio_key as g_dub_audio_key',
  'g.still_key as g_still_key',
  'g.started_at as g_started_at',
  'g.finished_at as g_finished_at',
  'g.created_at as g_created_at',
  'g.updated_at as g_updated_at',
  'g.deleted_at as g_deleted_at',
] as const;

/** Named, not `k.*` (a prepared statement's columns must not change under it; see generations.ts). */
const KEY_COLUMNS = [
  'k.id',
  'k.organization_id',
  'k.name',
  'k.prefix',
  'k.key_hash',
  'k.role',
  'k.created_by_key_id',
  'k.created_by_user_id',
  'k.created_at',
  'k.last_used_at',
  'k.expires_at',
  'k.revoked_at',
] as const satisfies readonly `k.${keyof ApiKeyTable}`[];

type OrganizationColumns = {
  organization_id: string;
  o_name: string;
  o_plan: string;
  o_billing: string;
  o_concurrency_limit: number | null;
  o_flags: string;
  o_draft: number;
  o_webhook_secret: string;
  o_created_at: string;
  o_updated_at: string;
};

function organizationOf(r: OrganizationColumns): Organization {
  return toOrganization({
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
}

type GenerationColumns = { [K in keyof GenerationTable as `g_${K}`]: GenerationTable[K] | null };

/** The left-joined generation of a row, or null when none matched (its id is then null). */
function generationOf(r: GenerationColumns): GenerationRecord | null {
  if (r.g_id === null) return null;
  const g = r as { [K in keyof GenerationColumns]: NonNullable<GenerationColumns[K]> };
  return toGeneration({
    id: g.g_id,
    organization_id: g.g_organization_id,
    project_id: r.g_project_id,
    api_key_id: r.g_api_key_id,
    model: g.g_model,
    status: g.g_status,
    source: g.g_source,
    input: g.g_input,
    resolved_input: g.g_resolved_input,
    options: r.g_options,
    segments: r.g_segments,
    webhook_url: r.g_webhook_url,
    output_file_name: r.g_output_file_name,
    output_format: g.g_output_format,
    output_key: r.g_output_key,
    watermarked_key: r.g_watermarked_key,
    output_url: r.g_output_url,
    output_duration: r.g_output_duration,
    progress: g.g_progress,
    error: r.g_error,
    error_code: r.g_error_code,
    quality: r.g_quality,
    dub: r.g_dub,
    dub_audio_key: r.g_dub_audio_key,
    still_key: r.g_still_key,
    started_at: r.g_started_at,
    finished_at: r.g_finished_at,
    created_at: g.g_created_at,
    updated_at: g.g_updated_at,
    deleted_at: r.g_deleted_at,
  });
}

export interface ApiKeyRecord {
  id: string;
  organizationId: string;
  name: string;
  prefix: string;
  keyHash: string;
  role: Role;
  createdByKeyId: string | null;
  createdByUserId: string | null;
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
    createdByUserId: r.created_by_user_id,
    createdAt: r.created_at,
    lastUsedAt: r.last_used_at,
    expiresAt: r.expires_at,
    revokedAt: r.revoked_at,
  };
}

export interface KeyWithOrganization {
  readonly key: ApiKeyRecord;
  readonly organization: Organization;
}

export interface KeyWithGeneration extends KeyWithOrganization {
  readonly generation: GenerationRecord | null;
}

/** The lookups of one coalesced query (PostgreSQL), numbered from 1 in the order they were asked. */
function requestedKeys(hashes: string) {
  return sql<{
    n: number;
    hash: string;
  }>`(select * from unnest(${hashes}::text[]) with ordinality as u(hash, n))`.as('q');
}

function requestedKeysAndGenerations(hashes: string, generationIds: string) {
  return sql<{
    n: number;
    hash: string;
    generation_id: string;
  }>`(select * from unnest(${hashes}::text[], ${generationIds}::text[]) with ordinality as u(hash, generation_id, n))`.as(
    'q',
  );
}

/** Answers in the order of the lookups (row n answers lookup n); null where no key matched. */
function inLookupOrder<R extends { n: number }, V>(
  count: number,
  rows: readonly R[],
  of: (r: R) => V,
): (V | null)[] {
  const out: (V | null)[] = new Array<V | null>(count).fill(null);
  for (const r of rows) out[r.n - 1] = of(r);
  return out;
}

type KeyColumns = Selectable<ApiKeyTable> & OrganizationColumns;

function keyWithOrganizationOf(r: KeyColumns): KeyWithOrganization {
  return { key: toRecord(r), organization: organizationOf(r) };
}

function keyWithGenerationOf(r: KeyColumns & GenerationColumns): KeyWithGeneration {
  return { key: toRecord(r), organization: organizationOf(r), generation: generationOf(r) };
}

export class ApiKeyRepository {
  private readonly keyWithOrganization;
  private readonly keyWithGeneration;
  /** SQLite: answers kept while the database is unchanged (read-cache.ts). */
  private readonly withOrganization: ReadCache<KeyWithOrganization>;
  private readonly withGeneration: ReadCache<KeyWithGeneration>;
  /** PostgreSQL: lookups of one event-loop turn sent as one query (coalesced-read.ts). */
  private readonly coalesced: {
    readonly withOrganization: CoalescedRead<{ hash: string }, KeyWithOrganization>;
    readonly withGeneration: CoalescedRead<{ hash: string; generationId: string }, KeyWithGeneration>;
  } | null = null;

  constructor(private readonly db: Kysely<Database>) {
    const stamp = changeStamp(db);
    this.withOrganization = new ReadCache(stamp);
    this.withGeneration = new ReadCache(stamp);
    this.keyWithOrganization = compileOnce(db, ['hash'], (q, p) =>
      q
        .selectFrom('api_keys as k')
        .innerJoin('organizations as o', 'o.id', 'k.organization_id')
        .select(KEY_COLUMNS)
        .select(ORGANIZATION_COLUMNS)
        .where('k.key_hash', '=', p.hash),
    );
    this.keyWithGeneration = compileOnce(db, ['hash', 'generationId'], (q, p) =>
      q
        .selectFrom('api_keys as k')
        .innerJoin('organizations as o', 'o.id', 'k.organization_id')
        .leftJoin('generations as g', (join) =>
          join
            .onRef('g.organization_id', '=', 'k.organization_id')
            .on('g.id', '=', p.generationId)
            .on('g.deleted_at', 'is', null),
        )
        .select(KEY_COLUMNS)
        .select(ORGANIZATION_COLUMNS)
        .select(GENERATION_COLUMNS)
        .where('k.key_hash', '=', p.hash),
    );
    if (isPostgres(db)) this.coalesced = coalescedLookups(db);
  }

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
        created_by_user_id: k.createdByUserId,
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

  /**
   * The key and its organization in one round trip (the authentication hot path). On SQLite answered
   * from the read cache while the database is unchanged (read-cache.ts), on PostgreSQL by one query
   * for the lookups of the same event-loop turn (coalesced-read.ts): either way a revoked key is
   * refused at once on every instance.
   */
  async findByHashWithOrganization(hash: string): Promise<KeyWithOrganization | null> {
    if (this.coalesced) return this.coalesced.withOrganization.read(hash, { hash });
    return this.withOrganization.read(hash, async () => {
      const [r] = await this.keyWithOrganization.run(this.db, { hash });
      return r ? keyWithOrganizationOf(r) : null;
    });
  }

  /**
   * The key, its organization and one of its organization's generations (null when there is no such
   * live generation) in one round trip: GET /v2/generate/{id} reads nothing else. Cached like
   * findByHashWithOrganization.
   */
  async findByHashWithGeneration(hash: string, generationId: string): Promise<KeyWithGeneration | null> {
    const key = `${hash}/${generationId}`;
    if (this.coalesced) return this.coalesced.withGeneration.read(key, { hash, generationId });
    return this.withGeneration.read(key, async () => {
      const [r] = await this.keyWithGeneration.run(this.db, { hash, generationId });
      return r ? keyWithGenerationOf(r) : null;
    });
  }

  async findById(id: string): Promise<ApiKeyRecord | null> {
    const r = await this.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
    return r ? toRecord(r) : null;
  }

  async listByOrganization(organizationId: string, trx: Kysely<Database> = this.db): Promise<ApiKeyRecord[]> {
    const rows = await trx
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

  async revoke(id: string, at: string, trx: Kysely<Database> = this.db): Promise<void> {
    await trx
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

/**
 * The PostgreSQL lookups of many keys (and generations) at once: one query per batch. Plain joins,
 * not a LATERAL subquery per lookup: PostgreSQL then keeps one generic plan for the prepared statement
 * (measured: a LATERAL form looked dearer to the planner than its custom plans and was planned again
 * on every run, 150 us of the database's CPU each time).
 */
function coalescedLookups(db: Kysely<Database>) {
  const keysWithOrganization = compileOnce(db, ['hashes'], (q, p) =>
    q
      .selectFrom(requestedKeys(p.hashes))
      .innerJoin('api_keys as k', 'k.key_hash', 'q.hash')
      .innerJoin('organizations as o', 'o.id', 'k.organization_id')
      .select('q.n')
      .select(KEY_COLUMNS)
      .select(ORGANIZATION_COLUMNS),
  );
  const keysWithGeneration = compileOnce(db, ['hashes', 'generationIds'], (q, p) =>
    q
      .selectFrom(requestedKeysAndGenerations(p.hashes, p.generationIds))
      .innerJoin('api_keys as k', 'k.key_hash', 'q.hash')
      .innerJoin('organizations as o', 'o.id', 'k.organization_id')
      .leftJoin('generations as g', (join) =>
        join
          .onRef('g.organization_id', '=', 'k.organization_id')
          .onRef('g.id', '=', 'q.generation_id')
          .on('g.deleted_at', 'is', null),
      )
      .select('q.n')
      .select(KEY_COLUMNS)
      .select(ORGANIZATION_COLUMNS)
      .select(GENERATION_COLUMNS),
  );
  return {
    withOrganization: new CoalescedRead<{ hash: string }, KeyWithOrganization>(async (lookups) => {
      const rows = await keysWithOrganization.run(db, { hashes: lookups.map((l) => l.hash) });
      return inLookupOrder(lookups.length, rows, keyWithOrganizationOf);
    }),
    withGeneration: new CoalescedRead<{ hash: string; generationId: string }, KeyWithGeneration>(
      async (lookups) => {
        const rows = await keysWithGeneration.run(db, {
          hashes: lookups.map((l) => l.hash),
          generationIds: lookups.map((l) => l.generationId),
        });
        return inLookupOrder(lookups.length, rows, keyWithGenerationOf);
      },
    ),
  };
}
