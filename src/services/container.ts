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
import { AssetService } from './assets.js';
import type { BlobStore } from '../storage/blob-store.js';
import { LocalBlobStore } from '../storage/local-blob-store.js';
import { UrlSigner, resolveSigningSecret } from '../storage/url-signer.js';
import { createRateLimiter, type RateLimiter } from '../http/limits/rate-limiter.js';
import { readFileSync } from 'node:fs';
import { GenerationService } from './generations.js';
import { createInputResolver } from './generation-inputs.js';
import { GenerationFinisher } from '../jobs/finisher.js';
import { PostgresEventBus, SqliteEventBus, type GenerationEventBus } from '../jobs/event-bus.js';
import { DEFAULT_PRICES, type PriceTable } from '../domain/pricing.js';

export interface Services {
  readonly config: Config;
  readonly logger: Logger;
  readonly db: Db;
  readonly store: Store;
  readonly organizations: OrganizationService;
  readonly apiKeys: ApiKeyService;
  readonly projects: ProjectService;
  readonly admission: AdmissionService;
  /** Signs and checks the local store's file URLs (GET /v2/files/...). */
  readonly urlSigner: UrlSigner;
  readonly blobs: BlobStore;
  readonly assets: AssetService;
  readonly rateLimiter: RateLimiter;
  readonly bus: GenerationEventBus;
  readonly finisher: GenerationFinisher;
  readonly generations: GenerationService;
  readonly prices: PriceTable;
  /** Set by the worker pool of this process so that new jobs start at once. */
  onGenerationCreated: () => void;
  close(): Promise<void>;
}

export async function createServices(config: Config, logger: Logger): Promise<Services> {
  const db = openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  await migrateToLatest(db);
  const store = createStore(db);
  const rateLimiter = createRateLimiter(config.redisUrl);
  const urlSigner = new UrlSigner(
    await resolveSigningSecret(config.signingSecret, config.dataDir),
    config.publicUrl,
  );
  const blobs = new LocalBlobStore(config.dataDir, urlSigner);
  await blobs.init();
  const assets = new AssetService(store, blobs, logger);
  const prices = loadPrices(config.pricingFile);
  let bus: GenerationEventBus;
  if (db.pgPool && config.databaseUrl) {
    const pgBus = new PostgresEventBus(db.pgPool, config.databaseUrl, logger);
    await pgBus.start();
    bus = pgBus;
  } else {
    bus = new SqliteEventBus(store.generations);
  }
  const finisher = new GenerationFinisher(store, bus, prices);
  const services: Services = {
    config,
    logger,
    db,
    store,
    organizations: new OrganizationService(store),
    apiKeys: new ApiKeyService(store),
    projects: new ProjectService(store),
    admission: new AdmissionService(store),
    urlSigner,
    blobs,
    assets,
    rateLimiter,
    bus,
    finisher,
    prices,
    onGenerationCreated: () => undefined,
    generations: new GenerationService(
      config,
      store,
      new AdmissionService(store),
      bus,
      prices,
      createInputResolver(config, blobs, assets),
      finisher,
      () => services.onGenerationCreated(),
    ),
    async close() {
      await bus.close();
      await rateLimiter.close();
      await db.close();
    },
  };
  return services;
}

function loadPrices(file: string | null): PriceTable {
  if (!file) return DEFAULT_PRICES;
  const raw = JSON.parse(readFileSync(file, 'utf8')) as PriceTable;
  return { ...DEFAULT_PRICES, ...raw };
}
