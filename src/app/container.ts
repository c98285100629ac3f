// The composition root: wires the long-lived parts once at start and hands them to routes, CLI and
// workers. The only module below main and cli that may import every layer.
import type { Logger } from 'pino';
import { ConfigError, type Config } from '../config.js';
import { speechProcesses } from '../processes/pool.js';
import { openDatabase } from '../store/database.js';
import { migrateToLatest } from '../store/migrate.js';
import { createStore } from '../store/index.js';
import { OrganizationService } from '../services/organizations.js';
import { ApiKeyService } from '../services/api-keys.js';
import { MemberService } from '../services/members.js';
import { WebSessionService } from '../services/web-sessions.js';
import { ProjectService } from '../services/projects.js';
import { NoteService } from '../services/notes.js';
import { AdmissionService } from '../services/admission.js';
import { AssetService } from '../services/assets.js';
import type { BlobStore } from '../storage/blob-store.js';
import { openBlobStore } from '../storage/open-blob-store.js';
import { UrlSigner, resolveSigningSecret } from '../storage/url-signer.js';
import { createRateLimiter } from '../services/rate-limiter.js';
import { readFileSync } from 'node:fs';
import { GenerationService } from '../services/generations.js';
import { createInputResolver } from '../services/generation-inputs.js';
import { PostgresEventBus, SqliteEventBus, type EventBus } from '../jobs/event-bus.js';
import { JobQueue } from '../jobs/queue.js';
import { TranscriptionService } from '../services/transcriptions.js';
import { DialogueEditService } from '../services/dialogue-edits.js';
import { jobHandlers, registryOf, runTools } from '../handlers/index.js';
import { BatchService } from '../services/batches.js';
import { BatchProgress } from '../services/batch-progress.js';
import { compileBodyValidator } from '../http/validation.js';
import { toAppError } from '../http/error-body.js';
import { CreateGenerationBody } from '../http/schemas/generations.js';
import { SpeechService } from '../services/speech.js';
import { TtsService } from '../services/tts.js';
import { VoiceService } from '../services/voices.js';
import { createSpeechProviders } from '../speech/registry.js';
import { installedApertiumPairs } from '../translation/apertium.js';
import { createTranslationProviders } from '../translation/registry.js';
import { TranslationService } from '../services/translation.js';
import { IdempotencyService } from '../services/idempotency.js';
import { assertPublicUrl, OutgoingRequestError } from '../media/http-client.js';
import { AppError } from '../domain/errors.js';
import { buildPriceTable, type PriceTable } from '../domain/pricing.js';
import { MODELS } from '../domain/models.js';
import { Metrics } from '../metrics/metrics.js';
import { Drain } from '../services/drain.js';
import type { Services } from '../services/index.js';
import { RemotePresence } from '../jobs/remote-presence.js';

export async function createServices(config: Config, logger: Logger): Promise<Services> {
  // One bound for every local speech tool process of this process (festival, RHVoice, pocketsphinx, Praat).
  speechProcesses().configure(config.speech.processes);
  // Before anything opens: a served model without a price refuses the start.
  const prices = loadPrices(config.pricingFile);
  const db = openDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDir,
    onIdleConnectionLost: (err) => logger.warn({ err }, 'database connection lost; the pool opens another'),
  });
  await migrateToLatest(db);
  const store = createStore(db);
  const rateLimiter = createRateLimiter(config.redisUrl, logger.child({ component: 'rate-limit' }));
  const signingSecret = await resolveSigningSecret(config.signingSecret, config.dataDir);
  const urlSigner = new UrlSigner(signingSecret, config.publicUrl);
  let blobs: BlobStore;
  try {
    blobs = await openBlobStore(config.storage, config.dataDir, urlSigner);
  } catch (err) {
    // A missing bucket fails the start: release what is already open so the process can exit.
    await rateLimiter.close().catch(() => undefined);
    await db.close().catch(() => undefined);
    throw err;
  }
  const assets = new AssetService(store, blobs, logger, { uploadGraceMs: config.uploadSweepGraceMs });
  let bus: EventBus;
  if (db.pgPool && config.databaseUrl) {
    const pgBus = new PostgresEventBus(
      db.pgPool,
      config.databaseUrl,
      logger.child({ component: 'event-bus' }),
    );
    await pgBus.start();
    bus = pgBus;
  } else {
    bus = new SqliteEventBus((since, ids) => store.generations.changedSince(since, ids));
  }
  const speech = new SpeechService(
    config,
    store,
    assets,
    createSpeechProviders(config.speech, { allowPrivate: config.allowPrivateUrls }),
    logger.child({ component: 'speech' }),
  );
  const localPairs = await installedApertiumPairs();
  const translation = new TranslationService(
    createTranslationProviders(config.translation, { allowPrivate: config.allowPrivateUrls, localPairs }),
    localPairs,
  );
  const batchProgress = new BatchProgress(store);
  // The batch handler reaches the generation service through `services`, wired below.
  // eslint-disable-next-line prefer-const
  let services: Services;
  const handlers = registryOf(
    jobHandlers({
      store,
      prices,
      tools: runTools(config),
      speech: () => speech,
      webhookBodies: () => ({
        generation: (id, stored) => services.generations.webhookBody(id, stored),
        batch: (id) => services.batches.webhookBody(id),
      }),
      batch: {
        progress: batchProgress,
        admitChild: () => (who, body, child) => services.generations.admitBatchChild(who, body, child),
        planConcurrency: config.batchConcurrency,
      },
    }),
  );
  // A job of a kind this build cannot run must not sit in the queue unnoticed.
  handlers.assertCovers(await store.jobs.unsettledKinds());
  const drain = new Drain();
  const remoteWorkers = new RemotePresence(config.jobLeaseMs);
  const metrics = new Metrics({
    jobCounts: () => store.jobs.countUnsettled(),
    remoteWorkers: config.role === 'worker' ? undefined : () => remoteWorkers.connected(),
    kinds: handlers.kinds(),
    logger: logger.child({ component: 'metrics' }),
  });
  const queue = new JobQueue(store, handlers, bus, logger.child({ component: 'jobs' }), metrics);
  const admission = new AdmissionService(store);
  const idempotency = new IdempotencyService(store);
  const apiKeys = new ApiKeyService(store);
  const organizations = new OrganizationService(store);
  const webSessions = new WebSessionService({
    config,
    db,
    store,
    organizations,
    rateLimiter,
    logger,
    signingSecret,
  });
  const validateGenerationBody = compileBodyValidator(CreateGenerationBody, 'payload');
  const generations = new GenerationService({
    config,
    store,
    admission,
    idempotency,
    bus,
    drain,
    queue,
    blobs,
    assets,
    prices,
    resolveInputs: createInputResolver(config, blobs, assets),
    speech,
    translation,
    checkWebhookUrl: (url, field) => checkPublicUrl(url, field, config.allowPrivateUrls),
  });
  services = {
    config,
    logger,
    db,
    store,
    organizations,
    apiKeys,
    webSessions,
    members: new MemberService({ store, webSessions }),
    projects: new ProjectService(store),
    notes: new NoteService(store),
    admission,
    urlSigner,
    blobs,
    assets,
    rateLimiter,
    bus,
    handlers,
    queue,
    idempotency,
    prices,
    metrics,
    drain,
    remoteWorkers,
    speech,
    translation,
    tts: new TtsService({ config, store, speech, assets, idempotency, queue }),
    transcriptions: new TranscriptionService({ config, store, assets, queue }),
    dialogueEdits: new DialogueEditService({ config, store, assets, queue }),
    voices: new VoiceService({
      config,
      store,
      blobs,
      assets,
      speech,
      logger: logger.child({ component: 'voices' }),
    }),
    generations,
    batches: new BatchService({
      config,
      store,
      queue,
      admission,
      generations,
      assets,
      speech,
      blobs,
      urlSigner,
      validatePayload: (payload) => {
        const failure = validateGenerationBody(payload);
        return failure ? toAppError(failure) : null;
      },
      checkUrl: (url, field) => checkPublicUrl(url, field, config.allowPrivateUrls),
      progress: batchProgress,
      authenticate: async (key) => {
        const auth = await apiKeys.authenticate(key);
        if (!auth) throw new AppError('unauthorized');
        return auth;
      },
      logger: logger.child({ component: 'batches' }),
    }),
    async close() {
      await webSessions.close();
      await bus.close();
      await rateLimiter.close();
      await db.close();
    },
  };
  return services;
}

/** Where a refused private address can be allowed: named in the 422's suggestion (docs/security.md). */
export const PRIVATE_URLS_SUGGESTION =
  'Use an address on the public internet. For local development or a receiver on your own network, ' +
  'the operator can start the server with LIPSYNC_ALLOW_PRIVATE_URLS=true (cloud metadata addresses stay refused).';

/**
 * The outgoing client's own policy, applied at submit time: 422 for a URL it would refuse on every
 * try (private or loopback address, scheme, port). A host that does not resolve now may later: its
 * deliveries are retried. When the operator's setting would let the address through, the suggestion
 * names it.
 */
async function checkPublicUrl(url: string, field: string, allowPrivate: boolean): Promise<void> {
  try {
    await assertPublicUrl(url, { allowPrivate });
  } catch (err) {
    if (!(err instanceof OutgoingRequestError)) throw err;
    if (err.refused)
      throw new AppError('invalid_request', {
        status: 422,
        field,
        message: `${field}: ${err.message}`,
        suggestion: (await privateSettingWouldAllow(err, url, allowPrivate))
          ? PRIVATE_URLS_SUGGESTION
          : undefined,
        cause: err,
      });
  }
}

async function privateSettingWouldAllow(
  err: OutgoingRequestError,
  url: string,
  allowPrivate: boolean,
): Promise<boolean> {
  if (allowPrivate || err.reason !== 'blocked_address') return false;
  try {
    await assertPublicUrl(url, { allowPrivate: true });
    return true;
  } catch (again) {
    return again instanceof OutgoingRequestError && !again.refused;
  }
}

function loadPrices(file: string | null): PriceTable {
  let overrides: unknown = {};
  if (file) {
    try {
      overrides = JSON.parse(readFileSync(file, 'utf8'));
    } catch (err) {
      throw new ConfigError([`LIPSYNC_PRICING_FILE ${file}: ${(err as Error).message}`]);
    }
  }
  const { prices, problems } = buildPriceTable(
    overrides,
    MODELS.map((m) => m.id),
  );
  if (problems.length > 0) throw new ConfigError(problems.map((p) => `LIPSYNC_PRICING_FILE: ${p}`));
  return prices;
}
