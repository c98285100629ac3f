// The service container and the Fastify app on a fresh database, for tests through `inject`.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DestinationStream } from 'pino';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { createServices } from '../../src/app/container.js';
import type { Services } from '../../src/services/index.js';
import { buildApp, type App } from '../../src/http/app.js';
import { createTestSchema, testDatabase, type TestDatabase } from './database.js';

export interface TestServices {
  readonly services: Services;
  /** Built with buildApp and ready: use `app.inject(...)`. */
  readonly app: App;
  readonly dataDir: string;
  readonly database: TestDatabase;
  /** The environment the config was loaded from (database variables included). */
  readonly env: Readonly<Record<string, string>>;
  cleanup(): Promise<void>;
}

export interface TestServicesOptions {
  /** Default: TEST_DATABASE (sqlite). */
  database?: TestDatabase;
  /** Extra environment variables for loadConfig (PORT, LIPSYNC_RATE_LIMIT_PER_MINUTE, REDIS_URL, ...). */
  env?: Record<string, string>;
  /** Runs on the app before it is made ready (to register extra routes or hooks in a test). */
  configureApp?: (app: App) => void | Promise<void>;
  /**
   * Open a second instance on the database of an existing one (same data folder or schema) instead
   * of a fresh database. Its cleanup closes only this instance.
   */
  shareDatabaseWith?: TestServices;
  /** Where the service's log lines go (with env LOG_LEVEL set to a level that logs). */
  logDestination?: DestinationStream;
}

export async function createTestServices(opts: TestServicesOptions = {}): Promise<TestServices> {
  const shared = opts.shareDatabaseWith;
  const database = shared?.database ?? opts.database ?? testDatabase();
  const ownDir = shared ? null : await mkdtemp(join(tmpdir(), 'lipsync-test-'));
  const dataDir = shared ? shared.dataDir : (ownDir as string);
  const schema = database === 'postgres' && !shared ? await createTestSchema() : null;

  const env: Record<string, string> = {
    LOG_LEVEL: process.env.LIPSYNC_TEST_LOG_LEVEL || 'silent',
    LIPSYNC_SIGNING_SECRET: 'test-signing-secret-0123456789abcdef',
    ...(shared ? shared.env : {}),
    LIPSYNC_DATA_DIR: dataDir,
    // Recognizing the words of every recording (pocketsphinx, about 0.4 x real time here) serves only
    // the articulation tests, which turn it on; voice activity and transcripts still run everywhere.
    LIPSYNC_ARTICULATION_RECOGNIZE: '0',
    // A warmed worker loads the face models on a thread at start (about a second of one core, and a
    // thread that must not be ended mid-load): only the tests of the warm-up turn it on.
    LIPSYNC_ENGINE_WARM_UP: '0',
    ...(schema ? { DATABASE_URL: schema.url } : {}),
    ...opts.env,
  };
  if (database === 'sqlite') delete env.DATABASE_URL;

  let services: Services | null = null;
  let app: App | null = null;
  const cleanup = async (): Promise<void> => {
    if (app) await app.close().catch(() => undefined);
    if (services) await services.close().catch(() => undefined);
    if (ownDir) await rm(ownDir, { recursive: true, force: true });
    if (schema) await schema.drop();
  };

  try {
    const config = loadConfig(env);
    services = await createServices(config, createLogger(config.logLevel, opts.logDestination));
    app = await buildApp(services);
    if (opts.configureApp) await opts.configureApp(app);
    await app.ready();
  } catch (err) {
    await cleanup();
    throw err;
  }
  return { services, app, dataDir, database, env, cleanup };
}
