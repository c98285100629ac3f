// The server's side of the remote worker protocol (routes: src/http/routes/workers.ts). A remote worker
// holds no database or storage credentials: it presents a worker token on every call, claims a job of
// the kinds it serves (long-polled), gets the handler's prepared input with a signed GET URL for every
// blob key the run reads, and a job token (the claim's lease token) for that one job's calls: heartbeat,
// uploading outputs, and ending the run. Every transition goes through the database adapter of the
// worker port, so fencing, retries and clean-up are the same as for any other worker.
import { timingSafeEqual } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import type { Logger } from 'pino';
import type { Store } from '../store/index.js';
import type { JobRecord } from '../store/jobs.js';
import type { BlobStore } from '../storage/blob-store.js';
import type { WorkerTokenRecord } from '../store/worker-tokens.js';
import { probeMedia } from '../media/probe.js';
import { AppError } from '../domain/errors.js';
import { REMOTE_OWNER_PREFIX, type FailureKind } from '../domain/jobs.js';
import { isPlan, PLAN_LIMITS, watermarksOutputs } from '../domain/plans.js';
import {
  outputBounds,
  uploadAllowance,
  type MeasuredOutput,
  type OutputBounds,
  type OutputRules,
} from '../domain/remote-outputs.js';
import { JobFailure, type HandlerRegistry, type JobError } from './handler.js';
import { ANY_KIND, type EventBus } from './event-bus.js';
import type { JobQueue } from './queue.js';
import { attemptPrefix, DatabaseWorkerPort, type ClaimedJob, type FailResult } from './port.js';
import { streamToFile } from '../stream-to-file.js';
import { sha256File } from '../file-hash.js';

/** The longest a claim is held open when no work is ready. */
export const CLAIM_WAIT_MAX_MS = 25_000;
/** What an output's name may be (it becomes the last part of its blob key). */
export const OUTPUT_NAME_RE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

export interface RemoteGatewayDeps {
  readonly store: Store;
  readonly queue: JobQueue;
  readonly handlers: HandlerRegistry;
  readonly blobs: BlobStore;
  readonly bus: EventBus;
  readonly logger: Logger;
  readonly leaseMs: number;
  readonly tempDir: string;
  readonly publicUrl: string;
  /** The operator's cap on what one attempt uploads in total (LIPSYNC_WORKER_UPLOAD_MAX_BYTES). */
  readonly uploadMaxBytes: number;
}

/** What a claim answers: everything the remote run needs, and nothing else. */
export interface RemoteClaim {
  readonly job: Omit<JobRecord, 'payload'> & { payload: null };
  readonly jobToken: string;
  readonly leaseMs: number;
  readonly input: unknown;
  /** Blob key → signed GET URL, for every key the run reads. */
  readonly inputs: Record<string, string>;
  /** PUT <uploadUrl><name> (worker token and job token) stores an output of this attempt. */
  readonly uploadUrl: string;
}

export type CompleteAnswer =
  | { readonly outcome: 'completed' | 'lost' }
  | { readonly outcome: 'rejected'; readonly result: FailResult; readonly reason: string };

/** The owner recorded on a remote claim: the worker token's id comes first, so its jobs are known. */
const ownerOf = (worker: WorkerTokenRecord, name: string): string =>
  `${REMOTE_OWNER_PREFIX}${worker.id}:${name.replace(/[^A-Za-z0-9._:-]/g, '_').slice(0, 120)}`;

/**
 * Passes bytes through while they stay within `limit`; past it, fails with `tooLarge` before the
 * excess is written (the caller stops reading the request). `onBytes` sees the running count.
 */
class ByteLimit extends Transform {
  private count = 0;

  constructor(
    private readonly limit: number,
    private readonly tooLarge: () => Error,
    private readonly onBytes: (count: number) => void,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.count += chunk.length;
    this.onBytes(this.count);
    if (this.count > this.limit) done(this.tooLarge());
    else done(null, chunk);
  }
}

function sameToken(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

export class RemoteGateway {
  readonly port: DatabaseWorkerPort;
  /** Attempt prefix → output name → bytes received so far, for uploads streaming into this process. */
  private readonly streaming = new Map<string, Map<string, number>>();

  constructor(private readonly deps: RemoteGatewayDeps) {
    this.port = new DatabaseWorkerPort(
      deps.store,
      deps.queue,
      deps.handlers,
      deps.blobs,
      deps.bus,
      deps.logger,
    );
  }

  /** The registered kinds a remote worker may serve (their run needs no database). */
  remoteKinds(): string[] {
    return this.deps.handlers.kinds().filter((k) => this.deps.handlers.get(k).remote !== undefined);
  }

  /** Refuses kinds that are unknown or must run next to the database. */
  checkKinds(kinds: readonly string[]): void {
    const allowed = this.remoteKinds();
    const refused = kinds.filter((k) => !allowed.includes(k));
    if (kinds.length === 0 || refused.length > 0)
      throw new AppError('invalid_request', {
        field: 'kinds',
        message:
          kinds.length === 0
            ? `Name the job kinds to claim (remote workers may serve ${allowed.join(', ')}).`
            : `Jobs of kind ${refused.join(', ')} cannot run on a remote worker (allowed: ${allowed.join(', ')}).`,
      });
  }

  /**
   * Claims a job of the kinds for the worker, waiting up to waitMs for one to become claimable (work
   * announcements wake the wait at once; the next due retry bounds it). Null when none came.
   */
  async claim(
    worker: WorkerTokenRecord,
    name: string,
    kinds: readonly string[],
    waitMs: number,
    signal: AbortSignal,
  ): Promise<RemoteClaim | null> {
    this.checkKinds(kinds);
    const end = Date.now() + Math.max(0, Math.min(waitMs, CLAIM_WAIT_MAX_MS));
    const owner = ownerOf(worker, name);
    for (;;) {
      // Subscribe before looking, so that work announced while the claim runs is not missed.
      let woken = false;
      let wake: () => void = () => {
        woken = true;
      };
      const off = this.deps.bus.onWork((kind) => {
        if (kind === ANY_KIND || kinds.includes(kind)) wake();
      });
      try {
        const c = await this.port.claim(kinds, owner, this.deps.leaseMs);
        if (c) return await this.describe(c);
        const left = end - Date.now();
        if (left <= 0 || signal.aborted) return null;
        if (woken) continue;
        const due = await this.port.nextDueInMs(kinds).catch(() => null);
        const sleep = Math.min(left, due === null ? left : due + 5, 5_000);
        await new Promise<void>((resolve) => {
          const done = () => {
            clearTimeout(t);
            signal.removeEventListener('abort', done);
            resolve();
          };
          const t = setTimeout(done, sleep);
          signal.addEventListener('abort', done, { once: true });
          wake = done;
        });
      } finally {
        off();
      }
    }
  }

  /** The claim's answer: the prepared input and a signed URL for every blob key the run reads. */
  async describe(c: ClaimedJob): Promise<RemoteClaim> {
    const remote = this.deps.handlers.get(c.job.kind).remote;
    if (!remote) throw new Error(`job kind ${c.job.kind} cannot run remotely`);
    // Valid for the whole run: its timeout plus a lease, at least an hour.
    const expiresInSeconds = Math.max(3600, Math.ceil((c.job.timeoutMs + this.deps.leaseMs) / 1000));
    const inputs: Record<string, string> = {};
    for (const key of remote.inputKeys(c.input)) {
      inputs[key] = await this.deps.blobs.signedUrl(key, { expiresInSeconds });
    }
    return {
      job: { ...c.job, payload: null },
      jobToken: c.token,
      leaseMs: this.deps.leaseMs,
      input: c.input,
      inputs,
      uploadUrl: `${this.deps.publicUrl}/v2/workers/jobs/${encodeURIComponent(c.job.id)}/outputs/`,
    };
  }

  /**
   * The running job that this job token holds for this worker, or null: a token of another job, of
   * an earlier attempt, or of another worker token gives access to nothing.
   */
  async held(
    worker: WorkerTokenRecord,
    jobId: string,
    jobToken: string | undefined,
  ): Promise<ClaimedJob | null> {
    if (!jobToken) return null;
    const job = await this.deps.store.jobs.find(jobId);
    if (!job || job.status !== 'running' || !job.leaseToken || !sameToken(job.leaseToken, jobToken))
      return null;
    if (!job.lockedBy?.startsWith(`${REMOTE_OWNER_PREFIX}${worker.id}:`)) return null;
    if (!this.deps.handlers.has(job.kind) || !this.deps.handlers.get(job.kind).remote) return null;
    return { job, token: job.leaseToken, input: null };
  }

  /** Fresh signed URLs for a held job (its URLs ran out during a long run). */
  async input(c: ClaimedJob): Promise<RemoteClaim> {
    const handler = this.deps.handlers.get(c.job.kind);
    const input = await handler.prepare(c.job, handler.parsePayload(c.job.payload, c.job.payloadVersion));
    return this.describe({ ...c, input });
  }

  heartbeat(c: ClaimedJob, progress?: number): Promise<'ok' | 'lost' | 'cancel'> {
    return this.port.heartbeat(c, this.deps.leaseMs, progress);
  }

  /**
   * Stores the request body as an output of this attempt; returns its key. The body is counted while it
   * streams in: past what the attempt may still upload (outputBounds: the plan's file size per file,
   * the kind's number of outputs, the operator's cap on the total) it is refused with 413
   * payload_too_large, the rest is not read and the partial file is removed. `declaredBytes` (the
   * request's Content-Length) is refused before anything is read.
   */
  async upload(
    c: ClaimedJob,
    name: string,
    body: Readable,
    contentType: string,
    declaredBytes?: number,
  ): Promise<string> {
    if (!OUTPUT_NAME_RE.test(name))
      throw new AppError('invalid_request', {
        field: 'name',
        message: 'An output name is 1 to 100 letters, digits, dots, dashes or underscores.',
      });
    const prefix = attemptPrefix(c.job.id, c.token);
    const bounds = await this.outputBoundsOf(c.job);
    let inFlight = this.streaming.get(prefix);
    if (!inFlight) this.streaming.set(prefix, (inFlight = new Map()));
    // Claimed before anything is awaited, so that two uploads to this process count each other.
    const others = new Map(inFlight);
    if (inFlight.has(name))
      throw new AppError('invalid_request', {
        field: 'name',
        message: `Output ${name} of this attempt is being uploaded already.`,
      });
    inFlight.set(name, 0);
    let dir: string | null = null;
    try {
      dir = await mkdtemp(join(this.deps.tempDir, 'remote-upload-'));
      const limit = await this.allowance(prefix, name, bounds, others);
      const refuse = (bytes: number | null) =>
        new AppError('payload_too_large', {
          message:
            `${bytes === null ? 'The output is' : `The output has ${bytes} bytes,`} over the ${limit} bytes this attempt may ` +
            `still upload (${bounds.perFile} per file, ${bounds.perAttempt} for the attempt's ${bounds.files} outputs).`,
          suggestion: "Outputs are held to the organization plan's file size and the server's upload cap.",
        });
      if (declaredBytes !== undefined && declaredBytes > limit) throw refuse(declaredBytes);
      const path = join(dir, 'body');
      const counter = new ByteLimit(
        limit,
        () => refuse(null),
        (n) => inFlight.set(name, n),
      );
      let ended = false;
      const onEnd = () => {
        ended = true;
      };
      const interrupted = () => {
        if (!ended)
          counter.destroy(new AppError('invalid_request', { message: 'The upload was interrupted.' }));
      };
      body.once('end', onEnd);
      body.once('close', interrupted);
      body.once('error', interrupted);
      // Piped, not pipelined: a refusal must leave the request open for the 413, merely unread.
      body.pipe(counter);
      try {
        await streamToFile(counter, [], path);
      } catch (err) {
        body.unpipe(counter);
        body.pause();
        throw err;
      } finally {
        body.off('end', onEnd);
        body.off('close', interrupted);
        body.off('error', interrupted);
      }
      return await this.port.files(c).upload(name, path, contentType);
    } finally {
      inFlight.delete(name);
      if (inFlight.size === 0) this.streaming.delete(prefix);
      if (dir !== null) await rm(dir, { recursive: true, force: true });
    }
  }

  /** The bounds of the job's uploads: its organization's plan and its kind's number of outputs. */
  private async outputBoundsOf(job: JobRecord): Promise<OutputBounds> {
    const org = await this.deps.store.organizations.findById(job.organizationId);
    if (!org || !isPlan(org.plan))
      throw new AppError('invalid_request', { message: "The job's organization no longer exists." });
    const remote = this.deps.handlers.get(job.kind).remote;
    const outputs = (await remote?.outputsOf?.(job)) ?? remote?.maxOutputs ?? 0;
    return outputBounds(PLAN_LIMITS[org.plan].maxFileBytes, outputs, this.deps.uploadMaxBytes);
  }

  /**
   * Bytes `name` may have: what the attempt stored under other names and what streams in under other
   * names now count against the total; a name beyond the kind's number of outputs gets nothing.
   */
  private async allowance(
    prefix: string,
    name: string,
    bounds: OutputBounds,
    streaming: ReadonlyMap<string, number>,
  ): Promise<number> {
    const stored = (await this.deps.blobs.list(prefix)).map((k) => k.slice(prefix.length));
    const names = new Set([...stored, ...streaming.keys()]);
    if (!names.has(name) && names.size >= bounds.files)
      throw new AppError('payload_too_large', {
        message:
          bounds.files === 0
            ? 'Jobs of this kind upload no outputs.'
            : `This attempt has uploaded its ${bounds.files} outputs already (${[...names].join(', ')}).`,
      });
    let used = 0;
    for (const other of stored) {
      if (other === name) continue;
      used += (await this.deps.blobs.stat(`${prefix}${other}`))?.size ?? 0;
    }
    for (const [other, bytes] of streaming) if (other !== name) used += bytes;
    return uploadAllowance(bounds, used);
  }

  /**
   * Completes the job once every output key of the result is an upload of this attempt that exists
   * and that ffprobe reads as media. The figures the kind declares measurable (a generation's duration
   * and frame rate) are replaced by what ffprobe read: the stored and billed numbers are the server's.
   * A result that fails the check ends the attempt as a failure.
   */
  async complete(c: ClaimedJob, result: unknown): Promise<CompleteAnswer> {
    const checked = await this.checkOutputs(c, result);
    if (typeof checked === 'string') {
      this.deps.logger.warn({ jobId: c.job.id, problem: checked }, 'a remote worker sent an unusable result');
      const r = await this.port.fail(
        c,
        new JobFailure(
          { code: 'job_failed', message: 'The job failed because of an internal error.' },
          'transient',
          checked,
        ),
      );
      return { outcome: 'rejected', result: r, reason: checked };
    }
    return { outcome: (await this.port.complete(c, checked.result)) ? 'completed' : 'lost' };
  }

  fail(c: ClaimedJob, error: JobError, kind: FailureKind): Promise<FailResult> {
    return this.port.fail(c, new JobFailure(error, kind, 'reported by a remote worker'));
  }

  stopped(c: ClaimedJob, status: 'canceled' | 'timed_out', error: JobError): Promise<boolean> {
    return this.port.stopped(c, status, error);
  }

  release(c: ClaimedJob): Promise<void> {
    return this.port.release(c);
  }

  /**
   * What the server decides about the job's outputs: the plan's watermark is the organization's at
   * completion, whatever the worker was told (an organization that cannot be read: watermarked).
   */
  private async outputRulesOf(job: JobRecord): Promise<OutputRules> {
    const org = await this.deps.store.organizations.findById(job.organizationId);
    return { watermark: !org || !isPlan(org.plan) || watermarksOutputs(org.plan) };
  }

  /** The result to store (with measured figures), or why it is unusable. */
  private async checkOutputs(c: ClaimedJob, result: unknown): Promise<{ result: unknown } | string> {
    if (result === null || typeof result !== 'object') return 'the result is not an object';
    const remote = this.deps.handlers.get(c.job.kind).remote;
    let keys: (string | null)[];
    try {
      keys = remote?.outputKeys(result as never) ?? [];
    } catch {
      return 'the result lacks its outputs';
    }
    const prefix = attemptPrefix(c.job.id, c.token);
    const measured = new Map<string, MeasuredOutput>();
    for (const key of keys) {
      if (key === null || key === undefined) continue;
      if (typeof key !== 'string' || !key.startsWith(prefix) || key.slice(prefix.length).includes('/'))
        return `output ${JSON.stringify(key)} is not an upload of this attempt`;
      if (!(await this.deps.blobs.exists(key))) return `output ${key} was not uploaded`;
      const dir = await mkdtemp(join(this.deps.tempDir, 'remote-probe-'));
      try {
        const path = join(dir, 'output');
        await this.deps.blobs.download(key, path);
        const probe = await probeMedia(path);
        if (!probe.video && !probe.audio) return `output ${key} holds no audio or video`;
        measured.set(key, {
          durationSeconds: probe.durationSeconds,
          fps: probe.video?.fps ?? null,
          width: probe.video?.width ?? null,
          height: probe.video?.height ?? null,
          hasVideo: probe.video !== null,
          hasAudio: probe.audio !== null,
          sha256: await sha256File(path),
        });
      } catch (err) {
        return `output ${key} is not readable media: ${(err as Error).message}`;
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }
    if (!remote?.measure) return { result };
    const rules = await this.outputRulesOf(c.job);
    let m: ReturnType<NonNullable<typeof remote.measure>>;
    try {
      m = remote.measure(result as never, measured, rules);
    } catch {
      return 'the result lacks its figures';
    }
    if (typeof m === 'string') return m;
    if (Object.keys(m.disagreements).length > 0)
      this.deps.logger.warn(
        { jobId: c.job.id, kind: c.job.kind, figures: m.disagreements },
        "a remote worker reported figures that differ from its outputs; the server's measurements are kept",
      );
    return { result: m.result };
  }
}
