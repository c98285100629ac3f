// The hottest read, answered before Fastify (ADR 19): a client polling `GET /v2/generate/{id}` with
// its API key, no query string, for a generation of its organization. This path does what the
// Fastify route and its hooks do for that request (the same read, rate-limit count, view text,
// headers, metrics and log line) without the framework's per-request frame. Anything else (another
// route, a query string, a missing or unusable key, a draft organization, an unknown generation, a
// refused rate limit, an error, a draining or closing server, LOG_LEVEL=debug) is handed to Fastify
// untouched, which answers it as always; a count already taken is handed over with it
// (`precountedDecision`), so no request is counted twice.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import proxyAddr from '@fastify/proxy-addr';
import fastJsonStringify from 'fast-json-stringify';
import type { Services } from '../services/index.js';
import type { RateDecision } from '../domain/rate-limits.js';
import { ruleFor } from '../domain/rate-limits.js';
import { looksLikeApiKey } from '../domain/api-keys.js';
import { isUuid } from '../domain/ids.js';
import { GenerationSchema } from './schemas/generations.js';
import { requestIdOf } from './request-id.js';
import { writeInfoLine } from '../logger.js';

const PREFIX = '/v2/generate/';
/** The route's pattern: the metrics label and the rate rule's key, as Fastify names it. */
const ROUTE = '/v2/generate/:id';
const UUID_LENGTH = 36;

declare module 'fastify' {
  interface FastifyInstance {
    /** The fast read path in front of this app, when it has one (config.fastRead). */
    fastRead?: FastRead;
  }
}

const precounted = new WeakMap<IncomingMessage, RateDecision>();

/** A rate-limit decision the fast path already took for this request (the gatekeeper uses it once). */
export function precountedDecision(req: IncomingMessage): RateDecision | undefined {
  const d = precounted.get(req);
  if (d !== undefined) precounted.delete(req);
  return d;
}

export type RequestHandler = (req: IncomingMessage, res: ServerResponse) => void;

export interface FastRead {
  /** Answers the request here, or hands it to `next` (Fastify), now or after a lookup. */
  handle(req: IncomingMessage, res: ServerResponse, next: RequestHandler): void;
  /** From now on every request goes to Fastify (the server is closing). */
  stop(): void;
  /** Requests answered here (for tests and benchmarks). */
  readonly answered: number;
}

export function createFastRead(services: Services): FastRead {
  const { config, logger } = services;
  const serialize = fastJsonStringify(GenerationSchema);
  const rule = ruleFor('GET', ROUTE, config.rateLimitDefaultPerMinute);
  const trustAll = () => true;
  let stopped = false;
  let answered = 0;

  const clientAddress = (req: IncomingMessage): string | undefined => {
    if (!config.trustProxy) return req.socket.remoteAddress;
    const all = proxyAddr.all(req, trustAll);
    return all[all.length - 1];
  };

  /** true: answered; false: Fastify should answer (nothing was written). */
  async function answer(
    req: IncomingMessage,
    res: ServerResponse,
    id: string,
    key: string,
    started: number,
  ): Promise<boolean> {
    const auth = await services.apiKeys.authenticate(key, id);
    const generation = auth?.preloaded?.generation;
    if (!auth || auth.organization.draft || !generation) return false;
    let decision: RateDecision | null = null;
    if (config.rateLimitEnabled) {
      decision = await services.rateLimiter.hit(rule, `key:${auth.key.id}`);
      if (!decision.allowed || stopped) {
        precounted.set(req, decision);
        return false;
      }
    }
    let text: string;
    try {
      text = await services.generations.viewJson(
        generation,
        auth.organization,
        { progress: false, quality: false },
        serialize,
      );
    } catch (err) {
      if (decision) precounted.set(req, decision);
      throw err;
    }
    if (stopped || services.drain.draining) {
      // A draining answer closes its connection (app.ts, onSend): Fastify's to give.
      if (decision) precounted.set(req, decision);
      return false;
    }
    const reqId = requestIdOf(req);
    const headers: string[] = [];
    if (decision) {
      headers.push(
        'x-ratelimit-limit',
        String(decision.limit),
        'x-ratelimit-remaining',
        String(decision.remaining),
        'x-ratelimit-reset',
        String(Math.ceil(decision.resetAtMs / 1000)),
      );
    }
    // In the order Fastify sends them (test/integration/fast-read.test.ts compares).
    headers.push(
      'content-type',
      'application/json; charset=utf-8',
      'x-request-id',
      reqId,
      'content-length',
      String(Buffer.byteLength(text)),
    );
    res.writeHead(200, headers);
    res.end(text);
    answered++;
    const ms = performance.now() - started;
    services.metrics.httpRequest('GET', ROUTE, 200, ms / 1000);
    const address = clientAddress(req);
    writeInfoLine(
      logger,
      `"reqId":${JSON.stringify(reqId)},"method":"GET","url":${JSON.stringify(req.url)},` +
        `"statusCode":200,"responseTime":${Math.round(ms * 1000) / 1000}` +
        (address === undefined ? '' : `,"remoteAddress":${JSON.stringify(address)}`),
      'request completed',
    );
    return true;
  }

  return {
    get answered() {
      return answered;
    },
    stop() {
      stopped = true;
    },
    handle(req, res, next) {
      const url = req.url;
      const key = req.headers['x-api-key'];
      if (
        stopped ||
        req.method !== 'GET' ||
        url === undefined ||
        url.length !== PREFIX.length + UUID_LENGTH ||
        !url.startsWith(PREFIX) ||
        typeof key !== 'string' ||
        services.drain.draining ||
        // At debug every request is logged as it arrives, by Fastify's request log alone.
        logger.isLevelEnabled('debug')
      ) {
        next(req, res);
        return;
      }
      const id = url.slice(PREFIX.length);
      const trimmed = key.trim();
      if (!isUuid(id) || !looksLikeApiKey(trimmed)) {
        next(req, res);
        return;
      }
      const started = performance.now();
      answer(req, res, id, trimmed, started).then(
        (done) => {
          if (!done) next(req, res);
        },
        (err: unknown) => {
          // Fastify answers it, errors included, as it answers every other request; an error after
          // the answer went out (metrics, the log line) must not make a second one.
          if (!res.headersSent) next(req, res);
          else logger.error({ err }, 'fast read: failed after answering');
        },
      );
    },
  };
}
