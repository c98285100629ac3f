// A preview generation's still (options.preview): the blob key of the JPEG of its first frame, kept
// beside the output; null for other generations.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('generations').addColumn('still_key', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('generations').dropColumn('still_key').execute();
}
