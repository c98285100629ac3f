// Direct uploads (POST /v2/assets/upload with JSON, then PUT, then POST /v2/assets): the SHA-256 of
// every asset's content, for GET /v2/assets/uploaded?contentSha256=, and the pending uploads that
// POST /v2/assets may register (what was announced, by which organization and key, until when).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('assets').addColumn('content_sha256', 'text').execute();
  await db.schema
    .createIndex('assets_org_sha256')
    .on('assets')
    .columns(['organization_id', 'content_sha256'])
    .execute();
  await db.schema
    .createTable('asset_uploads')
    .addColumn('storage_key', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('key_id', 'text')
    .addColumn('file_name', 'text', (c) => c.notNull())
    .addColumn('content_type', 'text', (c) => c.notNull())
    .addColumn('size', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('asset_uploads_org_created')
    .on('asset_uploads')
    .columns(['organization_id', 'created_at'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('asset_uploads').ifExists().execute();
  await db.schema.dropIndex('assets_org_sha256').ifExists().execute();
  await db.schema.alterTable('assets').dropColumn('content_sha256').execute();
}
