// Turns any thrown error into the spec's error body. The one place errors leave the service.
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { AppError, ERRORS, isAppError } from '../domain/errors.js';

export interface ErrorBody {
  message: string;
  statusCode: number;
  errorCode?: string;
  suggestion?: string;
  field?: string;
  docsUrl?: string;
  requestId?: string;
  generationId?: string;
  [extra: string]: unknown;
}

const MULTIPART_LIMIT_CODES = new Set([
  'FST_PARTS_LIMIT',
  'FST_FILES_LIMIT',
  'FST_FIELDS_LIMIT',
  'FST_REQ_FILE_TOO_LARGE',
  'FST_PROTO_VIOLATION',
]);

export function appErrorBody(err: AppError): ErrorBody {
  const body: ErrorBody = {
    message: err.message,
    statusCode: err.status,
    errorCode: err.code,
    suggestion: err.suggestion,
  };
  if (err.extras.field) body.field = err.extras.field;
  if (err.extras.generationId) body.generationId = err.extras.generationId;
  if (err.extras.retryAfter !== undefined) body.retryAfter = err.extras.retryAfter;
  if (err.extras.details) Object.assign(body, err.extras.details);
  if (err.extras.dialogueEditSection) body.dialogueEditSection = err.extras.dialogueEditSection;
  if (err.extras.lineNumber !== undefined) body.lineNumber = err.extras.lineNumber;
  return body;
}

/** Field path of the first schema failure, as the client wrote it (e.g. `options.pads`, `input[0].url`). */
function fieldOf(err: FastifyError): string | undefined {
  const v = err.validation?.[0];
  if (!v) return undefined;
  const parts = v.instancePath.split('/').filter(Boolean);
  const missing =
    (v.params as { missingProperty?: string; additionalProperty?: string; tag?: string } | undefined) ?? {};
  if (missing.missingProperty) parts.push(missing.missingProperty);
  else if (missing.additionalProperty) parts.push(missing.additionalProperty);
  // A discriminator's refusal (a oneOf chosen by e.g. `kind`) is about that property.
  else if (v.keyword === 'discriminator' && missing.tag) parts.push(missing.tag);
  let out = '';
  for (const p of parts) out += /^\d+$/.test(p) ? `[${p}]` : out === '' ? p : `.${p}`;
  return out === '' ? err.validationContext : out;
}

export function toAppError(err: unknown): AppError | null {
  if (isAppError(err)) return err;
  const e = err as FastifyError;
  if (e?.validation) {
    const field = fieldOf(e);
    const msg = e.validation[0]?.message ?? 'is invalid';
    const where = field ?? e.validationContext ?? 'request';
    return new AppError('invalid_request', { field, message: `${where} ${msg}`.trim() });
  }
  if (e?.code && MULTIPART_LIMIT_CODES.has(e.code)) {
    return new AppError('generation_input_validation_failed', {
      message: `Multipart limit exceeded: ${e.message}`,
    });
  }
  switch (e?.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError('payload_too_large');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new AppError('unsupported_media_type');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('invalid_request', { message: 'The JSON body is empty.' });
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new AppError('invalid_request', { message: e.message });
    // The router's refusals, before any route runs (Fastify's frameworkErrors).
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new AppError('uri_too_long');
    case 'FST_ERR_BAD_URL':
      return new AppError('invalid_request', {
        message: 'The request URL is not valid (bad percent-encoding).',
      });
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return new AppError('unsupported_media_type', {
        message: 'This endpoint expects multipart/form-data.',
      });
  }
  if (e instanceof SyntaxError || (e as { type?: string })?.type === 'entity.parse.failed') {
    return new AppError('invalid_request', { message: `Malformed JSON body: ${e.message}` });
  }
  const status = (e as { statusCode?: number })?.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    if (status === 413) return new AppError('payload_too_large', { message: e.message });
    if (status === 415) return new AppError('unsupported_media_type', { message: e.message });
    return new AppError('invalid_request', { status, message: e.message });
  }
  return null;
}

export function sendError(err: unknown, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const appErr = toAppError(err);
  if (appErr) {
    if (appErr.status >= 500) request.log.warn({ err, errorCode: appErr.code }, 'request failed');
    for (const [k, v] of Object.entries(appErr.extras.headers ?? {})) void reply.header(k, v);
    return reply.code(appErr.status).type('application/json').send(appErrorBody(appErr));
  }
  request.log.error({ err }, 'unexpected failure');
  const e = ERRORS.internal_error;
  return reply
    .code(500)
    .type('application/json')
    .send({
      message: e.message,
      statusCode: 500,
      errorCode: e.code,
      suggestion: e.suggestion,
      requestId: request.id,
    } satisfies ErrorBody);
}
