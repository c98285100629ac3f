// Speech provider failures as clients see them (the one mapping for text-to-speech, voices and dubs):
// the provider's own words go to the log only.
import { AppError } from '../domain/errors.js';
import type { SpeechProviderError } from './types.js';

export function speechError(err: SpeechProviderError, ownKey: boolean, field: string): AppError {
  switch (err.reason) {
    case 'timeout':
      return new AppError('provider_service_unavailable', {
        status: 504,
        message: `The ${err.provider} voice provider did not answer in time.`,
        headers: { 'Retry-After': '5' },
        cause: err,
      });
    case 'quota':
      return new AppError('provider_quota_exceeded', { cause: err });
    case 'key_invalid':
      // A server-wide key the operator configured is not the client's to fix: an outage for them.
      return ownKey
        ? new AppError('provider_api_key_invalid', { cause: err })
        : new AppError('provider_service_unavailable', {
            message: `The ${err.provider} voice provider is not available on this server.`,
            headers: { 'Retry-After': '30' },
            cause: err,
          });
    case 'voice_not_found':
      return new AppError('voice_not_found', { field, cause: err });
    case 'rejected':
      return new AppError('invalid_request', {
        status: 422,
        field: field.replace(/voiceId$/, 'script'),
        message: `The ${err.provider} voice provider refused the script.`,
        cause: err,
      });
    case 'unavailable':
      return new AppError('provider_service_unavailable', {
        message: `The ${err.provider} voice provider is unavailable.`,
        headers: { 'Retry-After': '5' },
        cause: err,
      });
  }
}
