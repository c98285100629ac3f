// The background parts of a process: worker pool, watchdog and webhook dispatcher.
import type { Services } from '../services/container.js';
import { WorkerPool, type JobRunner } from './worker.js';
import { Watchdog } from './watchdog.js';
import { WebhookDispatcher } from './webhook-dispatcher.js';
import { guardedPost } from '../media/guarded-post.js';
import { generationView } from '../services/generation-view.js';
import { PLAN_LIMITS } from '../domain/plans.js';
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';

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
  stop(): Promise<void>;
}

export function startBackground(services: Services, runner: JobRunner): Background {
  const { config, store, logger } = services;
  const pool = new WorkerPool(
    store,
    services.finisher,
    runner,
    { concurrency: config.workerConcurrency, leaseMs: config.jobLeaseMs },
    logger.child({ component: 'worker' }),
  );
  const watchdog = new Watchdog(
    store,
    services.finisher,
    logger.child({ component: 'watchdog' }),
    Math.max(500, Math.floor(config.jobLeaseMs / 4)),
  );
  const dispatcher = new WebhookDispatcher(
    store,
    {
      post: (url, body, headers, timeoutMs) =>
        guardedPost(url, body, headers, { allowPrivate: config.allowPrivateUrls, timeoutMs }),
    },
    async (d) => {
      // Signed output URLs are made at delivery time so that they are fresh.
      if (!d.generationId) return d.payload;
      const g = await store.generations.findAny(d.generationId);
      const org = g ? await store.organizations.findById(g.organizationId) : null;
      if (!g || !org) return d.payload;
      const payload = JSON.parse(d.payload) as Record<string, unknown>;
      let outputUrl: string | null = null;
      if (g.status === 'COMPLETED' && g.outputKey) {
        const key = PLAN_LIMITS[org.plan].watermark ? (g.watermarkedKey ?? g.outputKey) : g.outputKey;
        outputUrl = await services.blobs.signedUrl(key);
      }
      return JSON.stringify({
        ...payload,
        ...generationView(g, { outputUrl }),
        status: payload.status,
        finalStatus: g.status,
      });
    },
    { retryWindowMs: config.webhookRetryWindowMs, timeoutMs: config.webhookTimeoutMs },
    logger.child({ component: 'webhooks' }),
  );
  void sweepStaleTemp(join(config.dataDir, 'tmp'), config.jobTimeoutMs).then((n) => {
    if (n > 0) logger.info({ removed: n }, 'stale temp files removed');
  });
  pool.start();
  watchdog.start();
  dispatcher.start();
  services.onGenerationCreated = () => pool.notify();
  return {
    pool,
    async stop() {
      services.onGenerationCreated = () => undefined;
      await pool.stop();
      await watchdog.stop();
      await dispatcher.stop();
    },
  };
}
