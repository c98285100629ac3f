// The background parts of a process: the worker pool (with the database port), the watchdog and the
// webhook dispatcher.
import { mkdirSync } from 'node:fs';
import type { Services } from '../services/index.js';
import { WorkerPool } from '../jobs/worker.js';
import { Watchdog } from '../jobs/watchdog.js';
import { WebhookDispatcher } from '../jobs/webhook-dispatcher.js';
import { UploadSweeper } from '../services/upload-sweeper.js';
import { DatabaseWorkerPort } from '../jobs/port.js';
import { guardedPost } from '../media/guarded-post.js';
import { MeteredWorkerPort } from '../jobs/metered-port.js';
import { keepMarkerFresh, processScratchDir, sweepScratch } from './scratch.js';

export interface Background {
  readonly pool: WorkerPool;
  /** Hands running jobs back (they run again elsewhere, the attempt not counted), then stops. */
  stop(): Promise<void>;
}

export interface BackgroundOptions {
  /** Kinds this process's workers serve; default: the configured list, else every registered kind. */
  readonly kinds?: readonly string[];
  /** Warm the kinds' handlers up at start (JobHandler.warmUp); default LIPSYNC_ENGINE_WARM_UP. */
  readonly warmUp?: boolean;
}

export function startBackground(services: Services, opts: BackgroundOptions = {}): Background {
  const { config, store, logger } = services;
  const kinds = opts.kinds ?? config.workerKinds ?? services.handlers.kinds();
  for (const k of kinds) services.handlers.get(k); // an unknown kind is a start-up error
  mkdirSync(config.tempDir, { recursive: true, mode: 0o700 });
  const port = new DatabaseWorkerPort(
    store,
    services.queue,
    services.handlers,
    services.blobs,
    services.bus,
    logger.child({ component: 'jobs' }),
  );
  const pool = new WorkerPool(
    new MeteredWorkerPort(port, services.metrics),
    services.handlers,
    {
      kinds,
      concurrency: config.workerConcurrency,
      leaseMs: config.jobLeaseMs,
      idlePollMs: config.workerIdlePollMs,
      warmUp: opts.warmUp ?? config.engineWarmUp,
      tempRoot: processScratchDir(config.tempDir),
      metrics: services.metrics,
    },
    logger.child({ component: 'worker' }),
  );
  const housekeeping = startHousekeeping(services);
  pool.start();
  return {
    pool,
    async stop() {
      await pool.stop();
      await housekeeping.stop();
    },
  };
}

/**
 * What every process on the database runs besides its workers: the watchdog (expired leases of local
 * and remote workers back to the queue), the webhook dispatcher (the outbox) and the sweep of direct
 * uploads never registered. An API-only process runs it too, so that a deployment of API instances and
 * remote workers alone still delivers webhooks and retries the jobs of dead workers. Several of each
 * are safe: the watchdog and the dispatcher claim under leases, and the sweep's deletions are
 * idempotent.
 */
export function startHousekeeping(services: Services): { stop(): Promise<void> } {
  const { config, store, logger } = services;
  const watchdog = new Watchdog(
    store,
    services.queue,
    logger.child({ component: 'watchdog' }),
    Math.max(500, Math.floor(config.jobLeaseMs / 4)),
  );
  const dispatcher = new WebhookDispatcher(
    store,
    {
      post: (url, body, headers, timeoutMs) =>
        guardedPost(url, body, headers, { allowPrivate: config.allowPrivateUrls, timeoutMs }),
    },
    (event) => services.handlers.notification(event),
    { retryWindowMs: config.webhookRetryWindowMs, timeoutMs: config.webhookTimeoutMs },
    logger.child({ component: 'webhooks' }),
    services.metrics,
  );
  const uploads = new UploadSweeper(services.assets, logger.child({ component: 'upload-sweep' }));
  // What killed processes left in the temp folder (an API-only process writes uploads there too).
  void sweepScratch(config.tempDir, config.jobTimeoutMs).then(
    (n) => n > 0 && logger.info({ removed: n }, 'temp files of stopped processes removed'),
    (err: unknown) => logger.warn({ err }, 'the temp folder could not be swept'),
  );
  const marker = keepMarkerFresh(config.tempDir);
  watchdog.start();
  dispatcher.start();
  uploads.start();
  return {
    async stop() {
      await watchdog.stop();
      await dispatcher.stop();
      await uploads.stop();
      marker.stop();
    },
  };
}
