// The process's Prometheus metrics (GET /metrics, docs/operations.md): one registry per service
// container, never prom-client's global one, so that several containers in one process (tests) keep
// their own counts. Everything here is in memory except the job gauge, which asks the database when
// the metrics are scraped. Worker processes serve the same registry on a listener of their own
// (LIPSYNC_METRICS_PORT, src/http/metrics.ts); a remote worker's has no database gauge.
import type { Logger } from 'pino';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { JobRecord } from '../store/jobs.js';
import type { TerminalJobStatus } from '../domain/jobs.js';
import { trackerPool } from '../engines/cpu/tracker-thread.js';
import { speechProcesses } from '../processes/pool.js';

/** Queued and running jobs per kind, as the database counts them now. */
export type JobCounts = () => Promise<readonly { kind: string; status: string; count: number }[]>;

export interface MetricsOptions {
  /** Asked at every scrape for the lipsync_jobs gauge; absent (no gauge) without a database. */
  readonly jobCounts?: JobCounts;
  /** Asked at every scrape for lipsync_remote_workers_connected; absent (no gauge) off the API. */
  readonly remoteWorkers?: () => number;
  /** Kinds this build runs: their gauges read 0 rather than vanish while none is queued. */
  readonly kinds: readonly string[];
  readonly logger: Logger;
}

/**
 * How one run (one attempt) of a worker of this process ended: a terminal state written, a retry
 * scheduled (`retrying`), handed back (`released`: shutdown or a yielding batch), or `lost` (the
 * lease was gone, or the server did not take the result).
 */
export type RunOutcome = 'completed' | 'failed' | 'retrying' | 'canceled' | 'timed_out' | 'released' | 'lost';

/** Webhook deliveries: answered with 2xx, failed but tried again later, given up. */
export type WebhookOutcome = 'delivered' | 'retry' | 'failed';

const UNSETTLED = ['queued', 'running'] as const;
const OUTCOMES: readonly TerminalJobStatus[] = ['completed', 'failed', 'canceled', 'timed_out'];
const WEBHOOK_OUTCOMES: readonly WebhookOutcome[] = ['delivered', 'retry', 'failed'];
const RUN_OUTCOMES: readonly RunOutcome[] = [
  'completed',
  'failed',
  'retrying',
  'canceled',
  'timed_out',
  'released',
  'lost',
];

// Passed to jobs as their RunMetrics, matched by shape: jobs sit above metrics and name the port.
export class Metrics {
  readonly registry = new Registry();
  private readonly httpDuration: Histogram<'method' | 'route' | 'status_code'>;
  private readonly jobsFinished: Counter<'kind' | 'outcome'>;
  private readonly jobDuration: Histogram<'kind' | 'outcome'>;
  private readonly engineFps: Histogram<'engine'>;
  private readonly webhookDeliveries: Counter<'outcome'>;
  private readonly workerRuns: Counter<'kind' | 'outcome'>;
  private readonly workerRunDuration: Histogram<'kind' | 'outcome'>;

  constructor(opts: MetricsOptions) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    this.httpDuration = new Histogram({
      name: 'lipsync_http_request_duration_seconds',
      help: 'Time to answer an HTTP request, by method, route pattern and status code (_count: requests).',
      labelNames: ['method', 'route', 'status_code'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120],
      registers,
    });
    this.jobsFinished = new Counter({
      name: 'lipsync_jobs_finished_total',
      help: 'Jobs that reached a terminal state, by kind and outcome (completed, failed, canceled, timed_out).',
      labelNames: ['kind', 'outcome'],
      registers,
    });
    this.jobDuration = new Histogram({
      name: 'lipsync_job_run_duration_seconds',
      help: 'Time from the first start of a job to its end (retries included), by kind and outcome.',
      labelNames: ['kind', 'outcome'],
      buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200],
      registers,
    });
    this.engineFps = new Histogram({
      name: 'lipsync_engine_frames_per_second',
      help: 'Frames per second of the engine step of one generation (frames decoded, drawn and encoded), by engine.',
      labelNames: ['engine'],
      buckets: [1, 2, 5, 10, 15, 25, 50, 100, 200, 500, 1000],
      registers,
    });
    this.webhookDeliveries = new Counter({
      name: 'lipsync_webhook_deliveries_total',
      help: 'Webhook delivery attempts, by outcome (delivered, retry, failed: given up).',
      labelNames: ['outcome'],
      registers,
    });
    this.workerRuns = new Counter({
      name: 'lipsync_worker_runs_total',
      help: "Job runs (attempts) this process's workers ended, by kind and outcome (completed, failed, retrying, canceled, timed_out, released, lost).",
      labelNames: ['kind', 'outcome'],
      registers,
    });
    this.workerRunDuration = new Histogram({
      name: 'lipsync_worker_run_duration_seconds',
      help: "Time of one run (attempt) on this process's workers, from its claim to its end, by kind and outcome.",
      labelNames: ['kind', 'outcome'],
      buckets: [0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600, 7200],
      registers,
    });
    // Known series start at 0, so that increase() sees their first event.
    for (const kind of opts.kinds) {
      for (const outcome of OUTCOMES) this.jobsFinished.inc({ kind, outcome }, 0);
      for (const outcome of RUN_OUTCOMES) this.workerRuns.inc({ kind, outcome }, 0);
    }
    for (const outcome of WEBHOOK_OUTCOMES) this.webhookDeliveries.inc({ outcome }, 0);
    // Process-wide, like the default metrics: the cpu engine's pool of face-tracking threads.
    new Gauge({
      name: 'lipsync_engine_tracking_threads_idle',
      help: "The cpu engine's face-tracking threads idle in this process, loaded or loading; LIPSYNC_ENGINE_WARM_UP keeps one per job that may run at once.",
      registers,
      collect() {
        this.set(trackerPool().idle);
      },
    });
    new Counter({
      name: 'lipsync_engine_tracking_threads_started_total',
      help: 'Face-tracking threads the cpu engine started in this process (each loads the face models, about a second of one core).',
      registers,
      collect() {
        this.reset();
        this.inc(trackerPool().threadsStarted);
      },
    });
    // Process-wide too: the one pool of local speech tool processes (LIPSYNC_SPEECH_PROCESSES).
    new Gauge({
      name: 'lipsync_speech_processes_running',
      help: 'Local speech tool processes (festival, RHVoice, pocketsphinx, Praat) running now in this process.',
      registers,
      collect() {
        this.set(speechProcesses().running);
      },
    });
    new Gauge({
      name: 'lipsync_speech_processes_queued',
      help: 'Speech tool runs waiting for a process slot now (LIPSYNC_SPEECH_QUEUE); beyond it, 503.',
      registers,
      collect() {
        this.set(speechProcesses().queued);
      },
    });
    const remoteWorkers = opts.remoteWorkers;
    if (remoteWorkers) {
      new Gauge({
        name: 'lipsync_remote_workers_connected',
        help: 'Remote workers (by worker token) that called this instance within the last lease period or hold a claim open here now.',
        registers,
        collect() {
          this.set(remoteWorkers());
        },
      });
    }
    const jobCounts = opts.jobCounts;
    if (!jobCounts) return;
    const seenKinds = new Set(opts.kinds);
    new Gauge({
      name: 'lipsync_jobs',
      help: 'Jobs queued (retries waiting for their time included) and running now, by kind (from the database).',
      labelNames: ['kind', 'status'],
      registers,
      async collect() {
        let rows: Awaited<ReturnType<JobCounts>>;
        try {
          rows = await jobCounts();
        } catch (err) {
          // The rest of the scrape still answers; no sample means "unknown", not zero.
          opts.logger.warn({ err }, 'counting jobs for the metrics failed');
          this.reset();
          return;
        }
        for (const r of rows) seenKinds.add(r.kind);
        for (const kind of seenKinds) for (const status of UNSETTLED) this.set({ kind, status }, 0);
        for (const r of rows) this.set({ kind: r.kind, status: r.status }, r.count);
      },
    });
  }

  /** One answered HTTP request; `route` is the route's pattern, never the raw URL. */
  httpRequest(method: string, route: string, statusCode: number, seconds: number): void {
    this.httpDuration.observe({ method, route, status_code: String(statusCode) }, seconds);
  }

  /** A job settled (JobQueue.settle): counted, and its duration observed when it had started. */
  jobSettled(job: JobRecord): void {
    const labels = { kind: job.kind, outcome: job.status };
    this.jobsFinished.inc(labels);
    if (job.startedAt !== null && job.finishedAt !== null) {
      this.jobDuration.observe(labels, Math.max(0, job.finishedAt - job.startedAt) / 1000);
    }
  }

  engineFrames(engine: string, frames: number, seconds: number): void {
    if (frames > 0 && seconds > 0) this.engineFps.observe({ engine }, frames / seconds);
  }

  /** One run of a worker of this process ended (MeteredWorkerPort). */
  workerRun(kind: string, outcome: RunOutcome, seconds: number): void {
    this.workerRuns.inc({ kind, outcome });
    this.workerRunDuration.observe({ kind, outcome }, Math.max(0, seconds));
  }

  webhookDelivery(outcome: WebhookOutcome): void {
    this.webhookDeliveries.inc({ outcome });
  }

  /** The text a scrape gets, and its content type. */
  async scrape(): Promise<{ body: string; contentType: string }> {
    return { body: await this.registry.metrics(), contentType: this.registry.contentType };
  }
}
