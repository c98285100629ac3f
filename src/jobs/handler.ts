// A job handler is everything one kind of work adds to the job system: how its stored payload is read,
// what a run needs (prepared on the server when the job is claimed), the run itself (which may happen
// on another machine), and its resource's part of each transition (in the job system's transactions).
import type { Logger } from 'pino';
import type { Transaction } from 'kysely';
import type { Database } from '../store/schema.js';
import type { JobRecord } from '../store/jobs.js';
import type { FailureKind, JobStatus } from '../domain/jobs.js';
import type { MirroredTable, MirroredValue } from '../store/job-mirror.js';
import type { MeasuredOutput, MeasuredResult, OutputRules } from '../domain/remote-outputs.js';

/** What a run may read and write: inputs by blob key, outputs by name (attempt-scoped keys). */
export interface JobFiles {
  /** Copies the blob to a local file (a temporary download; a link where the store is on this disk). */
  download(key: string, path: string, signal?: AbortSignal): Promise<void>;
  /** Stores a local file as an output of this attempt; returns its key (promoted on completion). */
  upload(name: string, path: string, contentType: string): Promise<string>;
}

export interface RunContext {
  readonly jobId: string;
  readonly attempt: number;
  readonly signal: AbortSignal;
  readonly logger: Logger;
  readonly files: JobFiles;
  /** A temporary folder root for this machine. */
  readonly tempRoot: string;
  /** 0..100; flushed to the database soon after it changes (throttled). */
  progress(percent: number): void;
  /** This process's measurements (GET /metrics); absent where none are kept. */
  readonly metrics?: RunMetrics;
}

/** What a run measures about itself for the metrics of the process that runs it. */
export interface RunMetrics {
  /** The engine step made `frames` frames in `seconds` (decoding, engine and encoding stream together). */
  engineFrames(engine: string, frames: number, seconds: number): void;
}

/** A failure as clients see it: a catalogue code and a message written for users. */
export interface JobError {
  readonly code: string;
  readonly message: string;
  /** Extra facts for the resource (e.g. the engine's quality report). */
  readonly details?: Record<string, unknown>;
}

export type JobOutcome<R> =
  | { readonly status: 'completed'; readonly result: R }
  | { readonly status: 'failed' | 'canceled' | 'timed_out'; readonly error: JobError };

/**
 * Thrown by a long handler that has saved its progress and steps aside: the job goes back to the queue
 * at once, the attempt refunded, so that work of higher priority (or of other organizations) is claimed
 * before the job continues. The handler must resume from where it stopped.
 */
export class JobYield extends Error {
  constructor() {
    super('the job yields to other work and continues later');
    this.name = 'JobYield';
  }
}

/** How a handler reports that a run cannot succeed, or failed for now. */
export class JobFailure extends Error {
  constructor(
    readonly error: JobError,
    readonly failureKind: FailureKind,
    /** The detail for the log (never shown to clients). */
    readonly detail?: unknown,
  ) {
    super(error.message);
    this.name = 'JobFailure';
  }
}

type Trx = Transaction<Database>;

export interface JobHandler<Payload = unknown, Input = unknown, Result = unknown> {
  readonly kind: string;
  /** The payload version new jobs are written with. */
  readonly payloadVersion: number;
  /** Reads a stored payload of any version up to payloadVersion (throws on anything else). */
  parsePayload(raw: unknown, version: number): Payload;
  /** On the server, at claim time: what the run needs, with the decisions made now. */
  prepare(job: JobRecord, payload: Payload): Promise<Input>;
  /** The work. Throws JobFailure (or AppError, or anything: then transient). */
  run(input: Input, ctx: RunContext): Promise<Result>;
  /**
   * Present only on kinds whose run() needs no database or service (it reads and writes blobs through
   * ctx.files): such jobs may also run on remote workers over HTTP (src/jobs/remote-gateway.ts).
   */
  readonly remote?: RemoteRun<Input, Result>;
  /**
   * Loads what a first run would otherwise load (the lip-sync engine's models and threads) when a
   * worker pool that serves this kind starts, so that the first job costs what later ones do. Runs in
   * the background; a failure is logged and the first run then loads as it would have.
   */
  warmUp?(opts: { readonly jobsAtOnce: number }): Promise<void>;
  /** The webhook the kind's resource sends when it ends; absent where it sends none. */
  readonly notification?: JobNotification;
  /** Maps an error thrown by run() that is not a JobFailure (e.g. a catalogue AppError). */
  classify?(err: unknown): JobFailure | null;
  /**
   * How the kind's resource shows its job's state. The job system writes it in each transition's
   * transaction (claim, progress, requeue, settle), for every kind through one function
   * (src/store/job-mirror.ts); a kind without one (a batch, whose state is its children's) has none.
   */
  readonly mirror?: ResourceMirror<Result>;
  /**
   * The rest of a terminal transition (usage, stored outputs, the webhook outbox row), after the mirror
   * moved the resource, in the same transaction. Not called when the resource had already settled.
   */
  onSettled?(trx: Trx, job: JobRecord, outcome: JobOutcome<Result>): Promise<void>;
  /** A parent's part of a child's claim (its first child makes a batch PROCESSING). */
  onChildClaimed?(trx: Trx, parent: JobRecord, child: JobRecord): Promise<void>;
  /** A parent's part of a child's terminal transition (a batch's counters), in the same transaction. */
  onChildSettled?(trx: Trx, parent: JobRecord, child: JobRecord, outcome: JobOutcome<unknown>): Promise<void>;
}

/** A kind's webhook: the outbox and its dispatcher know nothing of the resource behind it. */
export interface JobNotification {
  /** Its event name (webhook_deliveries.event). */
  readonly event: string;
  /**
   * Its body at delivery time, from the resource as it is now (current state, freshly signed URLs),
   * given what was stored when it was enqueued; null: the stored body is sent as it is.
   */
  body(subjectId: string, stored: string): Promise<string | null>;
}

/** A resource's row as its job's state shows on it (all data: the writing is the job system's). */
export interface ResourceMirror<Result> {
  readonly table: MirroredTable;
  /** The resource's status for each state of its job: a pure table in the kind's domain module. */
  readonly statusOf: (status: JobStatus) => string;
  /** Where the resource keeps a failure as clients see it. */
  readonly errorColumns: { readonly code: string; readonly message: string; readonly details?: string };
  /** The row has a progress column that follows the run's (0 when claimed or requeued, 100 when done). */
  readonly showsProgress?: boolean;
  /**
   * A terminal outcome as the resource words it: the failure in its own codes, the result's columns
   * and, where the result decides it, the status (instead of statusOf's).
   */
  settled(outcome: JobOutcome<Result>, job: JobRecord): SettledResource;
}

export interface SettledResource {
  readonly status?: string;
  readonly error?: JobError;
  readonly values?: Readonly<Record<string, MirroredValue>>;
}

/** What the server must know to hand a run to a remote worker and to accept its result. */
export interface RemoteRun<Input, Result> {
  /** Every blob key run() reads with files.download (each becomes a signed GET URL). */
  inputKeys(input: Input): string[];
  /** Every blob key of the result: each must be an upload of this attempt (checked, and probed). */
  outputKeys(result: Result): (string | null)[];
  /** How many files one attempt uploads at most (each within the plan's file size). */
  readonly maxOutputs: number;
  /** Where it depends on the job (a dub also stores each segment's audio): this job's bound instead. */
  outputsOf?(job: JobRecord): Promise<number>;
  /**
   * The result with the figures the server measured from its outputs; a string: unusable outputs.
   * `rules` are the server's own decisions for the job's organization (its plan's watermark).
   */
  measure?(
    result: Result,
    outputs: ReadonlyMap<string, MeasuredOutput>,
    rules: OutputRules,
  ): MeasuredResult<Result> | string;
}

export type AnyJobHandler = JobHandler<any, any, any>;

export class UnknownJobKindError extends Error {
  constructor(readonly kinds: string[]) {
    super(
      `jobs of kind ${kinds.map((k) => JSON.stringify(k)).join(', ')} are waiting but no handler is registered for them`,
    );
    this.name = 'UnknownJobKindError';
  }
}

export class HandlerRegistry {
  private readonly handlers = new Map<string, AnyJobHandler>();

  register<P, I, R>(handler: JobHandler<P, I, R>): this {
    if (this.handlers.has(handler.kind)) throw new Error(`job kind ${handler.kind} is registered twice`);
    this.handlers.set(handler.kind, handler as AnyJobHandler);
    return this;
  }

  get(kind: string): AnyJobHandler {
    const h = this.handlers.get(kind);
    if (!h) throw new UnknownJobKindError([kind]);
    return h;
  }

  has(kind: string): boolean {
    return this.handlers.has(kind);
  }

  /** The notification of the kind that sends `event`. */
  notification(event: string): JobNotification | undefined {
    for (const h of this.handlers.values()) if (h.notification?.event === event) return h.notification;
    return undefined;
  }

  kinds(): string[] {
    return [...this.handlers.keys()];
  }

  /** Throws when any of the stored kinds has no handler (the process must not start). */
  assertCovers(storedKinds: readonly string[]): void {
    const missing = storedKinds.filter((k) => !this.handlers.has(k));
    if (missing.length) throw new UnknownJobKindError(missing);
  }
}
