// Process entry for `lipsync serve` / `lipsync worker`: LIPSYNC_ROLE = api | worker | all.
import type { Logger } from 'pino';
import type { Config } from './config.js';
import { createLogger } from './logger.js';
import { createServices } from './app/container.js';
import type { Services } from './services/index.js';
import { buildApp, type App } from './http/app.js';
import { listenForMetrics } from './http/metrics.js';
import { bootstrapFirstOrganization } from './services/bootstrap.js';
import { startBackground, startHousekeeping, type Background } from './app/runtime.js';

export interface Running {
  services: Services;
  app: App | null;
  url: string | null;
  /** The metrics listener's URL (LIPSYNC_METRICS_PORT), or null. */
  metricsUrl: string | null;
  /**
   * Stops the process's parts. With drainMs, an API first drains for that long: /readyz answers 503,
   * long-polls answer at once, every answer closes its connection, new requests are still served.
   * Then the listener closes and the requests in flight finish. Running jobs are handed back at once.
   */
  stop(opts?: { drainMs?: number }): Promise<void>;
}

export async function start(
  config: Config,
  out: (line: string) => void = (l) => process.stdout.write(l + '\n'),
): Promise<Running> {
  const logger = createLogger(config.logLevel);
  const services = await createServices(config, logger);
  let app: App | null = null;
  let url: string | null = null;
  let background: Background | null = null;
  // First, so that a scrape sees the process from its start (and a taken port fails the start early).
  const metricsListener = await listenForMetrics(config, services.metrics, logger).catch(
    async (err: unknown) => {
      await services.close();
      throw err;
    },
  );
  if (config.role === 'worker' || config.role === 'all') {
    background = startBackground(services);
    logger.info({ owner: background.pool.owner, concurrency: config.workerConcurrency }, 'worker started');
  }

  // An API-only process still requeues dead workers' jobs and delivers webhooks (remote workers only).
  const housekeeping = config.role === 'api' ? startHousekeeping(services) : null;
  if (config.role === 'api' || config.role === 'all') {
    const first = await bootstrapFirstOrganization(services);
    app = await buildApp(services);
    url = await app.listen({ port: config.port, host: config.host });
    logger.info({ url, role: config.role, database: services.db.dialect }, 'server listening');
    if (first) {
      const base = config.publicUrl;
      out('');
      out(
        'First start: created organization "' +
          first.organization.name +
          '" (' +
          first.organization.id +
          ') and an owner API key.',
      );
      out('This key is shown only once; keep it somewhere safe:');
      out('');
      out('  ' + first.key);
      out('');
      out('Try it:');
      out(`  curl -H "x-api-key: ${first.key}" ${base}/v2/projects`);
      out('Or save it for the lipsync command (any folder):');
      out(`  lipsync login --server ${base} --key ${first.key}`);
      out('');
    }
  }

  let stopping: Promise<void> | null = null;
  const stop = (opts: { drainMs?: number } = {}): Promise<void> =>
    (stopping ??= (async () => {
      services.drain.begin();
      // Running jobs are handed back at once (another worker takes them without losing an attempt).
      const backgroundStopped = background?.stop();
      const drainMs = app ? (opts.drainMs ?? 0) : 0;
      if (drainMs > 0) {
        logger.info({ drainSeconds: drainMs / 1000 }, 'draining: not ready, long-polls answered');
        await new Promise((r) => setTimeout(r, drainMs));
      }
      // Stops listening, closes idle connections and waits for the requests in flight.
      await app?.close();
      await Promise.all([backgroundStopped, housekeeping?.stop(), metricsListener?.close()]);
      await services.close();
    })());
  return { services, app, url, metricsUrl: metricsListener?.url ?? null, stop };
}

/**
 * Stops the process on SIGTERM or SIGINT and exits 0 once stop() finished; 1 when it failed or took
 * longer than the hard cap (LIPSYNC_SHUTDOWN_TIMEOUT_SECONDS), or at a second signal. SIGTERM (a
 * balancer, Kubernetes, systemd) drains an API first; SIGINT (Ctrl-C at a terminal) does not wait.
 */
export function stopOnSignals(
  stop: (signal: NodeJS.Signals) => Promise<void>,
  opts: { readonly timeoutMs: number; readonly logger: Logger; readonly what: string },
): void {
  let signalled = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (signalled) {
      opts.logger.warn({ signal }, `${opts.what}: second signal, exiting now`);
      process.exit(1);
    }
    signalled = true;
    opts.logger.info({ signal, timeoutSeconds: opts.timeoutMs / 1000 }, `${opts.what} shutting down`);
    const cap = setTimeout(() => {
      opts.logger.error(
        { timeoutSeconds: opts.timeoutMs / 1000 },
        `${opts.what}: shutdown took longer than LIPSYNC_SHUTDOWN_TIMEOUT_SECONDS; exiting, open requests are cut`,
      );
      process.exit(1);
    }, opts.timeoutMs);
    stop(signal).then(
      () => {
        clearTimeout(cap);
        opts.logger.info(`${opts.what} stopped`);
        process.exit(0);
      },
      (err: unknown) => {
        opts.logger.error({ err }, `${opts.what}: shutdown failed`);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
}
