// Assets: a lower-cased copy of the name for case-insensitive search and sort that behaves the same on
// SQLite and PostgreSQL, the source of the asset (inputType) and the key that created it.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('assets')
    .addColumn('name_search', 'text', (c) => c.notNull().defaultTo(''))
    .execute();
  await db.schema
    .alterTable('assets')
    .addColumn('input_type', 'text', (c) => c.notNull().defaultTo('UPLOAD'))
    .execute();
  await db.schema.alterTable('assets').addColumn('created_by_key_id', 'text').execute();
  await sql`update assets set name_search = lower(name)`.execute(db);
  await db.schema
    .createIndex('assets_org_project')
    .on('assets')
    .columns(['organization_id', 'project_id'])
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.dropIndex('assets_org_project').ifExists().execute();
  for (const c of ['created_by_key_id', 'input_type', 'name_search']) {
    await db.schema.alterTable('assets').dropColumn(c).execute();
  }
}
