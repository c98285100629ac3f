// Nothing stays PENDING or PROCESSING forever: expired leases are retried (bounded), then failed;
// generations past their deadline become TIMED_OUT; expired idempotency keys are cleaned up.
import type { Logger } from 'pino';
import type { Store } from '../store/index.js';
import type { GenerationFinisher } from './finisher.js';

export class Watchdog {
  private timer: NodeJS.Timeout | null = null;
  private ticking = false;
  private lastCleanup = 0;

  constructor(
    private readonly store: Store,
    private readonly finisher: GenerationFinisher,
    private readonly logger: Logger,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
    void this.tick();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    while (this.ticking) await new Promise((r) => setTimeout(r, 20));
  }

  async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      const now = new Date().toISOString();
      for (const g of await this.store.generations.expiredLeases(now)) {
        if (g.cancelRequested) {
          // Canceled while its worker was gone: running it again could complete (and bill) it.
          await this.finisher.finish(
            g.id,
            { statuses: ['PROCESSING'] },
            {
              status: 'CANCELED',
              error: 'The generation was canceled.',
              errorCode: 'generation_canceled',
            },
          );
          this.logger.info({ generationId: g.id }, 'lease expired on a canceled generation; canceled');
        } else if (g.attempts < g.maxAttempts) {
          if (await this.store.generations.requeue(g.id, g.leaseExpiresAt as string)) {
            this.logger.warn(
              { generationId: g.id, attempt: g.attempts },
              'lease expired; generation requeued',
            );
          }
        } else {
          await this.finisher.finish(
            g.id,
            { statuses: ['PROCESSING'] },
            {
              status: 'FAILED',
              error: `The worker stopped ${g.attempts} times while processing this generation.`,
              errorCode: 'generation_worker_lost',
            },
          );
          this.logger.error({ generationId: g.id }, 'generation failed: worker lost too often');
        }
      }
      for (const g of await this.store.generations.pastDeadline(now)) {
        await this.finisher.finish(
          g.id,
          { statuses: ['PENDING', 'PROCESSING'] },
          {
            status: 'TIMED_OUT',
            error: 'The generation ran longer than the server allows.',
            errorCode: 'generation_timed_out',
          },
        );
        this.logger.warn({ generationId: g.id }, 'generation timed out');
      }
      if (Date.now() - this.lastCleanup > 3600_000) {
        this.lastCleanup = Date.now();
        const n = await this.store.idempotency.deleteExpired(now);
        if (n > 0) this.logger.info({ removed: n }, 'expired idempotency keys removed');
      }
    } catch (err) {
      this.logger.warn({ err }, 'watchdog tick failed');
    } finally {
      this.ticking = false;
    }
  }
}
