// An invitation's account link is for one address: the account it makes must have that email
// (null: a link the operator made, for any address). It also keeps who invited (null: the operator):
// the link is refused once that user may no longer grant its role.
import type { Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('account_links').addColumn('email', 'text').execute();
  await db.schema.alterTable('account_links').addColumn('created_by_user_id', 'text').execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('account_links').dropColumn('created_by_user_id').execute();
  await db.schema.alterTable('account_links').dropColumn('email').execute();
}
