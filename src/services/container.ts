// Wires the long-lived parts once at start and hands them to routes, CLI and workers.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import { openDatabase, type Db } from '../store/database.js';
import { migrateToLatest } from '../store/migrate.js';
import { createStore, type Store } from '../store/index.js';
import { OrganizationService } from './organizations.js';
import { ApiKeyService } from './api-keys.js';
import { ProjectService } from './projects.js';
import { AdmissionService } from './admission.js';
import { createRateLimiter, type RateLimiter } from '../http/limits/rate-limiter.js';

export interface Services {
  readonly config: Config;
  readonly logger: Logger;
  readonly db: Db;
  readonly store: Store;
  readonly organizations: OrganizationService;
  readonly apiKeys: ApiKeyService;
  readonly projects: ProjectService;
  readonly admission: AdmissionService;
  readonly rateLimiter: RateLimiter;
  close(): Promise<void>;
}

export async function createServices(config: Config, logger: Logger): Promise<Services> {
  const db = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  await migrateToLatest(db);
  const store = createStore(db);
  const rateLimiter = createRateLimiter(config.redisUrl);
  return {
    config,
    logger,
    db,
    store,
    organizations: new OrganizationService(store),
    apiKeys: new ApiKeyService(store),
    projects: new ProjectService(store),
    admission: new AdmissionService(store),
    rateLimiter,
    async close() {
      await rateLimiter.close();
      await db.close();
    },
  };
}
