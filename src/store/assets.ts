// Asset records. Lists page by keyset (sort value, id) so pages stay stable while assets are added.
import {
  sql,
  type Expression,
  type ExpressionBuilder,
  type Kysely,
  type Selectable,
  type Transaction,
} from 'kysely';
import type { AssetTable, AssetUploadTable, Database } from './schema.js';
import type { AssetSortField, AssetType, AssetVisibility } from '../domain/assets.js';
import type { MediaProbe } from '../media/probe.js';

export interface AssetRecord {
  id: string;
  organizationId: string;
  projectId: string | null;
  name: string;
  type: AssetType;
  size: number;
  format: string | null;
  durationSeconds: number | null;
  width: number | null;
  height: number | null;
  storageKey: string;
  contentType: string;
  visibility: AssetVisibility;
  inputType: string;
  createdByKeyId: string | null;
  createdAt: string;
  updatedAt: string;
  /** SHA-256 of the content, lower-case hex; null (or left out) where unknown. */
  contentSha256?: string | null;
  /** What ffprobe read from the stored file when it was stored; null (or left out) where unknown. */
  probe?: MediaProbe | null;
}

/** The stored probe, or null where there is none or it is unreadable (the file is probed again then). */
function parseProbe(json: string | null): MediaProbe | null {
  if (!json) return null;
  try {
    const p = JSON.parse(json) as MediaProbe | null;
    return p && typeof p === 'object' && typeof p.sizeBytes === 'number' ? p : null;
  } catch {
    return null;
  }
}

type Q = Kysely<Database> | Transaction<Database>;

/**
 * A direct upload announced by POST /v2/assets/upload. The record stays after registration (usedAt
 * set) until the sweep removes it, past its URL's expiry plus the grace period.
 */
export interface PendingUpload {
  storageKey: string;
  organizationId: string;
  keyId: string | null;
  fileName: string;
  contentType: string;
  size: number;
  expiresAt: string;
  createdAt: string;
  /** When it was registered or refused: its URL takes no more bytes. Null while it waits. */
  usedAt?: string | null;
}

function toUpload(r: Selectable<AssetUploadTable>): PendingUpload {
  return {
    storageKey: r.storage_key,
    organizationId: r.organization_id,
    keyId: r.key_id,
    fileName: r.file_name,
    contentType: r.content_type,
    size: Number(r.size),
    expiresAt: r.expires_at,
    createdAt: r.created_at,
    usedAt: r.used_at,
  };
}

export interface AssetListQuery {
  projectId?: string;
  types?: readonly AssetType[];
  /** Case-insensitive "name contains". */
  search?: string;
  sort: { field: AssetSortField; desc: boolean };
  /** Items strictly after this (sort value, id) position. */
  after?: { value: string | number; id: string };
  limit: number;
}

function toAsset(r: Selectable<AssetTable>): AssetRecord {
  return {
    id: r.id,
    organizationId: r.organization_id,
    projectId: r.project_id,
    name: r.name,
    type: r.type as AssetType,
    size: Number(r.size),
    format: r.format,
    durationSeconds: r.duration_seconds === null ? null : Number(r.duration_seconds),
    width: r.width,
    height: r.height,
    storageKey: r.storage_key,
    contentType: r.content_type,
    visibility: r.visibility as AssetVisibility,
    inputType: r.input_type,
    createdByKeyId: r.created_by_key_id,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    contentSha256: r.content_sha256,
    probe: parseProbe(r.probe),
  };
}

/** The SQL expression a sort field orders by; images (no duration) sort as duration -1. */
function sortExpression(field: AssetSortField): Expression<string | number> {
  switch (field) {
    case 'date':
      return sql<string>`created_at`;
    case 'name':
      return sql<string>`name_search`;
    case 'duration':
      return sql<number>`coalesce(duration_seconds, -1)`;
    case 'size':
      return sql<number>`size`;
    case 'kind':
      return sql<string>`type`;
  }
}

/** The value of a record under a sort field, as stored in a cursor. */
export function sortValueOf(a: AssetRecord, field: AssetSortField): string | number {
  switch (field) {
    case 'date':
      return a.createdAt;
    case 'name':
      return a.name.toLowerCase();
    case 'duration':
      return a.durationSeconds ?? -1;
    case 'size':
      return a.size;
    case 'kind':
      return a.type;
  }
}

/** Escapes LIKE wildcards; the pattern is used with ESCAPE '\'. */
function likeContains(s: string): string {
  return `%${s.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}

export class AssetRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(a: AssetRecord, db: Kysely<Database> = this.db): Promise<void> {
    await db
      .insertInto('assets')
      .values({
        id: a.id,
        organization_id: a.organizationId,
        project_id: a.projectId,
        name: a.name,
        name_search: a.name.toLowerCase(),
        type: a.type,
        size: a.size,
        format: a.format,
        duration_seconds: a.durationSeconds,
        width: a.width,
        height: a.height,
        storage_key: a.storageKey,
        content_type: a.contentType,
        visibility: a.visibility,
        input_type: a.inputType,
        created_by_key_id: a.createdByKeyId,
        created_at: a.createdAt,
        updated_at: a.updatedAt,
        content_sha256: a.contentSha256 ?? null,
        probe: a.probe ? JSON.stringify(a.probe) : null,
      })
      .execute();
  }

  /** The newest asset of `type` with this content digest that this API key stored, or null. */
  async findBySha256(
    organizationId: string,
    keyId: string | null,
    sha256: string,
    type?: AssetType,
  ): Promise<AssetRecord | null> {
    let q = this.db
      .selectFrom('assets')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('content_sha256', '=', sha256)
      .where('created_by_key_id', keyId === null ? 'is' : '=', keyId);
    if (type !== undefined) q = q.where('type', '=', type);
    const r = await q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(1).executeTakeFirst();
    return r ? toAsset(r) : null;
  }

  async insertUpload(u: PendingUpload, trx: Q = this.db): Promise<void> {
    await trx
      .insertInto('asset_uploads')
      .values({
        storage_key: u.storageKey,
        organization_id: u.organizationId,
        key_id: u.keyId,
        file_name: u.fileName,
        content_type: u.contentType,
        size: u.size,
        expires_at: u.expiresAt,
        created_at: u.createdAt,
        used_at: u.usedAt ?? null,
      })
      .execute();
  }

  /**
   * The announced bytes of the organization's uploads whose URL expired after `since` (those that
   * may still take bytes or be registered), and the earliest such expiry.
   */
  async openUploads(organizationId: string, since: string, trx: Q = this.db): Promise<{ bytes: number }> {
    const r = await trx
      .selectFrom('asset_uploads')
      .select((eb) => eb.fn.coalesce(eb.fn.sum<number | string>('size'), sql<number>`0`).as('bytes'))
      .where('organization_id', '=', organizationId)
      .where('expires_at', '>', since)
      .executeTakeFirstOrThrow();
    return { bytes: Number(r.bytes) };
  }

  /** The first `limit` of those uploads by expiry: their sizes and expiries (a Retry-After's walk). */
  async openUploadsByExpiry(
    organizationId: string,
    since: string,
    limit: number,
    trx: Q = this.db,
  ): Promise<{ size: number; expiresAt: string }[]> {
    const rows = await trx
      .selectFrom('asset_uploads')
      .select(['size', 'expires_at'])
      .where('organization_id', '=', organizationId)
      .where('expires_at', '>', since)
      .orderBy('expires_at')
      .limit(limit)
      .execute();
    return rows.map((r) => ({ size: Number(r.size), expiresAt: r.expires_at }));
  }

  /** The upload stored under `key`, whichever organization announced it (the local store's PUT). */
  async findUploadByKey(storageKey: string): Promise<PendingUpload | null> {
    const r = await this.db
      .selectFrom('asset_uploads')
      .selectAll()
      .where('storage_key', '=', storageKey)
      .executeTakeFirst();
    return r ? toUpload(r) : null;
  }

  /**
   * Marks the upload used (registered or refused); true for the one caller that did (a registration
   * claims its upload this way, so two registrations of one URL never both succeed).
   */
  async useUpload(organizationId: string, storageKey: string, at: string): Promise<boolean> {
    const r = await this.db
      .updateTable('asset_uploads')
      .set({ used_at: at })
      .where('organization_id', '=', organizationId)
      .where('storage_key', '=', storageKey)
      .where('used_at', 'is', null)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Of `keys`, those that name an upload still waiting to be registered (the sweep keeps their blobs). */
  async waitingUploadKeys(keys: readonly string[]): Promise<Set<string>> {
    const waiting = new Set<string>();
    for (let i = 0; i < keys.length; i += 500) {
      const rows = await this.db
        .selectFrom('asset_uploads')
        .select('storage_key')
        .where('storage_key', 'in', keys.slice(i, i + 500))
        .where('used_at', 'is', null)
        .execute();
      for (const r of rows) waiting.add(r.storage_key);
    }
    return waiting;
  }

  async findUpload(organizationId: string, storageKey: string): Promise<PendingUpload | null> {
    const r = await this.db
      .selectFrom('asset_uploads')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('storage_key', '=', storageKey)
      .executeTakeFirst();
    return r ? toUpload(r) : null;
  }

  /** Uploads (of any organization, used or not) whose URL expired before `before` (ISO time), oldest first. */
  async expiredUploads(before: string, limit: number): Promise<PendingUpload[]> {
    const rows = await this.db
      .selectFrom('asset_uploads')
      .selectAll()
      .where('expires_at', '<', before)
      .orderBy('expires_at')
      .limit(limit)
      .execute();
    return rows.map(toUpload);
  }

  /** Removes the upload's record (the sweep, once its blob is gone); true when there was one. */
  async deleteUpload(organizationId: string, storageKey: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('asset_uploads')
      .where('organization_id', '=', organizationId)
      .where('storage_key', '=', storageKey)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  async find(organizationId: string, id: string): Promise<AssetRecord | null> {
    const r = await this.db
      .selectFrom('assets')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    return r ? toAsset(r) : null;
  }

  /** One page (limit rows) in the requested order, and the number of all rows matching the filters. */
  async list(organizationId: string, q: AssetListQuery): Promise<{ items: AssetRecord[]; total: number }> {
    const filters = (eb: ExpressionBuilder<Database, 'assets'>) => {
      const conds = [eb('organization_id', '=', organizationId)];
      if (q.projectId !== undefined) conds.push(eb('project_id', '=', q.projectId));
      if (q.types && q.types.length > 0) conds.push(eb('type', 'in', [...q.types]));
      if (q.search) conds.push(eb(sql`name_search`, 'like', sql`${likeContains(q.search)} escape '\\'`));
      return eb.and(conds);
    };
    const expr = sortExpression(q.sort.field);
    const dir = q.sort.desc ? 'desc' : 'asc';
    const cmp = q.sort.desc ? '<' : '>';

    let page = this.db.selectFrom('assets').selectAll().where(filters);
    const after = q.after;
    if (after) {
      page = page.where((eb) =>
        eb.or([eb(expr, cmp, after.value), eb.and([eb(expr, '=', after.value), eb('id', cmp, after.id)])]),
      );
    }
    const rows = await page.orderBy(expr, dir).orderBy('id', dir).limit(q.limit).execute();
    const count = await this.db
      .selectFrom('assets')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where(filters)
      .executeTakeFirstOrThrow();
    return { items: rows.map(toAsset), total: Number(count.n) };
  }

  async delete(organizationId: string, id: string): Promise<boolean> {
    const r = await this.db
      .deleteFrom('assets')
      .where('organization_id', '=', organizationId)
      .where('id', '=', id)
      .executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /**
   * Deletes the asset unless a generation of the organization in one of `activeStatuses` uses it: one
   * whose input names it (`"assetId":"<id>"` in the stored JSON) or whose resolved input holds its blob
   * key. One statement, so a generation committed before it is always seen.
   */
  async deleteUnlessUsed(
    a: Pick<AssetRecord, 'organizationId' | 'id' | 'storageKey'>,
    activeStatuses: readonly string[],
  ): Promise<'deleted' | 'in_use' | 'missing'> {
    const byId = likeExact(JSON.stringify({ assetId: a.id }).slice(1, -1));
    const byKey = likeExact(JSON.stringify(a.storageKey));
    const r = await this.db
      .deleteFrom('assets')
      .where('organization_id', '=', a.organizationId)
      .where('id', '=', a.id)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('generations')
              .select(sql`1`.as('one'))
              .where('generations.organization_id', '=', a.organizationId)
              .where('generations.status', 'in', [...activeStatuses])
              .where((eb) =>
                eb.or([
                  eb('generations.input', 'like', sql<string>`${byId} escape '\\'`),
                  eb('generations.resolved_input', 'like', sql<string>`${byKey} escape '\\'`),
                ]),
              ),
          ),
        ),
      )
      .executeTakeFirst();
    if (Number(r.numDeletedRows) > 0) {
      await this.db.deleteFrom('asset_timelines').where('asset_id', '=', a.id).execute();
      return 'deleted';
    }
    return (await this.find(a.organizationId, a.id)) ? 'in_use' : 'missing';
  }

  async findByStorageKey(organizationId: string, key: string): Promise<AssetRecord | null> {
    const r = await this.db
      .selectFrom('assets')
      .selectAll()
      .where('organization_id', '=', organizationId)
      .where('storage_key', '=', key)
      .executeTakeFirst();
    return r ? toAsset(r) : null;
  }

  /** The word and phoneme timeline of a synthesized asset (stored as JSON). */
  async saveTimeline(
    organizationId: string,
    assetId: string,
    timeline: unknown,
    db: Kysely<Database> = this.db,
  ): Promise<void> {
    await db
      .insertInto('asset_timelines')
      .values({ asset_id: assetId, organization_id: organizationId, timeline: JSON.stringify(timeline) })
      .execute();
  }

  async timeline(organizationId: string, assetId: string): Promise<unknown> {
    const r = await this.db
      .selectFrom('asset_timelines')
      .select('timeline')
      .where('organization_id', '=', organizationId)
      .where('asset_id', '=', assetId)
      .executeTakeFirst();
    return r ? (JSON.parse(r.timeline) as unknown) : null;
  }
}

/** A LIKE pattern (ESCAPE '\\') matching text that contains `s` exactly, case and wildcards included. */
function likeExact(s: string): string {
  return `%${s.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
}
