// A direct upload's record outlives its registration (or refusal) until its URL has expired plus the
// grace period: used_at marks it used, so that its URL takes no more bytes on the local store, the
// sweep removes whatever a late PUT stored on S3 (which cannot refuse one), and its announced size
// still counts against the organization's open uploads while bytes can arrive.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('asset_uploads').addColumn('used_at', 'text').execute();
  await db.schema.createIndex('asset_uploads_expires').on('asset_uploads').column('expires_at').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('asset_uploads_expires').ifExists().execute();
  await db.schema.alterTable('asset_uploads').dropColumn('used_at').execute();
}
