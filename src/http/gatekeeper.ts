// One onRequest hook: resolve the API key (or, without one, the web session cookie), count the request
// against its rate limit, then refuse cross-site cookie requests, unauthenticated or draft-organization
// calls. Counting before refusing makes failed key guesses count against the caller's IP.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../services/index.js';
import type { AuthContext } from '../services/api-keys.js';
import { AppError } from '../domain/errors.js';
import { rateLimitedError, ruleFor, type RateRule } from '../domain/rate-limits.js';
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
    /**
     * true for /api/auth/*: a state-changing request that sends a cookie or an Origin must come from a
     * trusted origin, as for cookie-authenticated /v2 calls.
     */
    sessionEndpoint?: boolean;
  }
}

export function requireAuth(request: FastifyRequest): AuthContext {
  if (!request.auth) throw new AppError('unauthorized');
  return request.auth;
}

/** Identity of the rate-limit counters: the key, the signed-in user, else the client address. */
function identityOf(request: FastifyRequest): string {
  const a = request.auth;
  if (a?.key) return `key:${a.key.id}`;
  if (a?.session) return `user:${a.session.userId}`;
  return `ip:${request.ip}`;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);

/**
 * CSRF protection of cookie-authenticated requests (besides SameSite cookies): a state-changing one
 * must come from a page of a trusted origin (Origin, else Referer). Browsers send Origin on every
 * cross-origin request and on same-origin POSTs.
 */
function fromTrustedOrigin(request: FastifyRequest, trusted: readonly string[]): boolean {
  let origin = request.headers.origin;
  if (origin === undefined && typeof request.headers.referer === 'string') {
    try {
      origin = new URL(request.headers.referer).origin;
    } catch {
      return false;
    }
  }
  return typeof origin === 'string' && trusted.includes(origin);
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
    // An x-api-key header decides alone (API clients work exactly as before); without one, a session
    // cookie may authenticate.
    request.auth = !needsAuth
      ? null
      : header !== undefined
        ? await services.apiKeys.authenticate(raw?.trim(), preloadId)
        : await services.webSessions.authenticate(request.headers);

    if (services.config.rateLimitEnabled && cfg.rateLimit !== false) {
      const rule =
        cfg.rateRule ?? ruleFor(request.method, routeUrl, services.config.rateLimitDefaultPerMinute);
      const d = await services.rateLimiter.hit(rule, identityOf(request));
      void reply.header('X-RateLimit-Limit', d.limit);
      void reply.header('X-RateLimit-Remaining', d.remaining);
      void reply.header('X-RateLimit-Reset', Math.ceil(d.resetAtMs / 1000));
      if (!d.allowed) throw rateLimitedError(d, rule);
    }

    const browserRequest =
      request.auth?.session != null ||
      (cfg.sessionEndpoint === true &&
        (request.headers.cookie !== undefined || request.headers.origin !== undefined));
    if (
      browserRequest &&
      !SAFE_METHODS.has(request.method) &&
      !fromTrustedOrigin(request, services.config.sessions.trustedOrigins)
    )
      throw new AppError('cross_site_request');

    if (!needsAuth) return;
    if (!request.auth) throw new AppError('unauthorized');
    if (request.auth.organization.draft) throw new AppError('organization_draft');
  });
}
