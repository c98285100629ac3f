// How a batch moves, each step inside the transaction that causes it (the job system's claim and
// settle transactions, a record's refusal, a cancel): counters, status, and on its end the webhook's
// outbox row. The batch's row lock orders concurrent steps; the counters are never recounted.
import type { Transaction } from 'kysely';
import type { Database } from '../store/schema.js';
import type { Store } from '../store/index.js';
import type { BatchRecord } from '../store/batches.js';
import {
  ACTIVE_BATCH_STATUSES,
  finalBatchStatus,
  pendingCount,
  runningBatchStatus,
} from '../domain/batches.js';
import { BATCH_WEBHOOK_EVENT } from '../domain/webhooks.js';

type Trx = Transaction<Database>;

export class BatchProgress {
  constructor(private readonly store: Store) {}

  /** A child was claimed: the batch is PROCESSING (once any child has started). */
  async childStarted(trx: Trx, batchId: string): Promise<void> {
    // Most claims find it started already: only the first takes the batch's lock.
    const seen = await this.store.batches.find(batchId, undefined, trx);
    if (!seen || seen.childrenStarted) return;
    const b = await this.store.batches.lock(trx, batchId);
    if (!b || b.childrenStarted) return;
    await this.store.batches.update(trx, batchId, {
      children_started: 1,
      ...(b.status === 'PENDING' || b.status === 'JOBS_CREATED' ? { status: 'PROCESSING' } : {}),
    });
  }

  /** A child ended (in its terminal transaction): one counter moves; the last one ends the batch. */
  async childEnded(trx: Trx, batchId: string, succeeded: boolean): Promise<void> {
    const b = await this.store.batches.lock(trx, batchId);
    if (!b) return;
    await this.store.batches.countEnd(trx, batchId, succeeded);
    await this.finishIfDone(trx, batchId);
  }

  /** A record refused while its child was being created (or canceled before): counted as failed. */
  async recordEnded(
    trx: Trx,
    batchId: string,
    line: number,
    status: 'failed' | 'canceled',
    error: { code: string; message: string },
  ): Promise<boolean> {
    const b = await this.store.batches.lock(trx, batchId);
    if (!b) return false;
    const moved = await this.store.batches.moveItem(trx, batchId, line, {
      status,
      errorCode: error.code,
      errorMessage: error.message,
    });
    if (!moved) return false;
    await this.store.batches.countEnd(trx, batchId, false);
    await this.finishIfDone(trx, batchId);
    return true;
  }

  /** Every record still waiting for its child ends as `status` (cancel; creation given up). */
  async endQueued(
    trx: Trx,
    batchId: string,
    status: 'failed' | 'canceled',
    error: { code: string; message: string },
  ): Promise<number> {
    const b = await this.store.batches.lock(trx, batchId);
    if (!b) return 0;
    const n = await this.store.batches.endQueuedItems(trx, batchId, status, error);
    await this.store.batches.countEnd(trx, batchId, false, n);
    await this.finishIfDone(trx, batchId);
    return n;
  }

  /** The creating job ended: every record has a child or an end; the batch runs (or is done). */
  async creationEnded(trx: Trx, batchId: string, error?: { code: string; message: string }): Promise<void> {
    const b = await this.store.batches.lock(trx, batchId);
    if (!b) return;
    if (error) {
      await this.store.batches.update(trx, batchId, { error_code: error.code, error_message: error.message });
      const n = await this.store.batches.endQueuedItems(trx, batchId, 'failed', error);
      await this.store.batches.countEnd(trx, batchId, false, n);
    }
    const now = (await this.store.batches.find(batchId, undefined, trx)) as BatchRecord;
    await this.store.batches.update(trx, batchId, {
      jobs_created: 1,
      ...(now.status === 'PENDING' ? { status: runningBatchStatus(now.childrenStarted) } : {}),
    });
    await this.finishIfDone(trx, batchId);
  }

  /** Ends the batch when its children are all created and every record has ended. */
  private async finishIfDone(trx: Trx, batchId: string): Promise<void> {
    const b = await this.store.batches.find(batchId, undefined, trx);
    if (!b || !b.jobsCreated || pendingCount(b) > 0 || !ACTIVE_BATCH_STATUSES.includes(b.status)) return;
    const status = finalBatchStatus(b, b.canceledAt !== null);
    const now = new Date().toISOString();
    await this.store.batches.update(trx, batchId, { status, finished_at: now });
    if (!b.webhookUrl) return;
    // The body is built at delivery time (the batch kind's notification), so that it is current.
    await this.store.webhooks.enqueueNew(trx, {
      organizationId: b.organizationId,
      subjectId: b.id,
      event: BATCH_WEBHOOK_EVENT,
      url: b.webhookUrl,
      payload: JSON.stringify({ batchId: b.id, status }),
    });
  }
}
