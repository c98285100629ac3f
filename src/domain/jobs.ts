// Rules of the job system that need no I/O: states, retry delays, and what a run's failure means.

/** How the work of a job stands. Public resources (generations, ...) keep their own statuses. */
export const JOB_STATUSES = ['queued', 'running', 'completed', 'failed', 'canceled', 'timed_out'] as const;
export type JobStatus = (typeof JOB_STATUSES)[number];
export type TerminalJobStatus = Exclude<JobStatus, 'queued' | 'running'>;

export function isTerminalJobStatus(s: JobStatus): s is TerminalJobStatus {
  return s !== 'queued' && s !== 'running';
}

/** Priorities: higher runs first. Interactive work outranks bulk work (batch children). */
export const JOB_PRIORITY = { interactive: 0, bulk: -10 } as const;

/** How a remote worker's claim names its owner (jobs.locked_by): `remote:<worker token id>:<name>`. */
export const REMOTE_OWNER_PREFIX = 'remote:';

/** Whether a claim is a remote worker's. */
export function isRemoteOwner(lockedBy: string | null): boolean {
  return lockedBy?.startsWith(REMOTE_OWNER_PREFIX) ?? false;
}

export const RETRY_BASE_MS = 2_000;
export const RETRY_MAX_MS = 5 * 60_000;

/**
 * Delay before attempt `attempt + 1` after `attempt` failed: exponential from RETRY_BASE_MS, capped,
 * with up to 25 % jitter (`random` in [0, 1)) so that jobs failed together do not retry together.
 */
export function retryDelayMs(attempt: number, random: number, baseMs = RETRY_BASE_MS, maxMs = RETRY_MAX_MS) {
  const exp = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(exp * (1 - 0.25 * Math.min(Math.max(random, 0), 0.999)));
}

/** Why a run stopped without an outcome of its own. */
export type AbortReason = 'lease_lost' | 'canceled' | 'shutdown' | 'deadline';

/**
 * What a handler's failure leads to. `permanent` failures (the request itself cannot succeed: no face,
 * unreadable media) end the job at once; `transient` ones (a crash, a lost connection) are retried
 * while attempts are left.
 */
export type FailureKind = 'permanent' | 'transient';

export interface RetryDecision {
  readonly retry: boolean;
  readonly delayMs: number;
}

export function decideRetry(
  kind: FailureKind,
  attempts: number,
  maxAttempts: number,
  random: number,
): RetryDecision {
  if (kind === 'permanent' || attempts >= maxAttempts) return { retry: false, delayMs: 0 };
  return { retry: true, delayMs: retryDelayMs(attempts, random) };
}

/** The job system's own outcomes, as each kind's handler then words them for its resource. */
export const JOB_CANCELED = { code: 'job_canceled', message: 'The job was canceled.' } as const;
export const JOB_TIMED_OUT = {
  code: 'job_timed_out',
  message: 'The job ran longer than the server allows.',
} as const;
