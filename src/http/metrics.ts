// GET /metrics (Prometheus text format) and the hook that times every other request by its route
// pattern. No API key; with LIPSYNC_METRICS_TOKEN set, the scrape needs `Authorization: Bearer <token>`.
// Processes without the API (worker processes) serve the same route on a listener of their own
// (LIPSYNC_METRICS_PORT), with /healthz beside it.
import { createHash, timingSafeEqual } from 'node:crypto';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyRequest,
} from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Services } from '../services/index.js';
import type { Metrics } from '../metrics/metrics.js';
import { AppError } from '../domain/errors.js';
import { sendError } from './error-body.js';

export const METRICS_PATH = '/metrics';

/** Requests no route matched share one label value: raw URLs would make a series per probe. */
const UNMATCHED_ROUTE = 'unmatched';

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/** Compares in constant time (hashes first: timingSafeEqual needs equal lengths). */
function bearerMatches(request: FastifyRequest, token: string): boolean {
  const header = request.headers.authorization;
  const m = typeof header === 'string' ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return m !== null && timingSafeEqual(digest(m[1]!), digest(token));
}

/** The scrape route alone: the API's and a worker's listener answer it the same way. */
function metricsRoute(app: FastifyInstance, metrics: Metrics, token: string | null): void {
  // Not rate-limited (a scrape is not client traffic): the token or a separate listener protects it.
  const config = { auth: false, rateLimit: false };
  app.get(METRICS_PATH, { config, schema: { hide: true } }, async (request, reply) => {
    if (token !== null && !bearerMatches(request, token)) {
      throw new AppError('unauthorized', {
        message: 'Missing or wrong metrics token.',
        suggestion: 'Send the metrics token (LIPSYNC_METRICS_TOKEN) as Authorization: Bearer <token>.',
        headers: { 'www-authenticate': 'Bearer realm="metrics"' },
      });
    }
    const { body, contentType } = await metrics.scrape();
    return reply.type(contentType).send(body);
  });
}

export function registerMetrics(app: FastifyInstance, services: Services): void {
  const { metrics, config } = services;

  // A callback hook, not an async one: it runs on every response, and a promise per hook costs.
  app.addHook('onResponse', (request, reply, done) => {
    const route = request.routeOptions.url;
    // Scrapes are not traffic.
    if (route !== METRICS_PATH) {
      metrics.httpRequest(
        request.method,
        route ?? UNMATCHED_ROUTE,
        reply.statusCode,
        reply.elapsedTime / 1000,
      );
    }
    done();
  });

  metricsRoute(app, metrics, config.metricsToken);
}

export interface MetricsListener {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * A listener that serves only GET /metrics and GET /healthz (liveness), for processes without the
 * API. Its requests are not counted as HTTP traffic: the process serves no other.
 */
export async function startMetricsListener(opts: {
  readonly metrics: Metrics;
  readonly token: string | null;
  readonly host: string;
  readonly port: number;
  readonly logger: Logger;
}): Promise<MetricsListener> {
  const app = Fastify({
    loggerInstance: opts.logger as FastifyBaseLogger,
    // Scrapes every few seconds would fill the log.
    logController: new LogController({ disableRequestLogging: true }),
    return503OnClosing: true,
  });
  app.setErrorHandler((err, request, reply) => sendError(err, request, reply));
  app.setNotFoundHandler((request, reply) =>
    sendError(
      new AppError('route_not_found', {
        message: `No endpoint ${request.method} ${request.url.split('?')[0]}; this listener serves ${METRICS_PATH} and /healthz.`,
      }),
      request,
      reply,
    ),
  );
  metricsRoute(app, opts.metrics, opts.token);
  app.get('/healthz', async () => ({ status: 'ok' as const }));
  const url = await app.listen({ port: opts.port, host: opts.host });
  return { url, close: () => app.close() };
}

/** The listener of LIPSYNC_METRICS_PORT, when set: the only way to scrape a worker process. */
export async function listenForMetrics(
  config: Config,
  metrics: Metrics,
  logger: Logger,
): Promise<MetricsListener | null> {
  if (config.metricsPort === null) return null;
  const listener = await startMetricsListener({
    metrics,
    token: config.metricsToken,
    host: config.metricsHost,
    port: config.metricsPort,
    logger: logger.child({ component: 'metrics-listener' }),
  });
  logger.info({ url: listener.url }, 'metrics listening');
  return listener;
}
