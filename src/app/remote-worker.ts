// A remote worker process: `lipsync worker --server URL --token T`. No database, no blob store, no
// signing secret: the kinds whose run needs none of them, run by the usual WorkerPool through the HTTP
// adapter of the worker port. Its data folder holds only temporary files (and models it loads).
import { mkdirSync } from 'node:fs';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Store } from '../store/index.js';
import { EngineRegistry } from '../engines/registry.js';
import { articulationTools } from '../speech/articulation-tools.js';
import type { ArticulationDeps } from '../speech/articulation.js';
import { createRecognizer } from '../speech/recognition/registry.js';
import { DEFAULT_PRICES } from '../domain/pricing.js';
import { generationHandler } from '../handlers/generation.js';
import { transcriptionHandler } from '../handlers/transcription.js';
import { dialogueEditHandler } from '../handlers/dialogue-edit.js';
import { HandlerRegistry } from '../jobs/handler.js';
import { HttpWorkerPort } from '../jobs/http-worker-port.js';
import { WorkerPool } from '../jobs/worker.js';
import { sweepStaleTemp } from './runtime.js';
import { Metrics } from '../metrics/metrics.js';
import { MeteredWorkerPort } from '../jobs/metered-port.js';
import { listenForMetrics } from '../http/metrics.js';

/**
 * Stands in for the database in handlers built for remote runs: their run() never reaches it (that is
 * what makes a kind remote), and anything that did would fail loudly instead of quietly.
 */
function noDatabase(): Store {
  return new Proxy({} as Store, {
    get(_t, prop) {
      throw new Error(`a remote worker has no database (store.${String(prop)} was used)`);
    },
  });
}

/** The handlers a remote worker can run: those whose kinds declare a remote run. */
export function remoteHandlers(config: Config): HandlerRegistry {
  const store = noDatabase();
  let engines: EngineRegistry | null = null;
  let articulation: ArticulationDeps | null | undefined;
  const registry = new HandlerRegistry()
    .register(
      generationHandler({
        store,
        prices: DEFAULT_PRICES,
        engines: () => (engines ??= EngineRegistry.fromFile(config.enginesFile, config.defaultEngine)),
        articulation: () =>
          (articulation ??= articulationTools(config.speech, { allowPrivate: config.allowPrivateUrls })),
      }),
    )
    .register(
      transcriptionHandler({
        store,
        recognizer: () =>
          createRecognizer(config.speech.recognition, { allowPrivate: config.allowPrivateUrls }),
      }),
    )
    .register(dialogueEditHandler({ store }));
  for (const k of registry.kinds())
    if (!registry.get(k).remote) throw new Error(`job kind ${k} cannot run on a remote worker`);
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
  opts: { server: string; token: string; kinds?: readonly string[] },
  logger: Logger,
): Promise<RemoteWorker> {
  const registry = remoteHandlers(config);
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
  mkdirSync(config.tempDir, { recursive: true, mode: 0o700 });
  void sweepStaleTemp(config.tempDir, config.jobTimeoutMs);
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
      tempRoot: config.tempDir,
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
      const stopping = pool.stop();
      port.close();
      await stopping;
      await metricsListener?.close();
    },
  };
}
