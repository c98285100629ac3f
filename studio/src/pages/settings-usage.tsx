// This month's usage and the plan's limits (GET /v2/organizations/usage).
import { Fragment } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import { get } from '../api.js';
import { ErrorMessage } from '../components/error-message.js';
import type { Usage } from '../types.js';

const STATUS_ORDER = ['COMPLETED', 'PROCESSING', 'PENDING', 'FAILED', 'REJECTED', 'CANCELED', 'TIMED_OUT'];

export function duration(seconds: number): string {
  const s = Math.round(seconds);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  return h > 0 ? `${h} h ${m} min` : m > 0 ? `${m} min ${s % 60} s` : `${s} s`;
}

function bytes(n: number): string {
  return n >= 1024 ** 3 ? `${n / 1024 ** 3} GiB` : `${Math.round(n / 1024 ** 2)} MiB`;
}

export function UsageSection() {
  const [usage, setUsage] = useState<Usage | null>(null);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    get<Usage>('/v2/organizations/usage').then(setUsage, setError);
  }, []);
  const statuses = usage
    ? Object.entries(usage.generations.byStatus).sort(
        ([a], [b]) => ((STATUS_ORDER.indexOf(a) + 99) % 99) - ((STATUS_ORDER.indexOf(b) + 99) % 99),
      )
    : [];
  return (
    <section aria-labelledby="usage-title">
      <h2 id="usage-title">Usage</h2>
      <ErrorMessage error={error} />
      {!usage ? (
        error ? null : (
          <p class="muted">Loading usage…</p>
        )
      ) : (
        <div class="card usage">
          <div>
            <h3>
              This month{' '}
              <span class="muted small">
                (since {new Date(usage.periodStart).toLocaleDateString(undefined, { dateStyle: 'medium' })})
              </span>
            </h3>
            <dl>
              <dt>Generations</dt>
              <dd>{usage.generations.total}</dd>
              {statuses.map(([status, n]) => (
                <Fragment key={status}>
                  <dt class="sub">{status.toLowerCase()}</dt>
                  <dd>{n}</dd>
                </Fragment>
              ))}
              <dt>Output produced</dt>
              <dd>{duration(usage.outputSeconds)}</dd>
            </dl>
          </div>
          <div>
            <h3>
              Plan: <span class="plan">{usage.plan}</span>
            </h3>
            <dl>
              <dt>Generations at once</dt>
              <dd>{usage.limits.concurrency}</dd>
              <dt>Longest input</dt>
              <dd>{duration(usage.limits.maxDurationSeconds)}</dd>
              <dt>Largest file</dt>
              <dd>{bytes(usage.limits.maxFileBytes)}</dd>
              <dt>Watermark</dt>
              <dd>{usage.limits.watermark ? 'yes' : 'no'}</dd>
              <dt>Batches</dt>
              <dd>{usage.limits.batch ? 'yes' : 'no'}</dd>
              <dt>Cloned voices</dt>
              <dd>{usage.limits.voiceCloneSlots}</dd>
            </dl>
          </div>
        </div>
      )}
    </section>
  );
}
