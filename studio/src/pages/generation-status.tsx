// A generation's state in words, with a coloured badge that repeats the words (colour is never the only
// signal), shared by the history table and the generation page.

const WORDS: Record<string, string> = {
  PENDING: 'Waiting to start',
  PROCESSING: 'Processing',
  COMPLETED: 'Completed',
  FAILED: 'Failed',
  REJECTED: 'Rejected',
  CANCELED: 'Canceled',
  TIMED_OUT: 'Timed out',
};

export function statusWords(status: string): string {
  return WORDS[status] ?? status.charAt(0) + status.slice(1).toLowerCase().replace(/_/g, ' ');
}

export function StatusBadge({ status }: { status: string }) {
  return <span class={`badge badge-${status.toLowerCase()}`}>{statusWords(status)}</span>;
}

/** Seconds as m:ss.s (an output of a few seconds to a few minutes). */
export function duration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined) return '—';
  const m = Math.floor(seconds / 60);
  const s = seconds - m * 60;
  return `${m}:${s < 10 ? '0' : ''}${s.toFixed(1)}`;
}
