// Nothing stays running forever: a job whose lease expired (its worker died) is requeued with a
// backoff while attempts are left, then failed; a run past its deadline (counted from the start of
// the run, never from submission) is timed out; expired idempotency claims are cleaned up.
import type { Logger } from 'pino';
import type { Store } from '../store/index.js';
import type { JobQueue } from './queue.js';
import { JOB_CANCELED, JOB_TIMED_OUT, retryDelayMs } from '../domain/jobs.js';

export class Watchdog {
  private timer: NodeJS.Timeout | null = null;
  private ticking: Promise<void> | null = null;
  private lastCleanup = 0;

  constructor(
    private readonly store: Store,
    private readonly queue: JobQueue,
    private readonly logger: Logger,
    private readonly intervalMs: number,
    private readonly random: () => number = Math.random,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
    void this.tick();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.ticking;
  }

  /** One pass; never throws (a failing database is tried again at the next tick). */
  tick(): Promise<void> {
    if (!this.ticking) {
      this.ticking = this.pass()
        .catch((err: unknown) => this.logger.warn({ err }, 'watchdog tick failed'))
        .finally(() => {
          this.ticking = null;
        });
    }
    return this.ticking;
  }

  private async pass(): Promise<void> {
    for (const job of await this.store.jobs.expiredLeases()) {
      const log = this.logger.child({ jobId: job.id, kind: job.kind, subjectId: job.subjectId });
      const token = job.leaseToken as string;
      if (job.cancelRequested) {
        // Canceled while its worker was gone: running it again could complete (and bill) it.
        const s = await this.queue.settle(
          job,
          { token, statuses: ['running'], leaseExpired: true },
          { status: 'canceled', error: JOB_CANCELED },
        );
        if (s) log.info('lease expired on a canceled job; canceled');
      } else if (job.attempts < job.maxAttempts) {
        const delayMs = retryDelayMs(job.attempts, this.random());
        const r = await this.queue.requeue(job, token, {
          delayMs,
          leaseExpired: true,
          lastError: 'worker_lost: the worker stopped while running the job',
        });
        if (r) log.warn({ attempt: job.attempts, delayMs }, 'lease expired; job requeued');
      } else {
        const s = await this.queue.settle(
          job,
          { token, statuses: ['running'], leaseExpired: true },
          {
            status: 'failed',
            error: {
              code: 'worker_lost',
              message: `The worker stopped ${job.attempts} times while running this job.`,
            },
          },
        );
        if (s) log.error('job failed: worker lost too often');
      }
    }
    for (const job of await this.store.jobs.pastDeadline()) {
      const s = await this.queue.settle(
        job,
        { token: job.leaseToken ?? undefined, statuses: ['running'] },
        {
          status: 'timed_out',
          error: JOB_TIMED_OUT,
        },
      );
      if (s) this.logger.warn({ jobId: job.id, kind: job.kind }, 'job timed out');
    }
    if (Date.now() - this.lastCleanup > 3600_000) {
      this.lastCleanup = Date.now();
      const n = await this.store.idempotency.deleteExpired(new Date().toISOString());
      if (n > 0) this.logger.info({ removed: n }, 'expired idempotency keys removed');
    }
  }
}
