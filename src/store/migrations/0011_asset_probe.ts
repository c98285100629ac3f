// What ffprobe read from an asset when it was stored (JSON of media/probe.ts's MediaProbe), so that a
// generation made from the asset reuses it instead of starting ffprobe again; null for assets stored
// before it (they are probed at admission, as before).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('assets').addColumn('probe', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('assets').dropColumn('probe').execute();
}
