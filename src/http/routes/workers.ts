// The remote worker protocol (docs/workers.md): /v2/workers/... Not for API keys: every call presents a
// worker token (Authorization: Bearer lwt_...), checked on every call, so a revoked token is refused at
// once; every call about one job also presents that job's token (X-Job-Token: the claim's lease token),
// which opens that job only, for as long as the claim holds it.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { Services } from '../../services/index.js';
import { AppError } from '../../domain/errors.js';
import { WorkerTokenService } from '../../services/worker-tokens.js';
import type { WorkerTokenRecord } from '../../store/worker-tokens.js';
import { CLAIM_WAIT_MAX_MS, RemoteGateway } from '../../jobs/remote-gateway.js';
import type { ClaimedJob } from '../../jobs/port.js';
import { errorResponses } from '../schemas/common.js';

const JobParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });
const OutputParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 200 }),
  name: Type.String({ minLength: 1, maxLength: 100 }),
});
const JobErrorSchema = Type.Object(
  {
    code: Type.String({ minLength: 1, maxLength: 100 }),
    message: Type.String({ minLength: 1, maxLength: 2000 }),
    details: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  },
  { additionalProperties: false },
);
const ClaimBody = Type.Object(
  {
    kinds: Type.Array(Type.String({ minLength: 1, maxLength: 100 }), { minItems: 1, maxItems: 20 }),
    /** The worker's own name for itself (recorded in jobs.locked_by after the token's id). */
    name: Type.Optional(Type.String({ maxLength: 120 })),
    waitSeconds: Type.Optional(Type.Number({ minimum: 0, maximum: CLAIM_WAIT_MAX_MS / 1000 })),
  },
  { additionalProperties: false },
);
const ClaimResponse = Type.Object({
  job: Type.Object({ id: Type.String(), kind: Type.String() }, { additionalProperties: true }),
  jobToken: Type.String(),
  leaseMs: Type.Integer(),
  input: Type.Unknown(),
  inputs: Type.Record(Type.String(), Type.String()),
  uploadUrl: Type.String(),
});
const Outcome = Type.Object({ outcome: Type.String() }, { additionalProperties: true });
const security = [{ workerToken: [] }];
const headers = Type.Object({ 'x-job-token': Type.Optional(Type.String()) });

export const workerRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const tags = ['workers'];
  const config = { auth: false, rateRule: { bucket: 'workers', max: 6000, windowMs: 60_000 } };
  const tokens = new WorkerTokenService(services.store.db.kysely);
  const gateway = new RemoteGateway({
    store: services.store,
    queue: services.queue,
    handlers: services.handlers,
    blobs: services.blobs,
    bus: services.bus,
    logger: services.logger.child({ component: 'remote-workers' }),
    leaseMs: services.config.jobLeaseMs,
    tempDir: services.config.tempDir,
    publicUrl: services.config.publicUrl,
    uploadMaxBytes: services.config.workerUploadMaxBytes,
  });

  // Outputs arrive as raw bodies of any media type, streamed to disk from request.raw (never buffered).
  // The parser leaves the body unread: a stream as request.body would be walked by the NUL guard.
  app.addContentTypeParser('*', (_req, _payload, done) => done(null));

  async function worker(request: FastifyRequest): Promise<WorkerTokenRecord> {
    const h = request.headers.authorization;
    const m = typeof h === 'string' ? /^Bearer\s+(\S+)$/i.exec(h.trim()) : null;
    const w = await tokens.authenticate(m?.[1]);
    if (!w)
      throw new AppError('unauthorized', {
        message: 'Missing, invalid or revoked worker token.',
        suggestion: 'Send Authorization: Bearer <worker token> (lipsync worker-token create).',
      });
    services.remoteWorkers.seen(w.id); // lipsync_remote_workers_connected
    return w;
  }

  async function held(request: FastifyRequest, id: string): Promise<ClaimedJob | null> {
    const w = await worker(request);
    const t = request.headers['x-job-token'];
    return gateway.held(w, id, typeof t === 'string' ? t : undefined);
  }

  const notHeld = () =>
    new AppError('forbidden', {
      message: 'This job token does not hold the job (another job, an ended claim, or another worker).',
    });

  app.get(
    '/v2/workers/me',
    {
      config,
      schema: {
        tags,
        operationId: 'workers.me',
        security,
        summary: "The worker token's identity, the lease to keep, and the kinds remote workers may serve",
        response: {
          200: Type.Object({
            id: Type.String(),
            name: Type.String(),
            leaseMs: Type.Integer(),
            kinds: Type.Array(Type.String()),
          }),
          ...errorResponses(401),
        },
      },
    },
    async (request) => {
      const w = await worker(request);
      return { id: w.id, name: w.name, leaseMs: services.config.jobLeaseMs, kinds: gateway.remoteKinds() };
    },
  );

  app.post(
    '/v2/workers/claim',
    {
      config,
      schema: {
        tags,
        operationId: 'workers.claim',
        security,
        summary: 'Claim a job (long-polled up to 25 s; 204 when none became claimable)',
        body: ClaimBody,
        response: { 200: ClaimResponse, 204: Type.Null(), ...errorResponses(400, 401) },
      },
    },
    async (request, reply) => {
      const w = await worker(request);
      gateway.checkKinds(request.body.kinds);
      const gone = new AbortController();
      const onClose = () => {
        if (!reply.raw.writableFinished) gone.abort();
      };
      reply.raw.once('close', onClose);
      // The wait also ends when this instance starts draining: "no job", come back later (elsewhere).
      const wait = services.drain.follow(gone.signal);
      const claimed = services.remoteWorkers.claimOpened(w.id);
      try {
        const c = await gateway.claim(
          w,
          request.body.name ?? 'worker',
          request.body.kinds,
          (request.body.waitSeconds ?? CLAIM_WAIT_MAX_MS / 1000) * 1000,
          wait.signal,
        );
        if (c && gone.signal.aborted) {
          // The worker went away while its job was being claimed: hand the job straight back.
          const h = await gateway.held(w, c.job.id, c.jobToken);
          if (h) await gateway.release(h);
          return reply.code(204).send(null);
        }
        if (!c) {
          if (services.drain.draining) void reply.header('retry-after', '1');
          return reply.code(204).send(null);
        }
        return c;
      } finally {
        reply.raw.off('close', onClose);
        wait.dispose();
        claimed();
      }
    },
  );

  app.get(
    '/v2/workers/jobs/:id/input',
    {
      config,
      schema: {
        tags,
        operationId: 'workers.getJobInput',
        security,
        summary: "The held job's input again, with fresh signed URLs",
        params: JobParams,
        headers,
        response: { 200: ClaimResponse, ...errorResponses(401, 403) },
      },
    },
    async (request) => {
      const c = await held(request, request.params.id);
      if (!c) throw notHeld();
      return await gateway.input(c);
    },
  );

  app.post(
    '/v2/workers/jobs/:id/heartbeat',
    {
      config,
      schema: {
        tags,
        operationId: 'workers.heartbeat',
        security,
        summary:
          'Renew the lease and report progress: ok, cancel (stop the run) or lost (stop, write nothing)',
        params: JobParams,
        headers,
        body: Type.Object(
          { progress: Type.Optional(Type.Number({ minimum: 0, maximum: 100 })) },
          { additionalProperties: false },
        ),
        response: {
          200: Type.Object({
            answer: Type.Union([Type.Literal('ok'), Type.Literal('cancel'), Type.Literal('lost')]),
          }),
          ...errorResponses(400, 401),
        },
      },
    },
    async (request) => {
      const c = await held(request, request.params.id);
      if (!c) return { answer: 'lost' as const };
      return { answer: await gateway.heartbeat(c, request.body.progress) };
    },
  );

  app.put(
    '/v2/workers/jobs/:id/outputs/:name',
    {
      config,
      schema: {
        tags,
        operationId: 'workers.putOutput',
        security,
        summary:
          "Upload an output of this attempt (raw body; its Content-Type is kept); 413 past the plan's file size or the attempt's total",
        params: OutputParams,
        headers,
        response: { 201: Type.Object({ key: Type.String() }), ...errorResponses(400, 401, 403, 413) },
      },
    },
    async (request, reply) => {
      const c = await held(request, request.params.id);
      if (!c) throw notHeld();
      const type = (request.headers['content-type'] ?? 'application/octet-stream').split(';')[0]!.trim();
      const length = request.headers['content-length'];
      const declared = length !== undefined && /^\d+$/.test(length) ? Number(length) : undefined;
      try {
        const key = await gateway.upload(c, request.params.name, request.raw, type, declared);
        return reply.code(201).send({ key });
      } catch (err) {
        // A refusal before the body was read to its end closes the connection instead of draining it.
        if (err instanceof AppError && !request.raw.complete)
          err.extras.headers = { ...err.extras.headers, connection: 'close' };
        throw err;
      }
    },
  );

  app.post(
    '/v2/workers/jobs/:id/complete',
    {
      config,
      schema: {
        tags,
        operationId: 'workers.complete',
        security,
        summary:
          'Complete the job: its outputs must be uploads of this attempt that ffprobe reads, else the attempt fails',
        params: JobParams,
        headers,
        body: Type.Object({ result: Type.Unknown() }, { additionalProperties: false }),
        response: { 200: Outcome, ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      const c = await held(request, request.params.id);
      if (!c) return { outcome: 'lost' };
      return gateway.complete(c, request.body.result);
    },
  );

  app.post(
    '/v2/workers/jobs/:id/fail',
    {
      config,
      schema: {
        tags,
        operationId: 'workers.fail',
        security,
        summary: 'Record a failed run: retried with backoff (transient, attempts left) or failed',
        params: JobParams,
        headers,
        body: Type.Object(
          {
            error: JobErrorSchema,
            failureKind: Type.Union([Type.Literal('permanent'), Type.Literal('transient')]),
          },
          { additionalProperties: false },
        ),
        response: { 200: Outcome, ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      const c = await held(request, request.params.id);
      if (!c) return { outcome: 'lost' };
      return { outcome: await gateway.fail(c, request.body.error, request.body.failureKind) };
    },
  );

  app.post(
    '/v2/workers/jobs/:id/stop',
    {
      config,
      schema: {
        tags,
        operationId: 'workers.stop',
        security,
        summary: 'End a run that stopped on request (canceled) or past its deadline (timed_out)',
        params: JobParams,
        headers,
        body: Type.Object(
          {
            status: Type.Union([Type.Literal('canceled'), Type.Literal('timed_out')]),
            error: JobErrorSchema,
          },
          { additionalProperties: false },
        ),
        response: { 200: Outcome, ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      const c = await held(request, request.params.id);
      if (!c) return { outcome: 'lost' };
      return {
        outcome: (await gateway.stopped(c, request.body.status, request.body.error)) ? 'stopped' : 'lost',
      };
    },
  );

  app.post(
    '/v2/workers/jobs/:id/release',
    {
      config,
      schema: {
        tags,
        operationId: 'workers.release',
        security,
        summary: 'Hand the job back at once (worker shutting down): requeued, the attempt not counted',
        params: JobParams,
        headers,
        response: { 200: Outcome, ...errorResponses(401) },
      },
    },
    async (request) => {
      const c = await held(request, request.params.id);
      if (!c) return { outcome: 'lost' };
      await gateway.release(c);
      return { outcome: 'released' };
    },
  );
};
