// A remote worker process: `lipsync worker --server URL --token T`. No database, no blob store, no
// signing secret: the kinds whose run needs none of them, run by the usual WorkerPool through the HTTP
// adapter of the worker port. Its data folder holds only temporary files (and models it loads).
import { mkdirSync } from 'node:fs';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { speechProcesses } from '../processes/pool.js';
import { HandlerRegistry, type AnyJobHandler } from '../jobs/handler.js';
import { HttpWorkerPort } from '../jobs/http-worker-port.js';
import { WorkerPool } from '../jobs/worker.js';
import { keepMarkerFresh, processScratchDir, sweepScratch } from './scratch.js';
import { Metrics } from '../metrics/metrics.js';
import { MeteredWorkerPort } from '../jobs/metered-port.js';
import { listenForMetrics } from '../http/metrics.js';

/** A registry of the given handlers, each of which must be able to run on a remote worker. */
function remoteRegistry(handlers: readonly AnyJobHandler[]): HandlerRegistry {
  const registry = new HandlerRegistry();
  for (const h of handlers) {
    if (!h.remote) throw new Error(`job kind ${h.kind} cannot run on a remote worker`);
    registry.register(h);
  }
  return registry;
}

export interface RemoteWorker {
  readonly pool: WorkerPool;
  readonly metrics: Metrics;
  /** The metrics listener's URL (LIPSYNC_METRICS_PORT), or null. */
  readonly metricsUrl: string | null;
  stop(): Promise<void>;
}

export async function startRemoteWorker(
  config: Config,
  opts: {
    server: string;
    token: string;
    kinds?: readonly string[];
    /** The kinds this build can run remotely (src/handlers/index.ts, given by the caller). */
    handlers: readonly AnyJobHandler[];
  },
  logger: Logger,
): Promise<RemoteWorker> {
  const registry = remoteRegistry(opts.handlers);
  const port = new HttpWorkerPort({
    server: opts.server,
    token: opts.token,
    logger: logger.child({ component: 'jobs' }),
  });
  const me = await port.identify();
  const kinds = opts.kinds ?? config.workerKinds ?? registry.kinds().filter((k) => me.kinds.includes(k));
  for (const k of kinds) {
    if (!registry.has(k) || !me.kinds.includes(k))
      throw new Error(
        `job kind ${k} cannot run on a remote worker (the server allows ${me.kinds.join(', ')})`,
      );
  }
  if (kinds.length === 0) throw new Error('no job kind to serve');
  // One bound for every local speech tool process of this process (festival, RHVoice, pocketsphinx, Praat).
  speechProcesses().configure(config.speech.processes);
  mkdirSync(config.tempDir, { recursive: true, mode: 0o700 });
  void sweepScratch(config.tempDir, config.jobTimeoutMs).catch((err: unknown) =>
    logger.warn({ err }, 'the temp folder could not be swept'),
  );
  const marker = keepMarkerFresh(config.tempDir);
  // This process's own registry: its runs and engine speed (the jobs settle, and are counted, on the
  // server). Scraped through LIPSYNC_METRICS_PORT only.
  const metrics = new Metrics({ kinds, logger: logger.child({ component: 'metrics' }) });
  const pool = new WorkerPool(
    new MeteredWorkerPort(port, metrics),
    registry,
    {
      kinds,
      concurrency: config.workerConcurrency,
      // The server's lease: heartbeats come often enough for it whatever this machine's settings.
      leaseMs: me.leaseMs,
      idlePollMs: config.workerIdlePollMs,
      warmUp: config.engineWarmUp,
      tempRoot: processScratchDir(config.tempDir),
      metrics,
    },
    logger.child({ component: 'worker' }),
  );
  const metricsListener = await listenForMetrics(config, metrics, logger);
  pool.start();
  logger.info(
    {
      owner: pool.owner,
      concurrency: config.workerConcurrency,
      server: opts.server,
      kinds,
      workerToken: me.id,
    },
    'worker started',
  );
  return {
    pool,
    metrics,
    metricsUrl: metricsListener?.url ?? null,
    async stop() {
      marker.stop();
      const stopping = pool.stop();
      port.close();
      await stopping;
      await metricsListener?.close();
    },
  };
}
