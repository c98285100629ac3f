// Generation states and transitions. Pure.
import type { JobStatus } from './jobs.js';

export const STATUSES = [
  'PENDING',
  'PROCESSING',
  'COMPLETED',
  'FAILED',
  'REJECTED',
  'CANCELED',
  'TIMED_OUT',
] as const;
export type GenerationStatus = (typeof STATUSES)[number];

export const ACTIVE_STATUSES: readonly GenerationStatus[] = ['PENDING', 'PROCESSING'];
export const TERMINAL_STATUSES: readonly GenerationStatus[] = [
  'COMPLETED',
  'FAILED',
  'REJECTED',
  'CANCELED',
  'TIMED_OUT',
];

export function isTerminal(s: string): boolean {
  return (TERMINAL_STATUSES as readonly string[]).includes(s);
}

export function isStatus(s: string): s is GenerationStatus {
  return (STATUSES as readonly string[]).includes(s);
}

/** Long-poll ends on any terminal state (the spec names COMPLETED, FAILED, REJECTED; CANCELED and TIMED_OUT are final too). */
export const endsWait = isTerminal;

export type DownloadDecision = 'ready' | 'not_ready' | 'not_downloadable';

export function downloadDecision(s: GenerationStatus): DownloadDecision {
  if (s === 'COMPLETED') return 'ready';
  if (s === 'PENDING' || s === 'PROCESSING') return 'not_ready';
  return 'not_downloadable';
}

/** Webhooks report the terminal outcome; the official client knows COMPLETED and FAILED. */
export function webhookStatus(s: GenerationStatus): 'COMPLETED' | 'FAILED' {
  return s === 'COMPLETED' ? 'COMPLETED' : 'FAILED';
}

/** A generation's status for each state of its job (what the job system writes onto the row). */
const OF_JOB: Readonly<Record<JobStatus, GenerationStatus>> = {
  queued: 'PENDING',
  running: 'PROCESSING',
  completed: 'COMPLETED',
  failed: 'FAILED',
  canceled: 'CANCELED',
  timed_out: 'TIMED_OUT',
};

export function generationStatusOf(s: JobStatus): GenerationStatus {
  return OF_JOB[s];
}
