// The HTTP adapter of the worker port: a remote `lipsync worker --server URL --token T` runs the same
// WorkerPool and handlers as a worker on the database, through the protocol of src/http/routes/workers.ts.
// It holds no database or storage credentials: inputs are read from the signed URLs of the claim and
// outputs are uploaded under the job token; the server checks them before it completes the job.
import { createReadStream } from 'node:fs';
import { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { HeartbeatAnswer, JobRecord } from '../store/jobs.js';
import { JobFailure, type JobError, type JobFiles } from './handler.js';
import type { ClaimedJob, FailResult, WorkerPort } from './port.js';
import type { RemoteClaim } from './remote-gateway.js';
import { streamToFile } from '../stream-to-file.js';

export interface HttpWorkerPortOptions {
  /** The server's base URL (its LIPSYNC_PUBLIC_URL). */
  readonly server: string;
  readonly token: string;
  readonly logger: Logger;
  /** How long the server may hold a claim open (seconds, at most 25). */
  readonly waitSeconds?: number;
}

/** What GET /v2/workers/me answers. */
export interface WorkerIdentity {
  readonly id: string;
  readonly name: string;
  readonly leaseMs: number;
  readonly kinds: string[];
}

export class WorkerProtocolError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = 'WorkerProtocolError';
  }
}

export class HttpWorkerPort implements WorkerPort {
  private readonly base: string;
  private readonly claims = new Map<string, RemoteClaim>();
  private readonly inFlight = new Set<AbortController>();
  private retryAfterMs = 0;

  constructor(private readonly opts: HttpWorkerPortOptions) {
    this.base = opts.server.replace(/\/+$/, '');
  }

  /** Checks the token and learns the server's lease and the kinds it lets remote workers serve. */
  async identify(): Promise<WorkerIdentity> {
    const res = await this.request('GET', '/v2/workers/me');
    return (await this.json(res)) as WorkerIdentity;
  }

  async claim(kinds: readonly string[], owner: string): Promise<ClaimedJob | null> {
    const ctrl = new AbortController();
    this.inFlight.add(ctrl);
    try {
      const res = await this.request(
        'POST',
        '/v2/workers/claim',
        { kinds, name: owner, waitSeconds: this.opts.waitSeconds ?? 25 },
        { signal: ctrl.signal },
      );
      if (res.status === 204) {
        // A draining server says when to ask again (through the balancer: another instance).
        const after = Number(res.headers.get('retry-after'));
        this.retryAfterMs = Number.isInteger(after) && after > 0 ? Math.min(after, 60) * 1000 : 0;
        return null;
      }
      const c = (await this.json(res)) as RemoteClaim;
      this.claims.set(c.job.id, c);
      return { job: c.job as JobRecord, token: c.jobToken, input: c.input };
    } catch (err) {
      if (ctrl.signal.aborted) return null;
      throw err;
    } finally {
      this.inFlight.delete(ctrl);
    }
  }

  async heartbeat(c: ClaimedJob, _leaseMs: number, progress?: number): Promise<HeartbeatAnswer> {
    const res = await this.job(c, 'POST', 'heartbeat', progress === undefined ? {} : { progress });
    // A revoked worker token: this worker may no longer touch the job; stop the run.
    if (res.status === 401) {
      this.opts.logger.error({ jobId: c.job.id }, 'the server refused the worker token; the run stops');
      return 'lost';
    }
    return ((await this.json(res)) as { answer: HeartbeatAnswer }).answer;
  }

  async complete(c: ClaimedJob, result: unknown): Promise<boolean> {
    const r = (await this.json(await this.job(c, 'POST', 'complete', { result }))) as {
      outcome: string;
      reason?: string;
    };
    this.claims.delete(c.job.id);
    if (r.outcome === 'rejected')
      this.opts.logger.error({ jobId: c.job.id, reason: r.reason }, 'the server refused the result');
    return r.outcome === 'completed';
  }

  async fail(c: ClaimedJob, failure: JobFailure): Promise<FailResult> {
    const r = (await this.json(
      await this.job(c, 'POST', 'fail', {
        error: wireError(failure.error),
        failureKind: failure.failureKind,
      }),
    )) as { outcome: FailResult };
    this.claims.delete(c.job.id);
    return r.outcome;
  }

  async stopped(c: ClaimedJob, status: 'canceled' | 'timed_out', error: JobError): Promise<boolean> {
    const r = (await this.json(await this.job(c, 'POST', 'stop', { status, error: wireError(error) }))) as {
      outcome: string;
    };
    this.claims.delete(c.job.id);
    return r.outcome === 'stopped';
  }

  async release(c: ClaimedJob): Promise<void> {
    await this.json(await this.job(c, 'POST', 'release', {}));
    this.claims.delete(c.job.id);
  }

  /** The server removes what a lost attempt uploaded when the job ends; nothing is kept here. */
  async discard(c: ClaimedJob): Promise<void> {
    this.claims.delete(c.job.id);
  }

  files(c: ClaimedJob): JobFiles {
    return {
      download: async (key, path, signal) => {
        let res = await this.fetchInput(c, key, signal);
        if (res.status === 403 || res.status === 410) {
          // The signed URL ran out during a long run: ask for fresh ones with the job token.
          await res.body?.cancel();
          const fresh = (await this.json(await this.job(c, 'GET', 'input'))) as RemoteClaim;
          this.claims.set(c.job.id, { ...this.claimOf(c), inputs: fresh.inputs });
          res = await this.fetchInput(c, key, signal);
        }
        if (!res.ok || !res.body) {
          await res.body?.cancel();
          throw new WorkerProtocolError(res.status, `downloading input ${key} failed (HTTP ${res.status})`);
        }
        await streamToFile(Readable.fromWeb(res.body as never), [], path, { signal });
      },
      upload: async (name, path, contentType) => {
        const claim = this.claimOf(c);
        const res = await fetch(`${claim.uploadUrl}${encodeURIComponent(name)}`, {
          method: 'PUT',
          headers: {
            ...this.auth(),
            'x-job-token': claim.jobToken,
            'content-type': contentType,
          },
          body: Readable.toWeb(createReadStream(path)) as never,
          duplex: 'half',
        } as RequestInit);
        if (res.status === 413) {
          // Over the plan's file size or the server's cap: the same run would make the same file.
          const refused = (await this.json(res).catch((err: unknown) => err)) as Error;
          throw new JobFailure(
            { code: 'job_failed', message: 'The job failed because of an internal error.' },
            'permanent',
            `the server refused output ${name}: ${refused.message}`,
          );
        }
        return ((await this.json(res)) as { key: string }).key;
      },
    };
  }

  /** The server holds the claim open until work is due: the pool may ask again at once (or after Retry-After). */
  async nextDueInMs(): Promise<number | null> {
    const ms = this.retryAfterMs;
    this.retryAfterMs = 0;
    return ms;
  }

  /** Announcements reach remote workers through their held-open claims. */
  onWork(): () => void {
    return () => undefined;
  }

  /** Ends the claims in flight (shutdown): they answer no job. */
  close(): void {
    for (const c of this.inFlight) c.abort();
  }

  private claimOf(c: ClaimedJob): RemoteClaim {
    const claim = this.claims.get(c.job.id);
    if (!claim) throw new Error(`job ${c.job.id} is not held by this worker`);
    return claim;
  }

  private fetchInput(c: ClaimedJob, key: string, signal?: AbortSignal): Promise<Response> {
    const url = this.claimOf(c).inputs[key];
    if (!url) throw new Error(`${key} is not an input of job ${c.job.id}`);
    return fetch(url, { signal });
  }

  private auth(): Record<string, string> {
    return { authorization: `Bearer ${this.opts.token}` };
  }

  private job(c: ClaimedJob, method: 'GET' | 'POST', what: string, body?: unknown): Promise<Response> {
    return this.request(method, `/v2/workers/jobs/${encodeURIComponent(c.job.id)}/${what}`, body, {
      jobToken: c.token,
    });
  }

  private request(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
    opts: { signal?: AbortSignal; jobToken?: string } = {},
  ): Promise<Response> {
    return fetch(`${this.base}${path}`, {
      method,
      headers: {
        ...this.auth(),
        ...(opts.jobToken ? { 'x-job-token': opts.jobToken } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      body: body !== undefined ? JSON.stringify(body) : undefined,
      signal: opts.signal,
    });
  }

  private async json(res: Response): Promise<unknown> {
    const text = await res.text();
    if (!res.ok) {
      let message = text.slice(0, 500);
      try {
        message = (JSON.parse(text) as { message?: string }).message ?? message;
      } catch {
        // not JSON: the text itself
      }
      throw new WorkerProtocolError(res.status, `HTTP ${res.status}: ${message}`);
    }
    return text === '' ? null : JSON.parse(text);
  }
}

/** The error as the protocol takes it (no fields beyond code, message, details). */
function wireError(e: JobError): JobError {
  return { code: e.code, message: e.message, ...(e.details ? { details: e.details } : {}) };
}
