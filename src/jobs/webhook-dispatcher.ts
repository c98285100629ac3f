// Delivers the webhook outbox: signed POSTs, at least once, exponential backoff with jitter for about
// a day (LIPSYNC_WEBHOOK_RETRY_HOURS), every attempt logged per resource. Each body is finished at
// delivery time by the notification of the kind that sent it (src/jobs/handler.ts JobNotification).
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Store } from '../store/index.js';
import type { WebhookDelivery } from '../store/webhooks.js';
import { isDeliverySuccess, isPermanentFailure, nextRetryDelayMs, signWebhook } from '../domain/webhooks.js';
import type { Metrics } from '../metrics/metrics.js';
import type { JobNotification } from './handler.js';

export interface WebhookSender {
  /** POSTs the body; resolves with the HTTP status, rejects on network/guard errors. */
  post(url: string, body: string, headers: Record<string, string>, timeoutMs: number): Promise<number>;
}

/** The notification that sends an event (the handler registry's). */
export type NotificationOf = (event: string) => JobNotification | undefined;

export class WebhookDispatcher {
  private timer: NodeJS.Timeout | null = null;
  private busy = false;

  constructor(
    private readonly store: Store,
    private readonly sender: WebhookSender,
    private readonly notificationOf: NotificationOf,
    private readonly opts: { retryWindowMs: number; timeoutMs: number; intervalMs?: number; batch?: number },
    private readonly logger: Logger,
    private readonly metrics: Metrics | null = null,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.opts.intervalMs ?? 500);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    while (this.busy) await new Promise((r) => setTimeout(r, 20));
  }

  async tick(): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const now = Date.now();
      const due = await this.store.webhooks.claimDue(
        new Date(now).toISOString(),
        new Date(now + this.opts.timeoutMs * 2 + 5000).toISOString(),
        this.opts.batch ?? 20,
      );
      await Promise.all(due.map((d) => this.deliver(d)));
    } catch (err) {
      this.logger.warn({ err }, 'webhook dispatch failed');
    } finally {
      this.busy = false;
    }
  }

  private async body(d: WebhookDelivery): Promise<string> {
    const notification = d.subjectId ? this.notificationOf(d.event) : undefined;
    return (await notification?.body(d.subjectId as string, d.payload)) ?? d.payload;
  }

  private async deliver(d: WebhookDelivery): Promise<void> {
    const attempt = d.attempts + 1;
    const started = Date.now();
    let statusCode: number | null = null;
    let error: string | null = null;
    let refused = false;
    try {
      const org = await this.store.organizations.findById(d.organizationId);
      if (!org) throw new Error('organization no longer exists');
      const body = await this.body(d);
      const t = Math.floor(Date.now() / 1000);
      const signature = signWebhook(org.webhookSecret, body, t);
      statusCode = await this.sender.post(
        d.url,
        body,
        {
          'content-type': 'application/json',
          'user-agent': 'lipsync-webhooks/1',
          // The spec's header, and the same value under the name the public API uses.
          'webhook-signature': signature,
          'sync-signature': signature,
          'webhook-id': d.id,
          'webhook-attempt': String(attempt),
        },
        this.opts.timeoutMs,
      );
      if (!isDeliverySuccess(statusCode)) error = `receiver answered HTTP ${statusCode}`;
    } catch (err) {
      error = (err as Error)?.message ?? String(err);
      // A URL the guard refuses will be refused on every retry: give up at once.
      refused = (err as { refused?: boolean })?.refused === true;
    }
    const now = Date.now();
    const ok = statusCode !== null && isDeliverySuccess(statusCode);
    const age = now - Date.parse(d.createdAt);
    const giveUp =
      !ok &&
      (refused || (statusCode !== null && isPermanentFailure(statusCode)) || age >= this.opts.retryWindowMs);
    const status = ok ? 'delivered' : giveUp ? 'failed' : 'pending';
    const nextAttemptAt = new Date(
      now + (status === 'pending' ? nextRetryDelayMs(attempt - 1) : 0),
    ).toISOString();
    await this.store.webhooks.recordAttempt(
      d,
      {
        id: randomUUID(),
        deliveryId: d.id,
        subjectId: d.subjectId,
        attempt,
        statusCode,
        error,
        durationMs: now - started,
        attemptedAt: new Date(now).toISOString(),
      },
      { status, nextAttemptAt },
    );
    this.metrics?.webhookDelivery(status === 'pending' ? 'retry' : status);
    const log = this.logger.child({
      event: d.event,
      subjectId: d.subjectId,
      webhookId: d.id,
      attempt,
      statusCode,
    });
    if (ok) log.info('webhook delivered');
    else
      log.warn(
        { error, status },
        status === 'failed' ? 'webhook delivery given up' : 'webhook delivery failed; will retry',
      );
  }
}
