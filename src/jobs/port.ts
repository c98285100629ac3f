// The worker port: all a worker needs from the service, whether it runs in the API process, in a
// `lipsync worker` on the database, or (later) on a remote machine over HTTP. This is the database
// adapter. Outputs are written under attempt-scoped keys (jobs/<job>/<lease token>/<name>): a run that
// lost its lease never overwrites anything, and its files are removed; a completion promotes its own
// attempt's keys (the resource row points at them) and removes every other attempt's leftovers.
import type { Logger } from 'pino';
import type { BlobStore } from '../storage/blob-store.js';
import type { HeartbeatAnswer, JobRecord } from '../store/jobs.js';
import type { Store } from '../store/index.js';
import { decideRetry } from '../domain/jobs.js';
import { JobFailure, type HandlerRegistry, type JobError, type JobFiles } from './handler.js';
import type { JobQueue } from './queue.js';
import type { EventBus } from './event-bus.js';

export interface ClaimedJob {
  readonly job: JobRecord;
  readonly token: string;
  /** What the handler's prepare() made of the payload at claim time. */
  readonly input: unknown;
}

export type FailResult = 'retrying' | 'failed' | 'lost';

export interface WorkerPort {
  claim(kinds: readonly string[], owner: string, leaseMs: number): Promise<ClaimedJob | null>;
  heartbeat(c: ClaimedJob, leaseMs: number, progress?: number): Promise<HeartbeatAnswer>;
  /** False when the lease was lost: the result is discarded. */
  complete(c: ClaimedJob, result: unknown): Promise<boolean>;
  fail(c: ClaimedJob, failure: JobFailure): Promise<FailResult>;
  /** Ends a run that stopped on request: canceled, or past its deadline. */
  stopped(c: ClaimedJob, status: 'canceled' | 'timed_out', error: JobError): Promise<boolean>;
  /** Hands the job back at once (graceful shutdown): not counted as an attempt. */
  release(c: ClaimedJob): Promise<void>;
  /** Drops what a run wrote (its lease is gone). */
  discard(c: ClaimedJob): Promise<void>;
  files(c: ClaimedJob): JobFiles;
  /** Milliseconds until the next queued job of these kinds is due, or null when none is queued. */
  nextDueInMs(kinds: readonly string[]): Promise<number | null>;
  onWork(listener: (kind: string) => void): () => void;
}

export const attemptPrefix = (jobId: string, token: string): string => `jobs/${jobId}/${token}/`;

export class DatabaseWorkerPort implements WorkerPort {
  /** Attempt prefixes this process wrote to (listing the store for every job costs more than its SQL). */
  private readonly wrote = new Set<string>();

  constructor(
    private readonly store: Store,
    private readonly queue: JobQueue,
    private readonly registry: HandlerRegistry,
    private readonly blobs: BlobStore,
    private readonly bus: EventBus,
    private readonly logger: Logger,
    private readonly random: () => number = Math.random,
  ) {}

  async claim(kinds: readonly string[], owner: string, leaseMs: number): Promise<ClaimedJob | null> {
    const job = await this.queue.claim(kinds, owner, leaseMs);
    if (!job) return null;
    const token = job.leaseToken as string;
    const handler = this.registry.get(job.kind);
    try {
      const input = await handler.prepare(job, handler.parsePayload(job.payload, job.payloadVersion));
      return { job, token, input };
    } catch (err) {
      // The run cannot even be set up (e.g. its resource is gone): settle or retry like a failed run.
      const c: ClaimedJob = { job, token, input: null };
      const failure = toFailure(handler, err);
      this.logger.warn({ err, jobId: job.id, kind: job.kind }, 'preparing a job failed');
      await this.fail(c, failure);
      return null;
    }
  }

  heartbeat(c: ClaimedJob, leaseMs: number, progress?: number): Promise<HeartbeatAnswer> {
    return this.queue.heartbeat(c.job, c.token, leaseMs, progress);
  }

  async complete(c: ClaimedJob, result: unknown): Promise<boolean> {
    const done = await this.queue.settle(
      c.job,
      { token: c.token, statuses: ['running'] },
      { status: 'completed', result },
    );
    if (done) {
      this.wrote.delete(attemptPrefix(c.job.id, c.token));
      await this.removeOtherAttempts(c.job, c.token);
    } else await this.discard(c);
    return done !== null;
  }

  async fail(c: ClaimedJob, failure: JobFailure): Promise<FailResult> {
    const d = decideRetry(failure.failureKind, c.job.attempts, c.job.maxAttempts, this.random());
    await this.discard(c);
    if (d.retry) {
      const r = await this.queue.requeue(c.job, c.token, {
        delayMs: d.delayMs,
        lastError: `${failure.error.code}: ${failure.error.message}`,
      });
      return r ? 'retrying' : 'lost';
    }
    const s = await this.queue.settle(
      c.job,
      { token: c.token, statuses: ['running'] },
      { status: 'failed', error: failure.error },
    );
    if (s) await this.removeOtherAttempts(c.job, null);
    return s ? 'failed' : 'lost';
  }

  async stopped(c: ClaimedJob, status: 'canceled' | 'timed_out', error: JobError): Promise<boolean> {
    await this.discard(c);
    const s = await this.queue.settle(c.job, { token: c.token, statuses: ['running'] }, { status, error });
    if (s) await this.removeOtherAttempts(c.job, null);
    return s !== null;
  }

  async release(c: ClaimedJob): Promise<void> {
    await this.discard(c);
    await this.queue.requeue(c.job, c.token, { delayMs: 0, refund: true });
  }

  async discard(c: ClaimedJob): Promise<void> {
    const prefix = attemptPrefix(c.job.id, c.token);
    if (!this.wrote.delete(prefix)) return;
    for (const key of await this.blobs.list(prefix)) await this.blobs.delete(key);
  }

  files(c: ClaimedJob): JobFiles {
    const prefix = attemptPrefix(c.job.id, c.token);
    return {
      download: async (key, path) => this.blobs.download(key, path),
      upload: async (name, path, contentType) => {
        const key = `${prefix}${name}`;
        this.wrote.add(prefix);
        await this.blobs.putFile(key, path, { contentType, move: true });
        return key;
      },
    };
  }

  async nextDueInMs(kinds: readonly string[]): Promise<number | null> {
    return this.store.jobs.nextDueInMs(kinds);
  }

  onWork(listener: (kind: string) => void): () => void {
    return this.bus.onWork(listener);
  }

  /**
   * Removes what earlier attempts left (a worker killed mid-run); only a job claimed more than once
   * can have any. With keep null the job ended without output: everything goes.
   */
  private async removeOtherAttempts(job: JobRecord, keep: string | null): Promise<void> {
    if (job.attempts <= 1) return;
    const jobId = job.id;
    try {
      const keepPrefix = keep ? attemptPrefix(jobId, keep) : null;
      for (const key of await this.blobs.list(`jobs/${jobId}/`)) {
        if (!keepPrefix || !key.startsWith(keepPrefix)) await this.blobs.delete(key);
      }
    } catch (err) {
      this.logger.warn({ err, jobId }, 'removing leftover attempt files failed');
    }
  }
}

/** The handler's view of an error thrown by its run: a JobFailure, else transient. */
export function toFailure(handler: { classify?(err: unknown): JobFailure | null }, err: unknown): JobFailure {
  if (isJobFailure(err)) return err;
  const classified = handler.classify?.(err);
  if (classified) return classified;
  return transientFailure(err);
}

function isJobFailure(err: unknown): err is JobFailure {
  return err instanceof JobFailure;
}

function transientFailure(err: unknown): JobFailure {
  return new JobFailure(
    { code: 'job_failed', message: 'The job failed because of an internal error.' },
    'transient',
    err,
  );
}
