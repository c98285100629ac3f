// The jobs table: how every kind of asynchronous work is queued, claimed, leased and settled. Times
// come from the database clock (milliseconds since the epoch) so that machines with skewed clocks
// share leases correctly. Every write of a run is fenced by the claim's lease token.
import { randomUUID } from 'node:crypto';
import { sql, type Kysely, type RawBuilder, type Selectable, type Transaction } from 'kysely';
import type { Database, JobTable } from './schema.js';
import type { Dialect } from './database.js';
import type { JobStatus, TerminalJobStatus } from '../domain/jobs.js';

export interface JobRecord {
  id: string;
  kind: string;
  subjectId: string;
  organizationId: string;
  payload: unknown;
  payloadVersion: number;
  status: JobStatus;
  priority: number;
  runAt: number;
  attempts: number;
  maxAttempts: number;
  leaseToken: string | null;
  leaseExpiresAt: number | null;
  lockedBy: string | null;
  parentId: string | null;
  shareLimit: number | null;
  timeoutMs: number;
  deadlineAt: number | null;
  cancelRequested: boolean;
  progress: number;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
  startedAt: number | null;
  finishedAt: number | null;
}

export interface NewJob {
  kind: string;
  subjectId: string;
  organizationId: string;
  payload: unknown;
  payloadVersion: number;
  maxAttempts: number;
  timeoutMs: number;
  priority?: number;
  parentId?: string | null;
  /** Bulk work: claimed only while fewer of the organization's bulk jobs than this are running. */
  shareLimit?: number | null;
}

export type HeartbeatAnswer = 'ok' | 'lost' | 'cancel';

type Q = Kysely<Database> | Transaction<Database>;

const n = (v: unknown): number => Number(v);
const nOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : Number(v));

export function toJob(r: Selectable<JobTable>): JobRecord {
  return {
    id: r.id,
    kind: r.kind,
    subjectId: r.subject_id,
    organizationId: r.organization_id,
    payload: JSON.parse(r.payload) as unknown,
    payloadVersion: n(r.payload_version),
    status: r.status as JobStatus,
    priority: n(r.priority),
    runAt: n(r.run_at),
    attempts: n(r.attempts),
    maxAttempts: n(r.max_attempts),
    leaseToken: r.lease_token,
    leaseExpiresAt: nOrNull(r.lease_expires_at),
    lockedBy: r.locked_by,
    parentId: r.parent_id,
    shareLimit: nOrNull(r.share_limit),
    timeoutMs: n(r.timeout_ms),
    deadlineAt: nOrNull(r.deadline_at),
    cancelRequested: n(r.cancel_requested) === 1,
    progress: n(r.progress),
    lastError: r.last_error,
    createdAt: n(r.created_at),
    updatedAt: n(r.updated_at),
    startedAt: nOrNull(r.started_at),
    finishedAt: nOrNull(r.finished_at),
  };
}

export class JobRepository {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  /** The database clock in milliseconds, as an SQL expression. */
  now(): RawBuilder<number> {
    return this.dialect === 'postgres'
      ? sql<number>`(extract(epoch from clock_timestamp()) * 1000)::bigint`
      : sql<number>`cast(unixepoch('subsec') * 1000 as integer)`;
  }

  private plus(ms: number): RawBuilder<number> {
    return sql<number>`(${this.now()} + ${Math.round(ms)})`;
  }

  async clock(): Promise<number> {
    const r = await sql<{ t: number }>`select ${this.now()} as t`.execute(this.db);
    return Number(r.rows[0]!.t);
  }

  async insert(trx: Q, job: NewJob): Promise<JobRecord> {
    const row = await trx
      .insertInto('jobs')
      .values({
        id: randomUUID(),
        kind: job.kind,
        subject_id: job.subjectId,
        organization_id: job.organizationId,
        payload: JSON.stringify(job.payload),
        payload_version: job.payloadVersion,
        status: 'queued',
        priority: job.priority ?? 0,
        run_at: this.now(),
        attempts: 0,
        max_attempts: job.maxAttempts,
        lease_token: null,
        lease_expires_at: null,
        locked_by: null,
        parent_id: job.parentId ?? null,
        share_limit: job.shareLimit ?? null,
        timeout_ms: job.timeoutMs,
        deadline_at: null,
        cancel_requested: 0,
        progress: 0,
        last_error: null,
        created_at: this.now(),
        updated_at: this.now(),
        started_at: null,
        finished_at: null,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return toJob(row);
  }

  /**
   * Takes the next runnable job of the given kinds: highest priority first, then the organization with
   * the fewest running jobs, then the one served longest ago (its turn in job_turns; never served comes
   * first), then the oldest job. With one worker slot nobody is running between jobs, so the turn is
   * what keeps one organization's backlog from going ahead of another's single job. A job with a share
   * limit (a batch child) waits while that many of its organization's shared jobs run. The lease and the
   * run's deadline start now, on the database clock; the attempt is counted. PostgreSQL skips rows other
   * workers are claiming. Call it inside a transaction, then takeTurn() in the same one.
   */
  async claim(trx: Q, kinds: readonly string[], owner: string, leaseMs: number): Promise<JobRecord | null> {
    if (kinds.length === 0) return null;
    const token = randomUUID();
    const lock = this.dialect === 'postgres' ? sql`for update of j skip locked` : sql``;
    const r = await sql<Selectable<JobTable>>`
      update jobs set
        status = 'running',
        attempts = attempts + 1,
        lease_token = ${token},
        locked_by = ${owner},
        lease_expires_at = ${this.plus(leaseMs)},
        deadline_at = ${this.now()} + timeout_ms,
        started_at = coalesce(started_at, ${this.now()}),
        progress = 0,
        updated_at = ${this.now()}
      where id = (
        select j.id from jobs j
        left join (
          select organization_id, count(*) as running,
            sum(case when share_limit is null then 0 else 1 end) as shared
          from jobs where status = 'running'
          group by organization_id
        ) r on r.organization_id = j.organization_id
        left join job_turns t on t.organization_id = j.organization_id
        where j.status = 'queued' and j.kind in (${sql.join([...kinds])}) and j.run_at <= ${this.now()}
          and (j.share_limit is null or coalesce(r.shared, 0) < j.share_limit)
        order by j.priority desc, coalesce(r.running, 0) asc, coalesce(t.turn, 0) asc, j.created_at asc,
          j.id asc
        limit 1
        ${lock}
      ) and status = 'queued'
      returning *`.execute(trx);
    const row = r.rows[0];
    return row ? toJob(row) : null;
  }

  /**
   * Records that the organization was just served (its turn goes behind every other's), in the claim's
   * transaction. On PostgreSQL the row stays locked until the claim commits, so one organization's
   * claims pass here one at a time (sharedRunning then sees the others' commits).
   */
  async takeTurn(trx: Transaction<Database>, organizationId: string): Promise<void> {
    await sql`
      insert into job_turns (organization_id, turn)
      values (${organizationId}, (select coalesce(max(turn), 0) + 1 from job_turns))
      on conflict (organization_id) do update set turn = excluded.turn`.execute(trx);
  }

  /** The organization's running jobs that have a share limit (batch children). */
  async sharedRunning(trx: Q, organizationId: string): Promise<number> {
    const r = await trx
      .selectFrom('jobs')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('organization_id', '=', organizationId)
      .where('status', '=', 'running')
      .where('share_limit', 'is not', null)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  /** Renews the lease (and stores progress); 'lost' when this claim no longer owns the job. */
  async heartbeat(id: string, token: string, leaseMs: number, progress?: number): Promise<HeartbeatAnswer> {
    const r = await this.db
      .updateTable('jobs')
      .set({
        lease_expires_at: this.plus(leaseMs),
        updated_at: this.now(),
        ...(progress !== undefined ? { progress } : {}),
      })
      .where('id', '=', id)
      .where('lease_token', '=', token)
      .where('status', '=', 'running')
      .returning('cancel_requested')
      .executeTakeFirst();
    if (!r) return 'lost';
    return Number(r.cancel_requested) === 1 ? 'cancel' : 'ok';
  }

  /**
   * Moves a job to a terminal state while `guard` holds: the run's lease token, or (for the watchdog
   * and cancels) the statuses it is expected in. Null when someone else settled it first.
   */
  async settle(
    trx: Q,
    id: string,
    guard: { token?: string; statuses: JobStatus[]; leaseExpired?: boolean },
    status: TerminalJobStatus,
    lastError: string | null,
  ): Promise<JobRecord | null> {
    let q = trx
      .updateTable('jobs')
      .set({
        status,
        lease_token: null,
        lease_expires_at: null,
        locked_by: null,
        last_error: lastError,
        ...(status === 'completed' ? { progress: 100 } : {}),
        finished_at: this.now(),
        updated_at: this.now(),
      })
      .where('id', '=', id)
      .where('status', 'in', guard.statuses);
    if (guard.token) q = q.where('lease_token', '=', guard.token);
    if (guard.leaseExpired) q = q.where('lease_expires_at', '<', this.now());
    const r = await q.returningAll().executeTakeFirst();
    return r ? toJob(r) : null;
  }

  /**
   * Puts a running job back in the queue, `delayMs` from now. `refund` gives the attempt back (a
   * graceful shutdown is not the job's fault). Fenced by the lease token; with `leaseExpired`, only
   * while the lease is still expired (a late heartbeat wins).
   */
  async requeue(
    trx: Q,
    id: string,
    token: string,
    opts: { delayMs: number; refund?: boolean; leaseExpired?: boolean; lastError?: string | null },
  ): Promise<JobRecord | null> {
    let q = trx
      .updateTable('jobs')
      .set((eb) => ({
        status: 'queued',
        lease_token: null,
        lease_expires_at: null,
        locked_by: null,
        deadline_at: null,
        progress: 0,
        run_at: this.plus(opts.delayMs),
        updated_at: this.now(),
        ...(opts.refund ? { attempts: eb('attempts', '-', 1) } : {}),
        ...(opts.lastError !== undefined ? { last_error: opts.lastError } : {}),
      }))
      .where('id', '=', id)
      .where('status', '=', 'running')
      .where('lease_token', '=', token);
    if (opts.leaseExpired) q = q.where('lease_expires_at', '<', this.now());
    const r = await q.returningAll().executeTakeFirst();
    return r ? toJob(r) : null;
  }

  /**
   * A settled job of a resource queued again with a new payload (a later stage of the same work, such
   * as a transcript's correction): attempts start over. Null while the job is still queued or running.
   */
  async reopen(
    trx: Q,
    kind: string,
    subjectId: string,
    next: { payload: unknown; payloadVersion: number },
  ): Promise<JobRecord | null> {
    const r = await trx
      .updateTable('jobs')
      .set({
        status: 'queued',
        payload: JSON.stringify(next.payload),
        payload_version: next.payloadVersion,
        attempts: 0,
        run_at: this.now(),
        lease_token: null,
        lease_expires_at: null,
        locked_by: null,
        deadline_at: null,
        cancel_requested: 0,
        progress: 0,
        last_error: null,
        updated_at: this.now(),
        started_at: null,
        finished_at: null,
      })
      .where('kind', '=', kind)
      .where('subject_id', '=', subjectId)
      .where('status', 'not in', ['queued', 'running'])
      .returningAll()
      .executeTakeFirst();
    return r ? toJob(r) : null;
  }

  async expiredLeases(limit = 50): Promise<JobRecord[]> {
    const rows = await this.db
      .selectFrom('jobs')
      .selectAll()
      .where('status', '=', 'running')
      .where('lease_expires_at', '<', this.now())
      .limit(limit)
      .execute();
    return rows.map(toJob);
  }

  /** Running jobs whose run has lasted longer than their timeout allows. */
  async pastDeadline(limit = 50): Promise<JobRecord[]> {
    const rows = await this.db
      .selectFrom('jobs')
      .selectAll()
      .where('status', '=', 'running')
      .where('deadline_at', '<', this.now())
      .limit(limit)
      .execute();
    return rows.map(toJob);
  }

  /**
   * Milliseconds (database clock) until the earliest claimable queued job of these kinds is due; null
   * if none. Jobs held back by their organization's share are not counted: the settle of a shared job
   * announces work again.
   */
  async nextDueInMs(kinds: readonly string[]): Promise<number | null> {
    if (kinds.length === 0) return null;
    const r = await sql<{ due: number | string | null }>`
      select min(j.run_at) - ${this.now()} as due from jobs j
      left join (
        select organization_id, count(*) as shared from jobs
        where status = 'running' and share_limit is not null group by organization_id
      ) r on r.organization_id = j.organization_id
      where j.status = 'queued' and j.kind in (${sql.join([...kinds])})
        and (j.share_limit is null or coalesce(r.shared, 0) < j.share_limit)`.execute(this.db);
    const due = r.rows[0]?.due;
    return due === null || due === undefined ? null : Math.max(0, Number(due));
  }

  async requestCancel(trx: Q, kind: string, subjectId: string): Promise<JobRecord | null> {
    const r = await trx
      .updateTable('jobs')
      .set({ cancel_requested: 1, updated_at: this.now() })
      .where('kind', '=', kind)
      .where('subject_id', '=', subjectId)
      .returningAll()
      .executeTakeFirst();
    return r ? toJob(r) : null;
  }

  async findBySubject(kind: string, subjectId: string, trx: Q = this.db): Promise<JobRecord | null> {
    const r = await trx
      .selectFrom('jobs')
      .selectAll()
      .where('kind', '=', kind)
      .where('subject_id', '=', subjectId)
      .executeTakeFirst();
    return r ? toJob(r) : null;
  }

  async find(id: string, trx: Q = this.db): Promise<JobRecord | null> {
    const r = await trx.selectFrom('jobs').selectAll().where('id', '=', id).executeTakeFirst();
    return r ? toJob(r) : null;
  }

  /** Queued and running jobs per kind and status (GET /metrics): the (status, run_at) index, one pass. */
  async countUnsettled(): Promise<{ kind: string; status: JobStatus; count: number }[]> {
    const rows = await this.db
      .selectFrom('jobs')
      .select(['kind', 'status', (eb) => eb.fn.countAll<number | string>().as('n')])
      .where('status', 'in', ['queued', 'running'])
      .groupBy(['kind', 'status'])
      .execute();
    return rows.map((r) => ({ kind: r.kind, status: r.status as JobStatus, count: Number(r.n) }));
  }

  /** Every kind that has a job not yet settled (the start refuses kinds without a handler). */
  async unsettledKinds(): Promise<string[]> {
    const rows = await this.db
      .selectFrom('jobs')
      .select('kind')
      .distinct()
      .where('status', 'in', ['queued', 'running'])
      .execute();
    return rows.map((r) => r.kind);
  }
}
