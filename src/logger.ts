// The process logger (pino, JSON lines). Credentials never reach the log: API keys and authorization
// headers are censored by path, and every line passes through one last filter that blanks URL
// signatures (`sig=`, S3's `X-Amz-Signature=`, `X-Amz-Credential=`) and URL userinfo
// (`https://user:pass@host`) wherever they appear: request URLs, error messages, fetched media URLs.
import { pino, type DestinationStream, type Logger } from 'pino';

const CENSOR = '[redacted]';

/** Header paths censored in any logged object (request logs, errors carrying headers). */
const REDACT_PATHS = [
  'key',
  'headers["x-api-key"]',
  'headers.authorization',
  'headers.cookie',
  'req.headers["x-api-key"]',
  'req.headers.authorization',
  'req.headers.cookie',
  'request.headers["x-api-key"]',
  'request.headers.authorization',
  'request.headers.cookie',
  'err.headers["x-api-key"]',
  'err.headers.authorization',
  // Voice-provider keys (an organization's own account, a TTS job's run input); one level down by
  // censorNestedApiKeys.
  'apiKey',
  'headers["xi-api-key"]',
  'err.headers["xi-api-key"]',
];

// A query value runs to the next &, quote, backslash (JSON escapes), whitespace or fragment.
const SIGNED_QUERY_RE = /([?&](?:sig|x-amz-signature|x-amz-credential|x-amz-security-token)=)[^&"'\\\s#]+/gi;
const USERINFO_RE = /\b([a-z][a-z0-9+.-]*:\/\/)[^/\s"'\\@]+@/gi;

/** A log line (or any text) with URL signatures and URL credentials blanked. */
export function redactSecrets(text: string): string {
  // Both patterns need their character: most lines (every request line without a query) have neither,
  // and two regular expressions over each line were a measurable part of a cheap request's cost.
  if (!text.includes('=') && !text.includes('@')) return text;
  return text.replace(SIGNED_QUERY_RE, `$1${CENSOR}`).replace(USERINFO_RE, `$1${CENSOR}@`);
}

/**
 * `apiKey` censored one level down in a logged object (what pino's `*.apiKey` redaction path did: a
 * path starting with a wildcard made pino run its redactor on every field of every line, about 2.5 µs
 * per request line, bench/results/2026-history.md). Returns the object itself when there is nothing to censor.
 * Child loggers' bindings get the top-level paths only (none of ours binds an object holding a key).
 */
export function censorNestedApiKeys(obj: Record<string, unknown>): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const k in obj) {
    const v = obj[k];
    if (v === null || typeof v !== 'object' || !Object.hasOwn(v, 'apiKey')) continue;
    out ??= { ...obj };
    // An error stays an error of its class (its message and stack are not enumerable; the error
    // serializer reads them).
    out[k] =
      v instanceof Error
        ? Object.assign(Object.create(Object.getPrototypeOf(v) as object) as Error, v, {
            message: v.message,
            stack: v.stack,
            apiKey: CENSOR,
          })
        : { ...v, apiKey: CENSOR };
  }
  return out ?? obj;
}

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'lipsync' },
      redact: { paths: REDACT_PATHS, censor: CENSOR },
      formatters: { log: censorNestedApiKeys },
      hooks: { streamWrite: redactSecrets },
    },
    destination,
  );
}
