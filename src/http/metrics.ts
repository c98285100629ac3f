// GET /metrics (Prometheus text format) and the hook that times every other request by its route
// pattern. No API key; with LIPSYNC_METRICS_TOKEN set, the scrape needs `Authorization: Bearer <token>`.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Services } from '../services/container.js';
import { AppError } from '../domain/errors.js';

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

export function registerMetrics(app: FastifyInstance, services: Services): void {
  const { metrics, config } = services;

  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url;
    if (route === METRICS_PATH) return; // scrapes are not traffic
    metrics.httpRequest(request.method, route ?? UNMATCHED_ROUTE, reply.statusCode, reply.elapsedTime / 1000);
  });

  app.get(METRICS_PATH, { config: { auth: false }, schema: { hide: true } }, async (request, reply) => {
    if (config.metricsToken !== null && !bearerMatches(request, config.metricsToken)) {
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
