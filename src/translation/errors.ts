// Translation failures as clients see them, like the voice providers' (services/speech.ts): outages
// are 503/504 with Retry-After, a server-wide key or quota the operator owns is an outage for the
// client, and a sentence that cannot be translated is the client's 422.
import { AppError } from '../domain/errors.js';
import type { TranslationError } from './types.js';

export function translationAppError(err: TranslationError): AppError {
  const who = `The ${err.provider} translation provider`;
  const outage = (message: string, retryAfter: number): AppError =>
    new AppError('provider_service_unavailable', {
      message,
      headers: { 'Retry-After': String(retryAfter) },
      cause: err,
    });
  switch (err.reason) {
    case 'timeout':
      return new AppError('provider_service_unavailable', {
        status: 504,
        message: `${who} did not answer in time.`,
        headers: { 'Retry-After': '5' },
        cause: err,
      });
    case 'key_invalid':
    case 'quota':
      return outage(`${who} is not available on this server.`, 30);
    case 'rate_limited':
      return outage(`${who} is busy.`, err.retryAfterSeconds ?? 5);
    case 'untranslatable':
      return new AppError('dubbing_translation_failed', {
        message: `${who} could not translate segment ${err.segmentId ?? '?'}.`,
        cause: err,
      });
    case 'unsupported':
      return new AppError('dubbing_language_unsupported', { cause: err });
    case 'malformed':
    case 'unavailable':
    case 'busy':
    case 'aborted':
      return outage(`${who} is unavailable.`, 5);
  }
}
