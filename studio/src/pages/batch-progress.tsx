// A running batch followed live (its counters polled until it ends, with the results file then),
// and the organization's batches, newest first.
import { useEffect, useState } from 'preact/hooks';
import { api, get } from '../api.js';
import { ErrorMessage } from '../components/error-message.js';
import { useAction } from '../components/use-action.js';
import { href } from '../router.js';
import { BATCH_ENDED, type Batch } from '../types.js';

const POLL_MS = 1000;

export function BatchProgress({ id, onEnded }: { id: string; onEnded?: () => void }) {
  const [batch, setBatch] = useState<Batch | null>(null);
  // The poll's failures and the cancel's share one message.
  const { busy: canceling, error, setError, run } = useAction();

  useEffect(() => {
    let stopped = false;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const poll = async () => {
      try {
        const b = await get<Batch>(`/v2/batch/${encodeURIComponent(id)}`);
        if (stopped) return;
        setBatch(b);
        setError(null);
        if (BATCH_ENDED.has(b.status)) return onEnded?.();
      } catch (e) {
        if (stopped) return;
        setError(e);
      }
      timer = setTimeout(() => void poll(), POLL_MS);
    };
    void poll();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }, [id]);

  const cancel = () =>
    void run(async () => setBatch(await api<Batch>('POST', `/v2/batch/${encodeURIComponent(id)}/cancel`)));

  if (!batch) return error ? <ErrorMessage error={error} /> : <p class="loading">Loading the batch…</p>;
  const m = batch.metrics;
  const done = m.success_count + m.failed_count;
  const ended = BATCH_ENDED.has(batch.status);
  return (
    <section class="batch-progress" aria-labelledby="batch-progress-title">
      <h2 id="batch-progress-title">Batch {batch.id}</h2>
      <label for="batch-progress-bar">Records ended</label>
      <progress id="batch-progress-bar" max={m.total_generations || 1} value={done} />
      {/* Polite: a screen reader hears the counts as they move, without interrupting. */}
      <p aria-live="polite" data-testid="batch-counts">
        <strong>{batch.status}</strong>: {done} of {m.total_generations} done · {m.success_count} succeeded ·{' '}
        {m.failed_count} failed · {m.pending_count} waiting
      </p>
      {batch.error ? <p class="error-summary">{batch.error}</p> : null}
      {ended ? (
        <p>
          <a href={batch.outputUrl} download={`batch-${batch.id}-results.jsonl`}>
            Download the results file
          </a>{' '}
          <span class="muted">(one JSON line per record: its generation, status and output link)</span>
        </p>
      ) : (
        <button type="button" class="secondary" disabled={canceling} onClick={cancel}>
          Cancel the batch
        </button>
      )}
      <ErrorMessage error={error} />
    </section>
  );
}

export function BatchList({ refreshKey, current }: { refreshKey: number; current?: string }) {
  const [list, setList] = useState<Batch[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    get<Batch[]>('/v2/batch?limit=20').then(
      (l) => (setList(l), setError(null)),
      (e) => setError(e),
    );
  }, [refreshKey]);
  return (
    <section aria-labelledby="batch-list-title">
      <h2 id="batch-list-title">Your batches</h2>
      <ErrorMessage error={error} />
      {list && list.length === 0 ? <p class="muted">No batch yet.</p> : null}
      {list && list.length ? (
        <div class="table-scroll">
          <table class="batch-list">
            <caption class="sr-only">Batches, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Batch</th>
                <th scope="col">Created</th>
                <th scope="col">Status</th>
                <th scope="col">Done</th>
                <th scope="col">Results</th>
              </tr>
            </thead>
            <tbody>
              {list.map((b) => (
                <tr key={b.id}>
                  <td>
                    <a
                      href={href(`batch/${encodeURIComponent(b.id)}`)}
                      aria-current={b.id === current ? 'page' : undefined}
                    >
                      {b.id}
                    </a>
                  </td>
                  <td>{new Date(b.created_at).toLocaleString()}</td>
                  <td>{b.status}</td>
                  <td>
                    {b.metrics.success_count + b.metrics.failed_count} / {b.metrics.total_generations}
                    {b.metrics.failed_count ? ` (${b.metrics.failed_count} failed)` : ''}
                  </td>
                  <td>
                    {BATCH_ENDED.has(b.status) ? (
                      <a href={b.outputUrl} download={`batch-${b.id}-results.jsonl`}>
                        Results of {b.id}
                      </a>
                    ) : (
                      <span class="muted">when it ends</span>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}
