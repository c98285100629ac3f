// A voice resolved when a job is claimed (text-to-speech, a dub's chosen voice) that cannot be: a
// catalogue refusal (deleted, blocked, not found) ends the job; a provider that could not list its
// voices may be back soon, so that one is retried.
import { AppError } from '../domain/errors.js';
import { JobFailure } from '../jobs/handler.js';

export function voiceClaimFailure(err: unknown, jobId: string): unknown {
  if (!(err instanceof AppError)) return err;
  return new JobFailure(
    { code: err.code, message: err.message },
    err.code === 'provider_service_unavailable' ? 'transient' : 'permanent',
    `job ${jobId}`,
  );
}
