// A transcription's words can be corrected by hand (issue 35): each correction that settles makes a new
// revision, and a correction names the revision it was made from (a stale one is refused).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('transcriptions')
    .addColumn('revision', 'integer', (c) => c.notNull().defaultTo(1))
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('transcriptions').dropColumn('revision').execute();
}
