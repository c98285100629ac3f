// Refuses U+0000 (NUL) anywhere in a request's path parameters, query string and body, before any
// handler sees it. PostgreSQL cannot store NUL in text (it fails the query, which would be a 500) and no
// field of this API has a use for it, so it is a 400 invalid_request naming the field, on every
// database alike. Multipart text fields are checked where they are read (src/http/multipart.ts); the
// body /v2/generate builds from them passes through here too; each record of a batch file is checked
// as it is parsed (domain/batches.ts), with the same walk.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { AppError } from '../domain/errors.js';
import { findNul, nulMessage } from '../domain/nul.js';

export function assertNoNul(request: FastifyRequest): void {
  const parts: [string, unknown][] = [
    ['path', request.params],
    ['query', request.query],
    ['body', request.body],
  ];
  for (const [where, value] of parts) {
    const field = findNul(value);
    if (field === null) continue;
    const name = field === '' ? where : field;
    throw new AppError('invalid_request', {
      field: name,
      message: nulMessage(name),
    });
  }
}

/**
 * True when value holds no NUL and that is plain without walking it: nothing, a primitive, or an
 * object of primitives only (path parameters and most query strings). It allocates nothing. False
 * means "look closer" (findNul decides), not "holds NUL".
 */
export function plainlyFreeOfNul(value: unknown): boolean {
  if (value === undefined || value === null) return true;
  if (typeof value === 'string') return !value.includes('\u0000');
  if (typeof value !== 'object') return true;
  if (Buffer.isBuffer(value)) return true; // findNul does not look into buffers either
  if (Array.isArray(value)) return false;
  for (const k in value) {
    if (!Object.prototype.hasOwnProperty.call(value, k)) continue;
    if (k.includes('\u0000')) return false;
    const v = (value as Record<string, unknown>)[k];
    if (typeof v === 'string') {
      if (v.includes('\u0000')) return false;
    } else if (v !== null && typeof v === 'object') {
      return false;
    }
  }
  return true;
}

/**
 * preHandler, not preValidation: route-level preValidation hooks run after the global ones, and
 * POST /v2/generate builds its multipart body in one; by preHandler every body is in place.
 * A callback hook, not an async one: it runs on every request, and a promise per hook costs.
 */
export function registerNulGuard(app: FastifyInstance): void {
  app.addHook('preHandler', (request, _reply, done) => {
    if (
      plainlyFreeOfNul(request.params) &&
      plainlyFreeOfNul(request.query) &&
      plainlyFreeOfNul(request.body)
    ) {
      done();
      return;
    }
    try {
      assertNoNul(request);
    } catch (err) {
      done(err as Error);
      return;
    }
    done();
  });
}
