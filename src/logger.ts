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
  // Voice-provider keys (an organization's own account, a TTS job's run input).
  'apiKey',
  '*.apiKey',
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

export function createLogger(level: string, destination?: DestinationStream): Logger {
  return pino(
    {
      level,
      base: { service: 'lipsync' },
      redact: { paths: REDACT_PATHS, censor: CENSOR },
      hooks: { streamWrite: redactSecrets },
    },
    destination,
  );
}
