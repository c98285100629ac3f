// Every transition of a job, each in one transaction with its resource's part (the kind's mirror,
// written here for every kind alike, and the handler's hooks), followed by the wake-ups: long-poll
// waiters on the resource, idle workers for the kind. Workers, the watchdog and the services all go
// through here; nothing else writes the jobs table.
import type { Logger } from 'pino';
import type { Store } from '../store/index.js';
import type { HeartbeatAnswer, JobRecord, NewJob } from '../store/jobs.js';
import type { JobStatus, TerminalJobStatus } from '../domain/jobs.js';
import type { Transaction } from 'kysely';
import type { Database } from '../store/schema.js';
import type { EventBus } from './event-bus.js';
import type { AnyJobHandler, HandlerRegistry, JobOutcome } from './handler.js';
import type { MirroredValue } from '../store/job-mirror.js';
import type { Metrics } from '../metrics/metrics.js';

/** Rolls back a claim that lost the race for its organization's last shared slot. */
class ShareLimitRace extends Error {}

export class JobQueue {
  constructor(
    private readonly store: Store,
    private readonly registry: HandlerRegistry,
    private readonly bus: EventBus,
    private readonly logger: Logger,
    private readonly metrics: Metrics | null = null,
  ) {}

  /** Inside the resource's create transaction; call announce() after the commit. */
  async enqueue(trx: Transaction<Database>, job: NewJob): Promise<JobRecord> {
    if (!this.registry.has(job.kind)) throw new Error(`no handler for job kind ${job.kind}`);
    return this.store.jobs.insert(trx, job);
  }

  /** A settled job of `subjectId` queued again with a new payload (see JobRepository.reopen). */
  async reopen(
    trx: Transaction<Database>,
    kind: string,
    subjectId: string,
    next: { payload: unknown; payloadVersion: number },
  ): Promise<JobRecord | null> {
    if (!this.registry.has(kind)) throw new Error(`no handler for job kind ${kind}`);
    return this.store.jobs.reopen(trx, kind, subjectId, next);
  }

  async announce(kind: string): Promise<void> {
    await this.bus.announceWork(kind).catch((err: unknown) => {
      // Workers also poll: a lost announcement delays a job, it never loses one.
      this.logger.warn({ err, kind }, 'announcing work failed');
    });
  }

  /**
   * The next job of these kinds, or null. The claim takes its organization's turn (fair share) in the
   * same transaction; a claim that would run more of an organization's shared jobs than their limit
   * (two PostgreSQL workers claiming at once, each seeing the other's job not yet committed) is rolled
   * back and tried again.
   */
  async claim(kinds: readonly string[], owner: string, leaseMs: number): Promise<JobRecord | null> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.store.db.kysely.transaction().execute(async (trx) => {
          const job = await this.store.jobs.claim(trx, kinds, owner, leaseMs);
          if (!job) return null;
          await this.store.jobs.takeTurn(trx, job.organizationId);
          if (
            job.shareLimit !== null &&
            (await this.store.jobs.sharedRunning(trx, job.organizationId)) > job.shareLimit
          )
            throw new ShareLimitRace();
          await this.mirrorActive(trx, job, 'running');
          const parent = job.parentId ? await this.store.jobs.find(job.parentId, trx) : null;
          if (parent) await this.registry.get(parent.kind).onChildClaimed?.(trx, parent, job);
          return job;
        });
      } catch (err) {
        if (!(err instanceof ShareLimitRace)) throw err;
        // The next try sees the winner's claim committed and skips the held-back job.
        if (attempt === 3) return null;
      }
    }
  }

  /** Renews the lease; progress (when given) is stored and mirrored onto the resource. */
  async heartbeat(
    job: JobRecord,
    token: string,
    leaseMs: number,
    progress?: number,
  ): Promise<HeartbeatAnswer> {
    const answer = await this.store.jobs.heartbeat(job.id, token, leaseMs, progress);
    const mirror = this.registry.get(job.kind).mirror;
    if (answer === 'ok' && progress !== undefined && mirror?.showsProgress) {
      const running = mirror.statusOf('running');
      await this.store.jobMirror.write(mirror.table, job.subjectId, [running], {
        values: { progress },
        updatedAt: new Date().toISOString(),
      });
    }
    return answer;
  }

  /**
   * A terminal transition, while `guard` holds (the run's token, or the expected statuses). Returns
   * the settled job, or null when someone else settled or requeued it first (then nothing is written).
   */
  async settle<R>(
    job: JobRecord,
    guard: { token?: string; statuses: JobStatus[]; leaseExpired?: boolean },
    outcome: JobOutcome<R>,
  ): Promise<JobRecord | null> {
    const status: TerminalJobStatus = outcome.status;
    const lastError =
      outcome.status === 'completed' ? null : `${outcome.error.code}: ${outcome.error.message}`;
    const settled = await this.store.db.kysely.transaction().execute(async (trx) => {
      const s = await this.store.jobs.settle(trx, job.id, guard, status, lastError);
      if (!s) return null;
      const handler = this.registry.get(s.kind);
      if (await this.mirrorSettled(trx, handler, s, outcome)) await handler.onSettled?.(trx, s, outcome);
      // A child's end is part of its parent (a batch's counters), in the same transaction.
      const parent = s.parentId ? await this.store.jobs.find(s.parentId, trx) : null;
      if (parent) await this.registry.get(parent.kind).onChildSettled?.(trx, parent, s, outcome);
      return { s, parent };
    });
    if (!settled) return null;
    this.metrics?.jobSettled(settled.s);
    await this.bus.publish(settled.s.subjectId).catch(() => undefined);
    if (settled.parent) await this.bus.publish(settled.parent.subjectId).catch(() => undefined);
    // Its organization's share has room again: idle workers may now claim a held-back sibling.
    if (settled.s.shareLimit !== null) await this.announce(settled.s.kind);
    return settled.s;
  }

  /** Back to the queue (retry after a delay, lost worker, or a graceful shutdown that refunds). */
  async requeue(
    job: JobRecord,
    token: string,
    opts: { delayMs: number; refund?: boolean; leaseExpired?: boolean; lastError?: string | null },
  ): Promise<JobRecord | null> {
    const requeued = await this.store.db.kysely.transaction().execute(async (trx) => {
      const r = await this.store.jobs.requeue(trx, job.id, token, opts);
      if (r) await this.mirrorActive(trx, r, 'queued');
      return r;
    });
    if (requeued) {
      await this.bus.publish(requeued.subjectId).catch(() => undefined);
      if (opts.delayMs <= 0) await this.announce(requeued.kind);
    }
    return requeued;
  }

  /** The resource of a claimed (running) or requeued (queued) job; a settled resource stays as it is. */
  private async mirrorActive(trx: Transaction<Database>, job: JobRecord, state: 'queued' | 'running') {
    const mirror = this.registry.get(job.kind).mirror;
    if (!mirror) return;
    const now = new Date().toISOString();
    await this.store.jobMirror.write(
      mirror.table,
      job.subjectId,
      [mirror.statusOf('queued'), mirror.statusOf('running')],
      {
        status: mirror.statusOf(state),
        ...(mirror.showsProgress ? { values: { progress: 0 } } : {}),
        ...(state === 'running' ? { startedAt: now } : {}),
        updatedAt: now,
      },
      trx,
    );
  }

  /** The resource's terminal state; false when it had already left its live statuses. */
  private async mirrorSettled<R>(
    trx: Transaction<Database>,
    handler: AnyJobHandler,
    job: JobRecord,
    outcome: JobOutcome<R>,
  ): Promise<boolean> {
    const mirror = handler.mirror;
    if (!mirror) return true;
    const own = mirror.settled(outcome, job);
    const cols = mirror.errorColumns;
    const error = own.error ?? (outcome.status === 'completed' ? null : outcome.error);
    const values: Record<string, MirroredValue> = {
      [cols.code]: error?.code ?? null,
      [cols.message]: error?.message ?? null,
      ...(cols.details ? { [cols.details]: error?.details ? JSON.stringify(error.details) : null } : {}),
      ...(mirror.showsProgress && outcome.status === 'completed' ? { progress: 100 } : {}),
      ...own.values,
    };
    const now = new Date().toISOString();
    return this.store.jobMirror.write(
      mirror.table,
      job.subjectId,
      [mirror.statusOf('queued'), mirror.statusOf('running')],
      { status: own.status ?? mirror.statusOf(outcome.status), values, finishedAt: now, updatedAt: now },
      trx,
    );
  }

  /**
   * Asks for the job of a resource to stop. A queued job is canceled at once; a running one stops at
   * its next heartbeat (its worker settles it). Returns the job as it stands, or null when none.
   */
  async cancel(
    kind: string,
    subjectId: string,
    error: { code: string; message: string },
  ): Promise<JobRecord | null> {
    const job = await this.store.jobs.requestCancel(this.store.db.kysely, kind, subjectId);
    if (!job) return null;
    if (job.status === 'queued') {
      return (await this.settle(job, { statuses: ['queued'] }, { status: 'canceled', error })) ?? job;
    }
    return job;
  }
}
