// An invitation's account link is for one address: the account it makes must have that email
// (null: a link the operator made, for any address).
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('account_links').addColumn('email', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('account_links').dropColumn('email').execute();
}
