// The job system's table (DESIGN.md, "The job system"; docs/jobs.md). Existing generations move onto
// it: queued and running ones keep their attempts and (for running ones) their lease, so a worker of
// the new version requeues or finishes them as usual. The lease columns leave the generations table.
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';

const JOB_STATUS_OF: Record<string, string> = {
  PENDING: 'queued',
  PROCESSING: 'running',
  COMPLETED: 'completed',
  FAILED: 'failed',
  REJECTED: 'failed',
  CANCELED: 'canceled',
  TIMED_OUT: 'timed_out',
};

const ms = (iso: string | null): number | null => (iso ? Date.parse(iso) : null);

export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable('jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('subject_id', 'text', (c) => c.notNull())
    .addColumn('organization_id', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('payload_version', 'integer', (c) => c.notNull())
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('priority', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('run_at', 'bigint', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('max_attempts', 'integer', (c) => c.notNull())
    .addColumn('lease_token', 'text')
    .addColumn('lease_expires_at', 'bigint')
    .addColumn('locked_by', 'text')
    .addColumn('parent_id', 'text')
    .addColumn('timeout_ms', 'bigint', (c) => c.notNull())
    .addColumn('deadline_at', 'bigint')
    .addColumn('cancel_requested', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('progress', 'double precision', (c) => c.notNull().defaultTo(0))
    .addColumn('last_error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('started_at', 'bigint')
    .addColumn('finished_at', 'bigint')
    .execute();
  await db.schema.createIndex('jobs_subject').on('jobs').columns(['kind', 'subject_id']).unique().execute();
  await db.schema.createIndex('jobs_queue').on('jobs').columns(['status', 'run_at']).execute();
  await db.schema.createIndex('jobs_org_status').on('jobs').columns(['organization_id', 'status']).execute();
  await db.schema.createIndex('jobs_lease').on('jobs').columns(['status', 'lease_expires_at']).execute();
  await db.schema.createIndex('jobs_parent').on('jobs').column('parent_id').execute();

  const rows = await db.selectFrom('generations').selectAll().execute();
  for (const g of rows) {
    const status = JOB_STATUS_OF[g.status as string] ?? 'failed';
    const created = ms(g.created_at) ?? Date.now();
    const timeout = Math.max(10_000, (ms(g.deadline_at) ?? created + 3_600_000) - created);
    await db
      .insertInto('jobs')
      .values({
        id: randomUUID(),
        kind: 'generation',
        subject_id: g.id,
        organization_id: g.organization_id,
        payload: JSON.stringify({ generationId: g.id }),
        payload_version: 1,
        status,
        priority: 0,
        run_at: created,
        attempts: g.attempts,
        max_attempts: g.max_attempts,
        lease_token: status === 'running' ? randomUUID() : null,
        lease_expires_at: status === 'running' ? (ms(g.lease_expires_at) ?? Date.now()) : null,
        locked_by: status === 'running' ? g.lease_owner : null,
        parent_id: null,
        timeout_ms: timeout,
        deadline_at: status === 'running' ? (ms(g.started_at) ?? created) + timeout : null,
        cancel_requested: g.cancel_requested,
        progress: g.progress,
        last_error: null,
        created_at: created,
        updated_at: ms(g.updated_at) ?? created,
        started_at: ms(g.started_at),
        finished_at: ms(g.finished_at),
      })
      .execute();
  }
  for (const col of [
    'attempts',
    'max_attempts',
    'lease_owner',
    'lease_expires_at',
    'cancel_requested',
    'deadline_at',
  ]) {
    await db.schema.alterTable('generations').dropColumn(col).execute();
  }
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema
    .alterTable('generations')
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema
    .alterTable('generations')
    .addColumn('max_attempts', 'integer', (c) => c.notNull().defaultTo(3))
    .execute();
  await db.schema.alterTable('generations').addColumn('lease_owner', 'text').execute();
  await db.schema.alterTable('generations').addColumn('lease_expires_at', 'text').execute();
  await db.schema
    .alterTable('generations')
    .addColumn('cancel_requested', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  await db.schema.alterTable('generations').addColumn('deadline_at', 'text').execute();
  await db.schema.dropTable('jobs').execute();
}
