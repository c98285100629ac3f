import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database, WebhookDeliveryTable } from './schema.js';

export interface WebhookDelivery {
  id: string;
  organizationId: string;
  generationId: string | null;
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
  generationId: string | null;
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
    generationId: r.generation_id,
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
        generation_id: d.generationId,
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
          generation_id: a.generationId,
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

  async listForGeneration(
    generationId: string,
  ): Promise<{ deliveries: WebhookDelivery[]; attempts: WebhookAttempt[] }> {
    const deliveries = (
      await this.db
        .selectFrom('webhook_deliveries')
        .selectAll()
        .where('generation_id', '=', generationId)
        .orderBy('created_at')
        .execute()
    ).map(toDelivery);
    const attempts = (
      await this.db
        .selectFrom('webhook_attempts')
        .selectAll()
        .where('generation_id', '=', generationId)
        .orderBy('attempted_at')
        .execute()
    ).map((r) => ({
      id: r.id,
      deliveryId: r.delivery_id,
      generationId: r.generation_id,
      attempt: r.attempt,
      statusCode: r.status_code,
      error: r.error,
      durationMs: r.duration_ms,
      attemptedAt: r.attempted_at,
    }));
    return { deliveries, attempts };
  }
}
