// The long-lived services as routes, CLI commands and background work receive them. Built once per
// process by the composition root (src/app/container.ts); declared here so that http/ can take them
// without importing the layer above it.
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Db } from '../store/database.js';
import type { Store } from '../store/index.js';
import type { BlobStore } from '../storage/blob-store.js';
import type { UrlSigner } from '../storage/url-signer.js';
import type { EventBus } from '../jobs/event-bus.js';
import type { HandlerRegistry } from '../jobs/handler.js';
import type { JobQueue } from '../jobs/queue.js';
import type { RemotePresence } from '../jobs/remote-presence.js';
import type { PriceTable } from '../domain/pricing.js';
import type { Metrics } from '../metrics/metrics.js';
import type { OrganizationService } from './organizations.js';
import type { ApiKeyService } from './api-keys.js';
import type { ProjectService } from './projects.js';
import type { NoteService } from './notes.js';
import type { AdmissionService } from './admission.js';
import type { AssetService } from './assets.js';
import type { RateLimiter } from './rate-limiter.js';
import type { GenerationService } from './generations.js';
import type { TranscriptionService } from './transcriptions.js';
import type { DialogueEditService } from './dialogue-edits.js';
import type { BatchService } from './batches.js';
import type { SpeechService } from './speech.js';
import type { TranslationService } from './translation.js';
import type { TtsService } from './tts.js';
import type { VoiceService } from './voices.js';
import type { IdempotencyService } from './idempotency.js';
import type { Drain } from './drain.js';
import type { WebSessionService } from './web-sessions.js';
import type { MemberService } from './members.js';

export interface Services {
  readonly config: Config;
  readonly logger: Logger;
  readonly db: Db;
  readonly store: Store;
  readonly organizations: OrganizationService;
  readonly apiKeys: ApiKeyService;
  /** Web sessions (/api/auth/*) and the session cookies of /v2 calls. */
  readonly webSessions: WebSessionService;
  /** The organization's members (web-session users): list, invite, change role, remove. */
  readonly members: MemberService;
  readonly projects: ProjectService;
  /** Review notes pinned to moments of generations' outputs. */
  readonly notes: NoteService;
  readonly admission: AdmissionService;
  /** Signs and checks the local store's file URLs (GET /v2/files/...). */
  readonly urlSigner: UrlSigner;
  readonly blobs: BlobStore;
  readonly assets: AssetService;
  readonly rateLimiter: RateLimiter;
  readonly bus: EventBus;
  /** Every job kind this build knows, with its handler. */
  readonly handlers: HandlerRegistry;
  readonly queue: JobQueue;
  readonly idempotency: IdempotencyService;
  readonly generations: GenerationService;
  readonly speech: SpeechService;
  /** Dubbing's translation providers and languages catalogue. */
  readonly translation: TranslationService;
  readonly tts: TtsService;
  readonly voices: VoiceService;
  readonly transcriptions: TranscriptionService;
  readonly dialogueEdits: DialogueEditService;
  readonly batches: BatchService;
  readonly prices: PriceTable;
  /** This container's Prometheus registry and metrics (GET /metrics, docs/operations.md). */
  readonly metrics: Metrics;
  /** Begun at SIGTERM on an API instance: not ready, long-polls answered at once (docs/operations.md). */
  readonly drain: Drain;
  /** Remote workers this instance hears from (lipsync_remote_workers_connected). */
  readonly remoteWorkers: RemotePresence;
  close(): Promise<void>;
}
