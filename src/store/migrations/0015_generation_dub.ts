// A dubbed generation's public transcript (domain/dub.ts DubRecord as JSON): per segment the source
// span, speaker, source and translated text and where the dubbed speech sits; null for other
// generations. The dubbed soundtrack's blob key, kept beside the output.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('generations').addColumn('dub', 'text').execute();
  await db.schema.alterTable('generations').addColumn('dub_audio_key', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('generations').dropColumn('dub_audio_key').execute();
  await db.schema.alterTable('generations').dropColumn('dub').execute();
}
