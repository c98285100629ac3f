// The background parts of a process: the worker pool (with the database port), the watchdog and the
// webhook dispatcher.
import { mkdirSync } from 'node:fs';
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { Services } from '../services/index.js';
import { WorkerPool } from '../jobs/worker.js';
import { Watchdog } from '../jobs/watchdog.js';
import { WebhookDispatcher } from '../jobs/webhook-dispatcher.js';
import { UploadSweeper } from '../services/upload-sweeper.js';
import { DatabaseWorkerPort } from '../jobs/port.js';
import { guardedPost } from '../media/guarded-post.js';
import { MeteredWorkerPort } from '../jobs/metered-port.js';

/**
 * Removes temp files and job directories left by a killed process. Only entries older than the job
 * timeout go: a live job of another worker on the same data folder is never that old.
 */
export async function sweepStaleTemp(dir: string, olderThanMs: number): Promise<number> {
  let removed = 0;
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names) {
    const path = join(dir, name);
    const st = await stat(path).catch(() => null);
    if (st && Date.now() - st.mtimeMs > olderThanMs) {
      await rm(path, { recursive: true, force: true }).catch(() => undefined);
      removed++;
    }
  }
  return removed;
}

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
      tempRoot: config.tempDir,
      metrics: services.metrics,
    },
    logger.child({ component: 'worker' }),
  );
  const housekeeping = startHousekeeping(services);
  void sweepStaleTemp(config.tempDir, config.jobTimeoutMs).then((n) => {
    if (n > 0) logger.info({ removed: n }, 'stale temp files removed');
  });
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
  watchdog.start();
  dispatcher.start();
  uploads.start();
  return {
    async stop() {
      await watchdog.stop();
      await dispatcher.stop();
      await uploads.stop();
    },
  };
}
