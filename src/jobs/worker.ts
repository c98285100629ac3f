// The worker pool: N loops that claim jobs of the kinds this process serves, run their handlers,
// keep the lease alive (and progress flowing) while they run, and end each run through the port.
// Nothing in a loop can take the process down: every error is logged and the loop goes on.
import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import { JOB_CANCELED, JOB_TIMED_OUT, type AbortReason } from '../domain/jobs.js';
import { toFailure, type ClaimedJob, type WorkerPort } from './port.js';
import { JobYield, type HandlerRegistry, type RunMetrics } from './handler.js';
import { ANY_KIND } from './event-bus.js';

export interface WorkerPoolOptions {
  readonly kinds: readonly string[];
  readonly concurrency: number;
  readonly leaseMs: number;
  /** Longest sleep of an idle loop when no wake-up arrives (work queued elsewhere is announced). */
  readonly idlePollMs: number;
  /** The folder runs make their scratch files in; created before the first run. */
  readonly tempRoot: string;
  /** Smallest gap between two progress writes of one run. */
  readonly progressEveryMs?: number;
  /** Handed to every run (the engine's speed). */
  readonly metrics?: RunMetrics;
  /** Warm the handlers of its kinds up at start (JobHandler.warmUp); default true. */
  readonly warmUp?: boolean;
}

const STOP_MESSAGES = {
  canceled: JOB_CANCELED,
  deadline: JOB_TIMED_OUT,
} as const;

export class WorkerPool {
  private running = false;
  private readonly loops: Promise<void>[] = [];
  private readonly sleepers = new Set<() => void>();
  private readonly active = new Map<string, AbortController>();
  private unsubscribe: (() => void) | null = null;
  /** Warm-ups in flight; stop() waits for them (a thread ended mid-load can take the process down). */
  private readonly warming: Promise<void>[] = [];
  readonly owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;

  constructor(
    private readonly port: WorkerPort,
    private readonly registry: HandlerRegistry,
    private readonly opts: WorkerPoolOptions,
    private readonly logger: Logger,
  ) {}

  start(): void {
    if (this.running) return;
    this.running = true;
    this.unsubscribe = this.port.onWork((kind) => {
      if (kind === ANY_KIND || this.opts.kinds.includes(kind)) this.notify();
    });
    for (let i = 0; i < this.opts.concurrency; i++) this.loops.push(this.loop());
    if (this.opts.warmUp !== false) this.warmUp();
  }

  /** JobHandler.warmUp of each kind served, in the background; the loops claim meanwhile. */
  private warmUp(): void {
    for (const kind of this.opts.kinds) {
      const handler = this.registry.get(kind);
      if (!handler.warmUp) continue;
      const started = performance.now();
      this.warming.push(
        handler.warmUp({ jobsAtOnce: this.opts.concurrency }).then(
          () => this.logger.info({ kind, ms: Math.round(performance.now() - started) }, 'job kind warmed up'),
          (err: unknown) => this.logger.warn({ err, kind }, 'warming up failed; the first job loads instead'),
        ),
      );
    }
  }

  /** Wakes idle loops now instead of at their next poll. */
  notify(): void {
    for (const wake of [...this.sleepers]) wake();
  }

  /** Hands running jobs back at once (not counted as attempts) and waits for the loops to end. */
  async stop(): Promise<void> {
    this.running = false;
    this.unsubscribe?.();
    this.notify();
    for (const c of this.active.values()) c.abort('shutdown' satisfies AbortReason);
    await Promise.allSettled([...this.loops, ...this.warming]);
  }

  activeJobs(): string[] {
    return [...this.active.keys()];
  }

  private async sleep(ms: number): Promise<void> {
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(t);
        this.sleepers.delete(done);
        resolve();
      };
      const t = setTimeout(done, ms);
      this.sleepers.add(done);
    });
  }

  private async loop(): Promise<void> {
    let failures = 0;
    while (this.running) {
      let claimed: ClaimedJob | null = null;
      try {
        claimed = await this.port.claim(this.opts.kinds, this.owner, this.opts.leaseMs);
        failures = 0;
      } catch (err) {
        failures++;
        this.logger.warn({ err }, 'claiming a job failed');
        await this.sleep(Math.min(this.opts.idlePollMs, 100 * 2 ** Math.min(failures, 6)));
        continue;
      }
      if (claimed && !this.running) {
        // Stopped while the claim was in flight: hand the job straight back instead of running it.
        await retrying(() => this.port.release(claimed), this.logger, 'handing the job back');
        break;
      }
      if (!claimed) {
        const due = await this.port.nextDueInMs(this.opts.kinds).catch(() => null);
        await this.sleep(due === null ? this.opts.idlePollMs : Math.min(this.opts.idlePollMs, due + 5));
        continue;
      }
      try {
        await this.process(claimed);
      } catch (err) {
        // process() handles its own errors; this is the last line of defence.
        this.logger.error({ err, jobId: claimed.job.id }, 'job processing failed unexpectedly');
      }
    }
  }

  private async process(c: ClaimedJob): Promise<void> {
    const { job } = c;
    const log = this.logger.child({
      jobId: job.id,
      kind: job.kind,
      subjectId: job.subjectId,
      attempt: job.attempts,
    });
    const handler = this.registry.get(job.kind);
    const controller = new AbortController();
    this.active.set(job.id, controller);
    const beats = new Heartbeat(this.port, c, controller, this.opts, log);
    const deadline = setTimeout(
      () => controller.abort('deadline' satisfies AbortReason),
      Math.max(0, job.timeoutMs),
    );
    log.info('job started');
    try {
      let result: unknown;
      try {
        // This process's scratch folder (src/app/scratch.ts) exists once a run may use it.
        await mkdir(this.opts.tempRoot, { recursive: true, mode: 0o700 });
        result = await handler.run(c.input, {
          jobId: job.id,
          attempt: job.attempts,
          signal: controller.signal,
          logger: log,
          files: this.port.files(c),
          tempRoot: this.opts.tempRoot,
          progress: (pct) => beats.progress(pct),
          metrics: this.opts.metrics,
        });
      } catch (err) {
        await beats.stop();
        await this.ended(c, controller.signal, err, handler, log);
        return;
      }
      // Keep the lease alive while the result is written; a failing database is retried.
      const done = await retrying(() => this.port.complete(c, result), log, 'completing the job');
      await beats.stop();
      if (done === true) log.info('job completed');
      else if (done === false) log.warn('job finished elsewhere; its output was discarded');
    } finally {
      clearTimeout(deadline);
      await beats.stop();
      this.active.delete(job.id);
    }
  }

  private async ended(
    c: ClaimedJob,
    signal: AbortSignal,
    err: unknown,
    handler: Parameters<typeof toFailure>[0],
    log: Logger,
  ): Promise<void> {
    const reason = signal.aborted ? (signal.reason as AbortReason) : null;
    if (reason === 'lease_lost') {
      log.warn('lease lost; the run stopped and wrote nothing');
      await this.port.discard(c).catch((e: unknown) => log.warn({ err: e }, 'discarding the run failed'));
    } else if (reason === 'shutdown' || (reason === null && err instanceof JobYield)) {
      await retrying(() => this.port.release(c), log, 'handing the job back');
      log.info(reason === 'shutdown' ? 'job handed back at shutdown' : 'job yielded; it continues later');
    } else if (reason === 'canceled' || reason === 'deadline') {
      const status = reason === 'canceled' ? 'canceled' : 'timed_out';
      await retrying(
        () => this.port.stopped(c, status, STOP_MESSAGES[reason]),
        log,
        `ending the job (${status})`,
      );
      log.info({ status }, 'job stopped');
    } else {
      const failure = toFailure(handler, err);
      if (failure.failureKind === 'transient') log.error({ err: failure.detail ?? err }, 'job failed');
      else log.info({ errorCode: failure.error.code, detail: failure.detail }, 'job failed');
      const r = await retrying(() => this.port.fail(c, failure), log, 'recording the failure');
      if (r) log.info({ result: r, errorCode: failure.error.code }, 'job failure recorded');
    }
  }
}

/**
 * Renews the lease on a schedule and writes progress soon after it changes (at most every
 * progressEveryMs), so that progress moves from the first seconds of a job. Aborts the run when the
 * lease is lost or a cancel is asked for.
 */
class Heartbeat {
  private percent = 0;
  private saved = 0;
  private lastBeat = Date.now();
  private inFlight: Promise<void> | null = null;
  private readonly timer: NodeJS.Timeout;
  private readonly intervalMs: number;
  private readonly progressEveryMs: number;

  constructor(
    private readonly port: WorkerPort,
    private readonly c: ClaimedJob,
    private readonly controller: AbortController,
    private readonly opts: WorkerPoolOptions,
    private readonly log: Logger,
  ) {
    this.intervalMs = Math.max(250, Math.min(5_000, Math.floor(opts.leaseMs / 3)));
    this.progressEveryMs = opts.progressEveryMs ?? 500;
    this.timer = setInterval(() => this.tick(), Math.min(250, this.progressEveryMs));
  }

  progress(pct: number): void {
    this.percent = Math.max(this.percent, Math.min(99, Math.round(pct * 10) / 10));
  }

  private tick(): void {
    if (this.inFlight) return;
    const since = Date.now() - this.lastBeat;
    const progressDue = this.percent !== this.saved && since >= this.progressEveryMs;
    if (since < this.intervalMs && !progressDue) return;
    this.inFlight = this.beat().finally(() => {
      this.inFlight = null;
    });
  }

  private async beat(): Promise<void> {
    const p = this.percent !== this.saved ? this.percent : undefined;
    this.lastBeat = Date.now();
    try {
      const answer = await this.port.heartbeat(this.c, this.opts.leaseMs, p);
      if (answer === 'lost') this.controller.abort('lease_lost' satisfies AbortReason);
      else if (answer === 'cancel') this.controller.abort('canceled' satisfies AbortReason);
      else if (p !== undefined) this.saved = p;
    } catch (err) {
      this.log.warn({ err }, 'heartbeat failed');
    }
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.inFlight;
  }
}

/** Runs a database write a few times with backoff; logs and gives up (the watchdog takes over). */
async function retrying<T>(
  fn: () => Promise<T>,
  log: Logger,
  what: string,
  tries = 4,
): Promise<T | undefined> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (i >= tries) {
        log.error({ err }, `${what} failed; the watchdog will take the job over when its lease expires`);
        return undefined;
      }
      log.warn({ err, try: i }, `${what} failed; retrying`);
      await new Promise((r) => setTimeout(r, 200 * 2 ** i));
    }
  }
}
