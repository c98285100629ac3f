import type { Db } from './database.js';
import { ApiKeyRepository } from './api-keys.js';
import { AssetRepository } from './assets.js';
import { OrganizationRepository } from './organizations.js';
import { ProjectRepository } from './projects.js';
import { SettingsRepository } from './settings.js';
import { GenerationRepository } from './generations.js';
import { IdempotencyRepository } from './idempotency.js';
import { WebhookRepository } from './webhooks.js';
import { JobRepository } from './jobs.js';
import { UsageRepository } from './usage.js';
import { VoiceRepository } from './voices.js';
import { TtsJobRepository } from './tts-jobs.js';
import { TranscriptionRepository } from './transcriptions.js';
import { DialogueEditRepository } from './dialogue-edits.js';
import { BatchRepository } from './batches.js';
import { JobMirrorRepository } from './job-mirror.js';
import { MemberRepository } from './members.js';
import { NoteRepository } from './notes.js';

export interface Store {
  readonly db: Db;
  readonly organizations: OrganizationRepository;
  readonly apiKeys: ApiKeyRepository;
  readonly projects: ProjectRepository;
  readonly assets: AssetRepository;
  readonly settings: SettingsRepository;
  readonly generations: GenerationRepository;
  readonly idempotency: IdempotencyRepository;
  readonly webhooks: WebhookRepository;
  readonly jobs: JobRepository;
  readonly usage: UsageRepository;
  readonly voices: VoiceRepository;
  readonly ttsJobs: TtsJobRepository;
  readonly transcriptions: TranscriptionRepository;
  readonly dialogueEdits: DialogueEditRepository;
  readonly batches: BatchRepository;
  /** Job state copied onto resource rows (written by the job system only). */
  readonly jobMirror: JobMirrorRepository;
  /** Users' memberships and first-start links (web sessions). */
  readonly members: MemberRepository;
  /** Review notes on generations' outputs. */
  readonly notes: NoteRepository;
}

export function createStore(db: Db): Store {
  const k = db.kysely;
  return {
    db,
    organizations: new OrganizationRepository(k, db.dialect),
    apiKeys: new ApiKeyRepository(k),
    projects: new ProjectRepository(k),
    assets: new AssetRepository(k),
    settings: new SettingsRepository(k),
    generations: new GenerationRepository(k, db.dialect),
    idempotency: new IdempotencyRepository(k),
    webhooks: new WebhookRepository(k),
    jobs: new JobRepository(k, db.dialect),
    usage: new UsageRepository(k),
    voices: new VoiceRepository(k),
    ttsJobs: new TtsJobRepository(k),
    transcriptions: new TranscriptionRepository(k),
    dialogueEdits: new DialogueEditRepository(k),
    batches: new BatchRepository(k, db.dialect),
    jobMirror: new JobMirrorRepository(k),
    members: new MemberRepository(k),
    notes: new NoteRepository(k),
  };
}
