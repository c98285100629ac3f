// Review notes pinned to moments of a generation's output (docs/generations.md#notes). A note goes
// with its generation: deleting the generation deletes its notes in the same transaction.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('generation_notes')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('generation_id', 'text', (c) => c.notNull())
    .addColumn('at_ms', 'integer', (c) => c.notNull())
    .addColumn('text', 'text', (c) => c.notNull())
    .addColumn('resolved', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('author', 'text', (c) => c.notNull())
    .addColumn('created_at', 'text', (c) => c.notNull())
    .addColumn('updated_at', 'text', (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex('generation_notes_generation')
    .on('generation_notes')
    .columns(['generation_id', 'at_ms'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropTable('generation_notes').execute();
}
