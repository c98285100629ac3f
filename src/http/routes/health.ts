// Probes. /health: the database answers (kept as it was). /healthz: the process is up (liveness).
// /readyz: the process can serve traffic now (readiness): the database and the blob store answer, and
// the server is listening and not shutting down (draining after SIGTERM, or closing); otherwise 503
// naming the failed checks.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../services/index.js';
import { AppError } from '../../domain/errors.js';

/** A key nobody writes: the blob store answers exists() for it with a round trip and no data. */
export const READINESS_PROBE_KEY = 'health/readyz-probe';

/** Longest wait for one dependency: a probe must answer before its own timeout (docs/operations.md). */
const CHECK_TIMEOUT_MS = 2000;

export type CheckResult = 'ok' | 'failed' | 'timed_out' | 'not_listening' | 'shutting_down';

export interface Readiness {
  readonly ready: boolean;
  readonly checks: { database: CheckResult; blobStore: CheckResult; server: CheckResult };
}

async function check(what: () => Promise<unknown>, onError: (err: unknown) => void): Promise<CheckResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<CheckResult>((resolve) => {
    timer = setTimeout(() => resolve('timed_out'), CHECK_TIMEOUT_MS);
  });
  try {
    return await Promise.race([
      what().then(
        (): CheckResult => 'ok',
        (err: unknown): CheckResult => {
          onError(err);
          return 'failed';
        },
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Whether this app can serve traffic now. `closing` is true from the start of app.close(); the server
 * state is read after the dependency checks, so a probe in flight when a shutdown begins says so.
 */
export async function readiness(
  services: Services,
  http: { readonly listening: boolean },
  closing: () => boolean,
): Promise<Readiness> {
  const log = (name: string) => (err: unknown) => services.logger.warn({ err, check: name }, 'not ready');
  const [database, blobStore] = await Promise.all([
    check(() => services.db.ping(), log('database')),
    check(() => services.blobs.exists(READINESS_PROBE_KEY), log('blobStore')),
  ]);
  const server: CheckResult = closing() ? 'shutting_down' : http.listening ? 'ok' : 'not_listening';
  const checks = { database, blobStore, server };
  return { ready: Object.values(checks).every((c) => c === 'ok'), checks };
}

export const healthRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });

  app.get(
    '/health',
    {
      // Probes are not client traffic: no client's exhausted rate limit may take the instance out.
      config: { auth: false, rateLimit: false },
      schema: {
        tags: ['health'],
        operationId: 'health.get',
        summary: 'Health: the process is up and the database answers',
        security: [],
        response: { 200: Type.Object({ status: Type.String(), database: Type.String() }) },
      },
    },
    async () => {
      await services.db.ping();
      return { status: 'ok', database: services.db.dialect };
    },
  );

  app.get(
    '/healthz',
    {
      // No rate limit either: a Redis outage must not make the process look dead (and restarted).
      config: { auth: false, rateLimit: false },
      schema: {
        tags: ['health'],
        operationId: 'health.live',
        summary: 'Liveness: the process is up (it checks nothing else).',
        security: [],
        response: { 200: Type.Object({ status: Type.Literal('ok') }) },
      },
    },
    async () => ({ status: 'ok' as const }),
  );

  const Check = Type.String();
  app.get(
    '/readyz',
    {
      config: { auth: false, rateLimit: false },
      schema: {
        tags: ['health'],
        operationId: 'health.ready',
        summary:
          'Readiness: the database and blob store answer, and the server is not shutting down (draining included).',
        security: [],
        response: {
          200: Type.Object({
            status: Type.Literal('ready'),
            checks: Type.Object({ database: Check, blobStore: Check, server: Check }),
          }),
        },
      },
    },
    async (_request, reply) => {
      const r = await readiness(services, app.server, () => closing || services.drain.draining);
      // A shutting-down server waits for open connections: this answer does not keep one.
      if (r.checks.server === 'shutting_down') void reply.header('connection', 'close');
      if (!r.ready) {
        const failed = Object.entries(r.checks)
          .filter(([, v]) => v !== 'ok')
          .map(([k, v]) => `${k} ${v.replaceAll('_', ' ')}`);
        throw new AppError('controller_dependency_error', {
          message: `Not ready: ${failed.join(', ')}.`,
          suggestion: 'Send traffic to another instance; this one is checked again at the next probe.',
          details: { checks: r.checks },
        });
      }
      return { status: 'ready' as const, checks: r.checks };
    },
  );
};
