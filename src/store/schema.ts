// Table types shared by the SQLite and PostgreSQL dialects. Timestamps are ISO-8601 strings, booleans
// are 0/1 integers and JSON is text, so the same Kysely code runs on both.

export interface OrganizationTable {
  id: string;
  name: string;
  plan: string;
  billing: string;
  concurrency_limit: number | null;
  flags: string;
  draft: number;
  webhook_secret: string;
  /** JSON {provider: key} of the organization's own voice-provider accounts (0005); secret. */
  provider_keys: string | null;
  /** JSON BatchLimitOverrides set by an operator (0008); null: the plan's defaults. */
  batch_limits: string | null;
  created_at: string;
  updated_at: string;
}

export interface ApiKeyTable {
  id: string;
  organization_id: string;
  name: string;
  prefix: string;
  key_hash: string;
  role: string;
  created_by_key_id: string | null;
  /** The signed-in user who created the key (0017); null for keys created with a key or the CLI. */
  created_by_user_id: string | null;
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
}

export interface ProjectTable {
  id: string;
  organization_id: string;
  name: string;
  created_at: string;
  updated_at: string;
}

export interface AssetTable {
  id: string;
  organization_id: string;
  project_id: string | null;
  name: string;
  type: string;
  size: number;
  format: string | null;
  duration_seconds: number | null;
  width: number | null;
  height: number | null;
  storage_key: string;
  content_type: string;
  visibility: string;
  created_at: string;
  updated_at: string;
  /** lower-cased name (0002): case-insensitive search and sort alike on SQLite and PostgreSQL. */
  name_search: string;
  input_type: string;
  created_by_key_id: string | null;
  /** SHA-256 of the content, lower-case hex (0009); null for assets stored before it. */
  content_sha256: string | null;
  /** ffprobe's reading of the stored file, JSON of MediaProbe (0011); null for assets stored before it. */
  probe: string | null;
}

/** A direct upload announced by POST /v2/assets/upload and not registered yet (0009). */
export interface AssetUploadTable {
  storage_key: string;
  organization_id: string;
  key_id: string | null;
  file_name: string;
  content_type: string;
  size: number;
  expires_at: string;
  created_at: string;
  /** Registered or refused (0013): the upload URL takes no more bytes. */
  used_at: string | null;
}

export interface SettingTable {
  key: string;
  value: string;
  updated_at: string;
}

export interface Database {
  organizations: OrganizationTable;
  api_keys: ApiKeyTable;
  projects: ProjectTable;
  assets: AssetTable;
  settings: SettingTable;
  generations: GenerationTable;
  idempotency_keys: IdempotencyKeyTable;
  webhook_deliveries: WebhookDeliveryTable;
  webhook_attempts: WebhookAttemptTable;
  usage_records: UsageRecordTable;
  jobs: JobTable;
  job_turns: JobTurnTable;
  voices: VoiceTable;
  voice_blocks: VoiceBlockTable;
  tts_jobs: TtsJobTable;
  asset_timelines: AssetTimelineTable;
  asset_uploads: AssetUploadTable;
  transcriptions: TranscriptionTable;
  dialogue_edits: DialogueEditTable;
  batches: BatchTable;
  batch_items: BatchItemTable;
  organization_members: OrganizationMemberTable;
  account_links: AccountLinkTable;
  auth_users: AuthUserTable;
  generation_notes: GenerationNoteTable;
}

/** Review notes on a generation's output (0021). */
export interface GenerationNoteTable {
  id: string;
  organization_id: string;
  generation_id: string;
  at_ms: number;
  text: string;
  resolved: number;
  author: string;
  created_at: string;
  updated_at: string;
}

/** Users' memberships (0017): the user ids are better-auth's (auth_users). */
export interface OrganizationMemberTable {
  organization_id: string;
  user_id: string;
  role: string;
  created_at: string;
}

/** better-auth's users (0017): the columns the store reads (members' list); better-auth writes them. */
export interface AuthUserTable {
  id: string;
  name: string;
  email: string;
}

/**
 * Account links (0017; the first-start link is one): make an account with this role in the
 * organization. Only the SHA-256 of the token is kept; used once, before expires_at.
 */
export interface AccountLinkTable {
  token_hash: string;
  organization_id: string;
  role: string;
  created_at: string;
  expires_at: string;
  used_at: string | null;
  /** An invitation's address (0018); null: any address. */
  email: string | null;
  /** Who invited (0018); null: the operator. */
  created_by_user_id: string | null;
}

/** Batches (0008): counters are written in each child's terminal transaction. */
export interface BatchTable {
  id: string;
  organization_id: string;
  api_key_id: string | null;
  status: string;
  total: number;
  success_count: number;
  failed_count: number;
  children_started: number;
  jobs_created: number;
  webhook_url: string | null;
  canceled_at: string | null;
  error_code: string | null;
  error_message: string | null;
  created_at: string;
  updated_at: string;
  finished_at: string | null;
}

/** One JSONL record of a batch (0008): queued, created (generation_id), or failed before it had one. */
export interface BatchItemTable {
  batch_id: string;
  line: number;
  request_id: string;
  payload: string;
  status: string;
  generation_id: string | null;
  error_code: string | null;
  error_message: string | null;
}

/** Dialogue-edit previews (0007); JSON as text; times in ms. */
export interface DialogueEditTable {
  id: string;
  organization_id: string;
  api_key_id: string | null;
  project_id: string | null;
  status: string;
  source_key: string;
  source_asset_id: string | null;
  start_ms: number;
  end_ms: number | null;
  source_transcript: string;
  edits: string;
  voice_id: string | null;
  voice_profile: string | null;
  segment_lipsync: number;
  section_expansion: number;
  rerun_of: string | null;
  preview_key: string | null;
  preview_duration_ms: number | null;
  result: string | null;
  error_code: string | null;
  error_message: string | null;
  error_details: string | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  finished_at: string | null;
}

/** Transcriptions (0006); times in ms from the start of the source. */
export interface TranscriptionTable {
  id: string;
  organization_id: string;
  api_key_id: string | null;
  project_id: string | null;
  status: string;
  source_kind: string;
  source_key: string;
  source_asset_id: string | null;
  start_ms: number;
  end_ms: number | null;
  source_end_ms: number | null;
  max_source_seconds: number | null;
  transcript: string | null;
  speaker_count: number | null;
  error_code: string | null;
  error_message: string | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  finished_at: string | null;
  /** 1, then one more for each correction that settled (0019). */
  revision: number;
}

/** Cloned voices of an organization (0005). */
export interface VoiceTable {
  id: string;
  organization_id: string;
  name: string;
  /** Lower-cased trimmed name: names are unique per organization regardless of case. */
  name_key: string;
  provider: string;
  provider_voice_id: string | null;
  base_voice: string | null;
  profile: string | null;
  sample_asset_id: string | null;
  sample_seconds: number | null;
  verified_at: string | null;
  created_by_key_id: string | null;
  created_at: string;
  updated_at: string;
}

export interface VoiceBlockTable {
  voice_id: string;
  reason: string | null;
  created_at: string;
}

export interface TtsJobTable {
  id: string;
  organization_id: string;
  api_key_id: string | null;
  status: string;
  request: string;
  asset_id: string | null;
  duration_seconds: number | null;
  error_code: string | null;
  error_message: string | null;
  created_at: string;
  updated_at: string;
  started_at: string | null;
  finished_at: string | null;
}

export interface AssetTimelineTable {
  asset_id: string;
  organization_id: string;
  timeline: string;
}

/** Fair share (0013): each organization's latest turn at the claim; a higher turn was served later. */
export interface JobTurnTable {
  organization_id: string;
  turn: number;
}

/** How work runs (0004). Times are milliseconds since the epoch, taken from the database clock. */
export interface JobTable {
  id: string;
  kind: string;
  subject_id: string;
  organization_id: string;
  payload: string;
  payload_version: number;
  status: string;
  priority: number;
  run_at: number;
  attempts: number;
  max_attempts: number;
  lease_token: string | null;
  lease_expires_at: number | null;
  locked_by: string | null;
  parent_id: string | null;
  /** Batch children: the most of the organization's children that may run at once (0008). */
  share_limit: number | null;
  timeout_ms: number;
  deadline_at: number | null;
  cancel_requested: number;
  progress: number;
  last_error: string | null;
  created_at: number;
  updated_at: number;
  started_at: number | null;
  finished_at: number | null;
}

export interface GenerationTable {
  id: string;
  organization_id: string;
  project_id: string | null;
  api_key_id: string | null;
  model: string;
  status: string;
  source: string;
  input: string;
  resolved_input: string;
  options: string | null;
  segments: string | null;
  webhook_url: string | null;
  output_file_name: string | null;
  output_format: string;
  output_key: string | null;
  watermarked_key: string | null;
  output_url: string | null;
  output_duration: number | null;
  progress: number;
  error: string | null;
  error_code: string | null;
  quality: string | null;
  dub: string | null;
  dub_audio_key: string | null;
  /** A preview's still (0020); null for other generations. */
  still_key: string | null;
  started_at: string | null;
  finished_at: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

export interface IdempotencyKeyTable {
  organization_id: string;
  key: string;
  scope: string;
  fingerprint: string;
  state: string;
  resource_id: string | null;
  created_at: string;
  expires_at: string;
}

export interface WebhookDeliveryTable {
  id: string;
  organization_id: string;
  /** The resource reported on (0012): a generation, a batch, ... */
  subject_id: string | null;
  event: string;
  url: string;
  payload: string;
  status: string;
  attempts: number;
  next_attempt_at: string;
  lease_expires_at: string | null;
  last_status_code: number | null;
  last_error: string | null;
  created_at: string;
  updated_at: string;
}

export interface WebhookAttemptTable {
  id: string;
  delivery_id: string;
  subject_id: string | null;
  attempt: number;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
  attempted_at: string;
}

export interface UsageRecordTable {
  id: string;
  organization_id: string;
  generation_id: string;
  api_key_id: string | null;
  api_key_name: string | null;
  model: string;
  seconds: number;
  frames: number;
  cost: number;
  credits: number | null;
  created_at: string;
}
