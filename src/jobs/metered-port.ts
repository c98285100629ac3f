// Counts the runs of a process's workers (lipsync_worker_runs_total and its duration) by wrapping the
// worker port they use: the same for a worker on the database and a remote one, whose jobs settle on
// the server (so their lipsync_jobs_finished_total is the server's) but whose runs happen here.
import type { HeartbeatAnswer } from '../store/jobs.js';
import type { JobError, JobFailure, JobFiles } from './handler.js';
import type { ClaimedJob, FailResult, WorkerPort } from './port.js';
import type { Metrics, RunOutcome } from '../metrics/metrics.js';

export class MeteredWorkerPort implements WorkerPort {
  /** Claim times by job and lease token: one run each. */
  private readonly started = new Map<string, number>();

  constructor(
    private readonly inner: WorkerPort,
    private readonly metrics: Pick<Metrics, 'workerRun'>,
    private readonly now: () => number = () => performance.now(),
  ) {}

  async claim(kinds: readonly string[], owner: string, leaseMs: number): Promise<ClaimedJob | null> {
    const c = await this.inner.claim(kinds, owner, leaseMs);
    if (c) this.started.set(runKey(c), this.now());
    return c;
  }

  heartbeat(c: ClaimedJob, leaseMs: number, progress?: number): Promise<HeartbeatAnswer> {
    return this.inner.heartbeat(c, leaseMs, progress);
  }

  async complete(c: ClaimedJob, result: unknown): Promise<boolean> {
    const done = await this.inner.complete(c, result);
    this.ended(c, done ? 'completed' : 'lost');
    return done;
  }

  async fail(c: ClaimedJob, failure: JobFailure): Promise<FailResult> {
    const r = await this.inner.fail(c, failure);
    this.ended(c, r);
    return r;
  }

  async stopped(c: ClaimedJob, status: 'canceled' | 'timed_out', error: JobError): Promise<boolean> {
    const done = await this.inner.stopped(c, status, error);
    this.ended(c, done ? status : 'lost');
    return done;
  }

  async release(c: ClaimedJob): Promise<void> {
    await this.inner.release(c);
    this.ended(c, 'released');
  }

  async discard(c: ClaimedJob): Promise<void> {
    await this.inner.discard(c);
    this.ended(c, 'lost');
  }

  files(c: ClaimedJob): JobFiles {
    return this.inner.files(c);
  }

  nextDueInMs(kinds: readonly string[]): Promise<number | null> {
    return this.inner.nextDueInMs(kinds);
  }

  onWork(listener: (kind: string) => void): () => void {
    return this.inner.onWork(listener);
  }

  /** Observes a run once (a write retried after it went through is not counted again). */
  private ended(c: ClaimedJob, outcome: RunOutcome): void {
    const key = runKey(c);
    const at = this.started.get(key);
    if (at === undefined) return;
    this.started.delete(key);
    this.metrics.workerRun(c.job.kind, outcome, (this.now() - at) / 1000);
  }
}

const runKey = (c: ClaimedJob): string => `${c.job.id}\n${c.token}`;
