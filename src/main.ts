// Process entry for `lipsync serve` / `lipsync worker`: LIPSYNC_ROLE = api | worker | all.
import type { Config } from './config.js';
import { createLogger } from './logger.js';
import { createServices, type Services } from './services/container.js';
import { buildApp, type App } from './http/app.js';
import { bootstrapFirstOrganization } from './services/bootstrap.js';
import { startBackground, startHousekeeping, type Background } from './jobs/runtime.js';

export interface Running {
  services: Services;
  app: App | null;
  url: string | null;
  stop(): Promise<void>;
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
      out('');
    }
  }

  let stopping = false;
  const stop = async (): Promise<void> => {
    if (stopping) return;
    stopping = true;
    // Running jobs are handed back at once (another worker takes them without losing an attempt),
    // while the API finishes the requests in flight.
    await Promise.all([app?.close(), background?.stop(), housekeeping?.stop()]);
    await services.close();
  };
  return { services, app, url, stop };
}
