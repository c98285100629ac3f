// One onRequest hook: resolve the API key, count the request against its rate limit, then refuse
// unauthenticated or draft-organization calls. Counting before refusing makes failed key guesses
// count against the caller's IP.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../services/index.js';
import type { AuthContext } from '../services/api-keys.js';
import { AppError } from '../domain/errors.js';
import { ruleFor, type RateRule } from '../domain/rate-limits.js';
import { isUuid } from '../domain/ids.js';

declare module 'fastify' {
  interface FastifyRequest {
    auth: AuthContext | null;
  }
  interface FastifyContextConfig {
    /** false for endpoints that need no API key (the error catalogue, signed files, docs). */
    auth?: boolean;
    /** A rate rule for this route other than the tabled/default one. */
    rateRule?: RateRule;
    /**
     * false for the probes and /metrics: no client's exhausted limit (nor a Redis outage) may make a
     * load balancer or Prometheus lose the instance.
     */
    rateLimit?: boolean;
    /**
     * 'generation': the route reads the generation of its `:id` parameter; it is read in the same
     * query as the key (AuthContext.preloaded), one round trip instead of two.
     */
    authPreload?: 'generation';
  }
}

export function requireAuth(request: FastifyRequest): AuthContext {
  if (!request.auth) throw new AppError('unauthorized');
  return request.auth;
}

export function registerGatekeeper(app: FastifyInstance, services: Services): void {
  app.decorateRequest('auth', null);
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    const routeUrl = request.routeOptions.url;
    if (routeUrl === undefined) return; // unknown route: the 404 handler answers
    const cfg = request.routeOptions.config;
    const needsAuth = cfg.auth !== false;

    const header = request.headers['x-api-key'];
    const raw = Array.isArray(header) ? undefined : header;
    let preloadId: string | undefined;
    if (cfg.authPreload === 'generation') {
      const id = (request.params as { id?: unknown }).id;
      if (typeof id === 'string' && isUuid(id)) preloadId = id;
    }
    request.auth = needsAuth ? await services.apiKeys.authenticate(raw?.trim(), preloadId) : null;

    if (services.config.rateLimitEnabled && cfg.rateLimit !== false) {
      const rule =
        cfg.rateRule ?? ruleFor(request.method, routeUrl, services.config.rateLimitDefaultPerMinute);
      const identity = request.auth ? `key:${request.auth.key.id}` : `ip:${request.ip}`;
      const d = await services.rateLimiter.hit(rule, identity);
      void reply.header('X-RateLimit-Limit', d.limit);
      void reply.header('X-RateLimit-Remaining', d.remaining);
      void reply.header('X-RateLimit-Reset', Math.ceil(d.resetAtMs / 1000));
      if (!d.allowed) {
        throw new AppError('rate_limit_exceeded', {
          message: `Rate limit of ${d.limit} requests per ${Math.round(rule.windowMs / 1000)} s exceeded.`,
          retryAfter: d.retryAfterSeconds,
          headers: { 'Retry-After': String(d.retryAfterSeconds) },
          details: { error: 'Too Many Requests', resetTime: new Date(d.resetAtMs).toISOString() },
        });
      }
    }

    if (!needsAuth) return;
    if (!request.auth) throw new AppError('unauthorized');
    if (request.auth.organization.draft) throw new AppError('organization_draft');
  });
}
