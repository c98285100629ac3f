// Webhook deliveries and attempts name the resource they report on (subject_id: a generation, a batch,
// any kind's resource) instead of a generation: each job kind describes its own notification. The
// generation ids move over, and a batch delivery's id comes out of its stored payload.
import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhook_deliveries').addColumn('subject_id', 'text').execute();
  await db.schema.alterTable('webhook_attempts').addColumn('subject_id', 'text').execute();
  await sql`update webhook_deliveries set subject_id = generation_id where generation_id is not null`.execute(
    db,
  );
  const others = await sql<{ id: string; payload: string }>`
    select id, payload from webhook_deliveries where subject_id is null`.execute(db);
  for (const row of others.rows) {
    const batchId = (JSON.parse(row.payload) as { batchId?: unknown }).batchId;
    if (typeof batchId === 'string')
      await sql`update webhook_deliveries set subject_id = ${batchId} where id = ${row.id}`.execute(db);
  }
  await sql`update webhook_attempts set subject_id = coalesce(generation_id,
    (select d.subject_id from webhook_deliveries d where d.id = webhook_attempts.delivery_id))`.execute(db);
  await db.schema.dropIndex('webhook_deliveries_generation').execute();
  await db.schema.dropIndex('webhook_attempts_generation').execute();
  await db.schema.alterTable('webhook_deliveries').dropColumn('generation_id').execute();
  await db.schema.alterTable('webhook_attempts').dropColumn('generation_id').execute();
  await db.schema
    .createIndex('webhook_deliveries_subject')
    .on('webhook_deliveries')
    .column('subject_id')
    .execute();
  await db.schema
    .createIndex('webhook_attempts_subject')
    .on('webhook_attempts')
    .column('subject_id')
    .execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable('webhook_deliveries').addColumn('generation_id', 'text').execute();
  await db.schema.alterTable('webhook_attempts').addColumn('generation_id', 'text').execute();
  await sql`update webhook_deliveries set generation_id = subject_id where event = 'generation.status'`.execute(
    db,
  );
  await sql`update webhook_attempts set generation_id = (select d.generation_id from webhook_deliveries d
    where d.id = webhook_attempts.delivery_id)`.execute(db);
  await db.schema.dropIndex('webhook_deliveries_subject').execute();
  await db.schema.dropIndex('webhook_attempts_subject').execute();
  await db.schema.alterTable('webhook_deliveries').dropColumn('subject_id').execute();
  await db.schema.alterTable('webhook_attempts').dropColumn('subject_id').execute();
  await db.schema
    .createIndex('webhook_deliveries_generation')
    .on('webhook_deliveries')
    .column('generation_id')
    .execute();
  await db.schema
    .createIndex('webhook_attempts_generation')
    .on('webhook_attempts')
    .column('generation_id')
    .execute();
}
