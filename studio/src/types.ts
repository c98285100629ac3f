// The API's answers as the studio reads them (the server's OpenAPI document at /docs/json is the full shape).

export interface Generation {
  id: string;
  createdAt: string;
  status: 'PENDING' | 'PROCESSING' | 'COMPLETED' | 'FAILED' | 'REJECTED' | 'CANCELED' | string;
  model: string;
  input: { type: string; url?: string; assetId?: string }[];
  options: Record<string, unknown> | null;
  outputUrl: string | null;
  outputDuration: number | null;
  error: string | null;
  errorCode?: string;
  progress_percent?: number;
  quality?: Record<string, unknown>;
  projectId?: string | null;
  outputFileName?: string | null;
  /** A preview (options.preview): where it starts and its still. */
  preview?: { atMs: number; stillUrl: string | null };
}

export interface Asset {
  id: string;
  name?: string;
  type: string;
  url?: string;
  durationSeconds?: number;
  createdAt: string;
  [extra: string]: unknown;
}

export interface ApiKey {
  id: string;
  name: string;
  prefix: string;
  role: string;
  createdByUserId: string | null;
  createdAt: string;
  lastUsedAt: string | null;
  expiresAt: string | null;
}

export const TERMINAL = new Set(['COMPLETED', 'FAILED', 'REJECTED', 'CANCELED']);

// Settings (the page's API answers: /v2/api-keys, /v2/organizations/*).
export type Role = 'owner' | 'admin' | 'member';

export interface ApiKeyRow extends ApiKey {
  status: 'active' | 'revoked' | 'expired' | string;
  revokedAt: string | null;
}

export interface CreatedApiKey extends ApiKeyRow {
  /** The secret key: in this answer only. */
  key: string;
}

export interface Member {
  userId: string;
  email: string;
  name: string;
  role: Role;
  joinedAt: string;
}

export interface Invitation {
  email: string;
  role: Role;
  expiresAt: string;
  delivery: 'email' | 'log';
}

export interface Usage {
  periodStart: string;
  generations: { total: number; byStatus: Record<string, number> };
  outputSeconds: number;
  plan: string;
  limits: {
    concurrency: number;
    maxFileBytes: number;
    maxDurationSeconds: number;
    watermark: boolean;
    batch: boolean;
    voiceCloneSlots: number;
  };
}

/** Every state that ends a generation (TERMINAL plus the run-time limit). */
export const ENDED = new Set([...TERMINAL, 'TIMED_OUT']);

export interface Project {
  id: string;
  name: string;
  createdAt: string;
  updatedAt: string;
}

/** One entry of GET /v2/errors. */
export interface CatalogueEntry {
  code: string;
  message: string;
  suggestion: string;
  status: number;
}

/** GET /v2/voices: pass `id` as voiceId. */
export interface Voice {
  id: string;
  name: string;
  provider: string;
  type: 'builtin' | 'cloned';
  labels?: Record<string, string>;
  restriction?: { code: string; message: string };
}

export interface Project {
  id: string;
  name: string;
}

/** POST /v2/analyze/cost (one per request) and POST /v2/generations/estimate. */
export interface Estimate {
  model: string;
  duration: number;
  fps: number;
  estimatedFrameCount: number;
  estimatedGenerationCost: number;
  estimatedCredits: number | null;
}

/** POST /v2/assets/upload with JSON: where to PUT the file, and the url to register afterwards. */
export interface UploadTarget {
  uploadUrl: string;
  url: string;
  expiresIn: number;
}

export type AssetKind = 'VIDEO' | 'AUDIO' | 'IMAGE';

/** GET /v2/dubbing/languages: per translation provider, what it translates from and to. */
export interface DubbingLanguage {
  code: string;
  name: string;
}
export interface DubbingRoute {
  from: string;
  to: string;
  quality: 'direct' | 'pivot';
  via?: string;
  note?: string;
}
export interface DubbingProvider {
  provider: 'local' | 'openai' | 'deepl';
  available: boolean;
  note: string;
  sources: DubbingLanguage[];
  targets: DubbingLanguage[];
  /** The only routes, where not every source reaches every target (local). */
  pairs?: DubbingRoute[];
}
export interface DubbingLanguages {
  providers: DubbingProvider[];
}

/** One segment of GET /v2/generations/{id}/transcript (times in ms). */
export interface DubSegment {
  id: string;
  startMs: number;
  endMs: number;
  speaker: string;
  sourceText: string;
  translatedText: string;
  dubStartMs: number;
  dubEndMs: number;
  stretch: number;
  fits: boolean;
  confidence: number | null;
}

export interface DubTranscript {
  generationId: string;
  sourceLang: string;
  targetLang: string;
  provider: string;
  route: { via: string | null; quality: string } | null;
  transcriptSource: 'recognized' | 'given';
  voices: { speaker: string; provider: string; voiceId: string; name: string; matched: boolean }[];
  segments: DubSegment[];
  basedOn?: { generationId: string; regenerated: string[] };
}

/** GET /v2/batch/{id} (the public API's mix of snake_case and camelCase). */
export interface Batch {
  id: string;
  created_at: string;
  status: 'PENDING' | 'JOBS_CREATED' | 'PROCESSING' | 'COMPLETED' | 'FAILED' | string;
  metrics: { total_generations: number; success_count: number; failed_count: number; pending_count: number };
  outputUrl: string;
  webhookUrl: string | null;
  finished_at: string | null;
  canceled_at: string | null;
  error?: string;
  error_code?: string;
}

/** POST /v2/batch with dry_run: the file passed every check; nothing was created. */
export interface BatchValidated {
  status: 'VALIDATED';
  summary: {
    total_records: number;
    request_ids: { first: string; last: string };
    models: Record<string, number>;
    assets_resolved: number;
    projects_resolved: number;
    text_inputs: number;
  };
}

export const BATCH_ENDED = new Set(['COMPLETED', 'FAILED']);

/** A transcript word: ids run across the transcript, times absolute in the source (docs/transcription.md). */
export interface TranscriptWord {
  id: string;
  text: string;
  startMs: number;
  endMs: number;
  speakerId?: string | null;
}

export interface Transcript {
  segments: { id: string; words: TranscriptWord[] }[];
}

/** GET /v2/transcriptions/{id}. */
export interface Transcription {
  id: string;
  status: 'PENDING' | 'PROCESSING' | 'COMPLETED' | 'FAILED';
  sourceVideoUrl: string | null;
  sourceStartMs: number;
  sourceEndMs: number | null;
  transcript: Transcript | null;
  error: { code: string | null; message: string | null } | null;
  /** 1, then one more for each hand correction that settled (PATCH /v2/transcriptions/{id}). */
  revision: number;
}

/** One edit of POST /v2/dialogue-edits (docs/dialogue-editing.md). */
export type DialogueOperation =
  { kind: 'change'; wordId: string; replacement: string } | { kind: 'remove'; wordIds: string[] };

/** An edited region: where it sits in the preview and in the source. */
export interface DialogueSlot {
  kind: 'change' | 'remove';
  outputStartMs: number;
  outputDurationMs: number;
  sourceStartMs: number;
  sourceDurationMs: number;
}

/** GET /v2/dialogue-edits/{id}. */
export interface DialogueEditJob {
  id: string;
  status: 'PENDING' | 'PROCESSING' | 'COMPLETED' | 'COMPLETED_PARTIAL' | 'FAILED';
  previewAudioUrl: string | null;
  previewDurationMs: number | null;
  resultTranscript: Transcript | null;
  resultSlots: DialogueSlot[] | null;
  error: { code: string | null; message: string | null; wordIds?: string[]; [extra: string]: unknown } | null;
}

/** A review note pinned to a moment of a generation's output (GET /v2/generations/{id}/notes). */
export interface Note {
  id: string;
  generationId: string;
  atMs: number;
  text: string;
  resolved: boolean;
  author: string;
  createdAt: string;
  updatedAt: string;
}
