// The worker pool: claims PENDING generations with a lease, runs the pipeline, renews the lease
// (heartbeat), and finishes the job only while it still owns the lease.
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Store } from '../store/index.js';
import type { GenerationRecord } from '../store/generations.js';
import type { GenerationFinisher } from './finisher.js';
import { AppError } from '../domain/errors.js';

export interface JobContext {
  readonly signal: AbortSignal;
  readonly logger: Logger;
  /** 0..100; stored with the next heartbeat (throttled). */
  reportProgress(percent: number): void;
}

export interface JobResult {
  outputKey: string;
  watermarkedKey: string | null;
  outputDuration: number;
  fps: number;
  quality: Record<string, unknown> | null;
}

export interface JobRunner {
  run(generation: GenerationRecord, ctx: JobContext): Promise<JobResult>;
}

type AbortReason = 'lease_lost' | 'canceled' | 'shutdown';

export class WorkerPool {
  private running = false;
  private readonly loops: Promise<void>[] = [];
  private wake: (() => void) | null = null;
  private readonly active = new Map<string, AbortController>();
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

  constructor(
    private readonly store: Store,
    private readonly finisher: GenerationFinisher,
    private readonly runner: JobRunner,
    private readonly opts: { concurrency: number; leaseMs: number; idlePollMs?: number },
    private readonly logger: Logger,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    for (let i = 0; i < this.opts.concurrency; i++) this.loops.push(this.loop());
  }

  /** A new job was queued in this process: wake an idle loop now instead of at its next poll. */
  notify(): void {
    this.wake?.();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.notify();
    for (const c of this.active.values()) c.abort('shutdown' satisfies AbortReason);
    await Promise.allSettled(this.loops);
  }

  private async idle(): Promise<void> {
    await new Promise<void>((resolve) => {
      const t = setTimeout(done, this.opts.idlePollMs ?? 1000);
      const prev = this.wake;
      function done() {
        clearTimeout(t);
        resolve();
      }
      this.wake = () => {
        done();
        prev?.();
      };
    });
    this.wake = null;
  }

  private async loop(): Promise<void> {
    while (this.running) {
      let job: GenerationRecord | null = null;
      try {
        job = await this.store.generations.claimNext(this.owner, this.opts.leaseMs);
      } catch (err) {
        this.logger.warn({ err }, 'claiming a job failed');
      }
      if (!job) {
        await this.idle();
        continue;
      }
      await this.process(job);
    }
  }

  private async process(g: GenerationRecord): Promise<void> {
    const log = this.logger.child({ generationId: g.id, attempt: g.attempts });
    const controller = new AbortController();
    this.active.set(g.id, controller);
    let progress = 0;
    let lastSaved = -1;
    const beat = async () => {
      try {
        if (await this.store.generations.isCancelRequested(g.id))
          controller.abort('canceled' satisfies AbortReason);
        const p = progress !== lastSaved ? progress : undefined;
        const ok = await this.store.generations.heartbeat(g.id, this.owner, this.opts.leaseMs, p);
        if (!ok) controller.abort('lease_lost' satisfies AbortReason);
        else if (p !== undefined) lastSaved = p;
      } catch (err) {
        log.warn({ err }, 'heartbeat failed');
      }
    };
    const timer = setInterval(() => void beat(), Math.max(250, Math.floor(this.opts.leaseMs / 3)));
    const guard = { owner: this.owner, statuses: ['PROCESSING' as const] };
    log.info('generation started');
    try {
      const result = await this.runner.run(g, {
        signal: controller.signal,
        logger: log,
        reportProgress: (pct) => {
          progress = Math.max(progress, Math.min(99, Math.round(pct * 10) / 10));
        },
      });
      clearInterval(timer);
      const done = await this.finisher.finish(g.id, guard, { status: 'COMPLETED', ...result });
      if (done) log.info({ outputDuration: result.outputDuration }, 'generation completed');
      else log.warn('generation finished elsewhere; output discarded');
    } catch (err) {
      clearInterval(timer);
      const reason = controller.signal.aborted ? (controller.signal.reason as AbortReason) : null;
      if (reason === 'lease_lost' || reason === 'shutdown') {
        log.warn({ reason }, 'generation abandoned; the watchdog will retry it');
      } else if (reason === 'canceled') {
        await this.finisher.finish(g.id, guard, {
          status: 'CANCELED',
          error: 'The generation was canceled.',
          errorCode: 'generation_canceled',
        });
        log.info('generation canceled');
      } else if (err instanceof AppError) {
        await this.finisher.finish(g.id, guard, {
          status: 'FAILED',
          error: err.message,
          errorCode: err.code,
          quality: (err.extras.details?.quality as Record<string, unknown> | undefined) ?? null,
        });
        log.info({ errorCode: err.code }, 'generation failed');
      } else {
        log.error({ err }, 'generation failed unexpectedly');
        await this.finisher.finish(g.id, guard, {
          status: 'FAILED',
          error: `Processing failed: ${(err as Error)?.message ?? String(err)}`.slice(0, 1000),
          errorCode: 'generation_processing_failed',
        });
      }
    } finally {
      this.active.delete(g.id);
    }
  }
}
