import { randomUUID } from 'node:crypto';
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database, WebhookDeliveryTable } from './schema.js';

export interface WebhookDelivery {
  id: string;
  organizationId: string;
  subjectId: string | null;
  event: string;
  url: string;
  payload: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  nextAttemptAt: string;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface WebhookAttempt {
  id: string;
  deliveryId: string;
  subjectId: string | null;
  attempt: number;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  attemptedAt: string;
}

function toDelivery(r: Selectable<WebhookDeliveryTable>): WebhookDelivery {
  return {
    id: r.id,
    organizationId: r.organization_id,
    subjectId: r.subject_id,
    event: r.event,
    url: r.url,
    payload: r.payload,
    status: r.status as WebhookDelivery['status'],
    attempts: r.attempts,
    nextAttemptAt: r.next_attempt_at,
    lastStatusCode: r.last_status_code,
    lastError: r.last_error,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
  };
}

/** The durable webhook outbox and its per-attempt log. */
export class WebhookRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async enqueue(trx: Transaction<Database> | Kysely<Database>, d: WebhookDelivery): Promise<void> {
    await trx
      .insertInto('webhook_deliveries')
      .values({
        id: d.id,
        organization_id: d.organizationId,
        subject_id: d.subjectId,
        event: d.event,
        url: d.url,
        payload: d.payload,
        status: d.status,
        attempts: d.attempts,
        next_attempt_at: d.nextAttemptAt,
        lease_expires_at: null,
        last_status_code: null,
        last_error: null,
        created_at: d.createdAt,
        updated_at: d.updatedAt,
      })
      .execute();
  }

  /** A new delivery, due now (in the transaction that ends its resource). */
  async enqueueNew(
    trx: Transaction<Database>,
    d: { organizationId: string; subjectId: string; event: string; url: string; payload: string },
  ): Promise<void> {
    const now = new Date().toISOString();
    await this.enqueue(trx, {
      id: randomUUID(),
      ...d,
      status: 'pending',
      attempts: 0,
      nextAttemptAt: now,
      lastStatusCode: null,
      lastError: null,
      createdAt: now,
      updatedAt: now,
    });
  }

  /** Takes up to `limit` due deliveries with a short lease so that two dispatchers never send one twice at once. */
  async claimDue(nowIso: string, leaseUntilIso: string, limit: number): Promise<WebhookDelivery[]> {
    const due = await this.db
      .selectFrom('webhook_deliveries')
      .selectAll()
      .where('status', '=', 'pending')
      .where('next_attempt_at', '<=', nowIso)
      .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', nowIso)]))
      .orderBy('next_attempt_at')
      .limit(limit)
      .execute();
    const claimed: WebhookDelivery[] = [];
    for (const d of due) {
      const r = await this.db
        .updateTable('webhook_deliveries')
        .set({ lease_expires_at: leaseUntilIso })
        .where('id', '=', d.id)
        .where('status', '=', 'pending')
        .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', nowIso)]))
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 1) claimed.push(toDelivery(d));
    }
    return claimed;
  }

  async recordAttempt(
    d: WebhookDelivery,
    a: WebhookAttempt,
    next: { status: WebhookDelivery['status']; nextAttemptAt: string },
  ): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto('webhook_attempts')
        .values({
          id: a.id,
          delivery_id: a.deliveryId,
          subject_id: a.subjectId,
          attempt: a.attempt,
          status_code: a.statusCode,
          error: a.error,
          duration_ms: a.durationMs,
          attempted_at: a.attemptedAt,
        })
        .execute();
      await trx
        .updateTable('webhook_deliveries')
        .set({
          status: next.status,
          attempts: a.attempt,
          next_attempt_at: next.nextAttemptAt,
          lease_expires_at: null,
          last_status_code: a.statusCode,
          last_error: a.error,
          updated_at: a.attemptedAt,
        })
        .where('id', '=', d.id)
        .execute();
    });
  }

  /** Every delivery about one resource (a generation, a batch, ...) and their attempts. */
  async listForSubject(
    subjectId: string,
  ): Promise<{ deliveries: WebhookDelivery[]; attempts: WebhookAttempt[] }> {
    const deliveries = (
      await this.db
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('subject_id', '=', subjectId)
        .orderBy('created_at')
        .execute()
    ).map(toDelivery);
    const attempts = (
      await this.db
        .selectFrom('webhook_attempts')
        .selectAll()
        .where('subject_id', '=', subjectId)
        .orderBy('attempted_at')
        .execute()
    ).map((r) => ({
      id: r.id,
      deliveryId: r.delivery_id,
      subjectId: r.subject_id,
      attempt: r.attempt,
      statusCode: r.status_code,
      error: r.error,
      durationMs: r.duration_ms,
      attemptedAt: r.attempted_at,
    }));
    return { deliveries, attempts };
  }
}
