// Environment -> validated, frozen Config. Read once at start; a bad value stops the start with a
// message naming every bad variable. No other module reads process.env.
import { dirname, join, resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { Type, type TSchema } from '@sinclair/typebox';
import { isPlan, PLANS, type Plan } from './domain/plans.js';
import { defaultSpeechProcesses, type ProcessPoolLimits } from './processes/pool.js';

export type Role = 'api' | 'worker' | 'all';

/** The built-in engines (src/engines/registry.ts). */
export const ENGINE_NAMES = ['cpu', 'passthrough'] as const;
export type EngineName = (typeof ENGINE_NAMES)[number];

const SPEECH_PROVIDERS = ['local', 'openai', 'elevenlabs'] as const;

/** Groups of the configuration reference (docs/configuration.md), in the order it lists them. */
export const CONFIG_GROUPS = {
  server: 'Server',
  http: 'HTTP connections',
  database: 'Database and data folder',
  storage: 'Storage and signed URLs',
  limits: 'Limits',
  workers: 'Workers and jobs',
  engine: 'Engine and articulation',
  speech: 'Speech: synthesis, voices, recognition',
  translation: 'Translation (dubbing)',
  webhooks: 'Webhooks',
  sessions: 'Web sessions and email',
  operations: 'Metrics and shutdown',
  cli: 'The lipsync command (client side)',
} as const;
export type ConfigGroup = keyof typeof CONFIG_GROUPS;

/**
 * One environment variable: its group and a TypeBox schema holding its type, bounds, default and
 * description. `defaultText` says the default in words where it depends on other variables.
 */
export interface EnvVariable {
  readonly group: ConfigGroup;
  readonly schema: TSchema;
  readonly defaultText?: string;
}

const intVar = (minimum: number, maximum: number, def: number | undefined, description: string) =>
  Type.Integer({ minimum, maximum, default: def, description });
const flagVar = (def: boolean, description: string) => Type.Boolean({ default: def, description });
const textVar = (description: string, def?: string) => Type.String({ default: def, description });
const enumVar = (values: readonly string[], def: string, description: string) =>
  Type.Union(
    values.map((v) => Type.Literal(v)),
    { default: def, description },
  );
const urlVar = (protocols: readonly string[], description: string) =>
  Type.String({ format: 'uri', protocols, description });

/** The viseme models the service can run (LIPSYNC_VISEME_MODEL). */
export const VISEME_MODELS = ['articulation-v1', 'cherry', 'none'] as const;
export type VisemeModelId = Exclude<(typeof VISEME_MODELS)[number], 'none'>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const GiB = 1024 ** 3;

/**
 * Every environment variable the service reads: the one table that loadConfig parses and validates
 * against and that docs/configuration.md is generated from (npm run docs:config).
 */
export const ENV_VARIABLES = {
  PORT: { group: 'server', schema: intVar(0, 65535, 8080, 'HTTP port of the API.') },
  HOST: { group: 'server', schema: textVar('Bind address of the API.', '0.0.0.0') },
  LIPSYNC_PUBLIC_URL: {
    group: 'server',
    schema: urlVar(
      ['http:', 'https:'],
      'Public base URL: signed file URLs and the OpenAPI server are built on it.',
    ),
    defaultText: '`http://localhost:$PORT`',
  },
  LIPSYNC_ROLE: {
    group: 'server',
    schema: enumVar(
      ['api', 'worker', 'all'],
      'all',
      '`api` serves HTTP only, `worker` runs jobs only, `all` both.',
    ),
  },
  LOG_LEVEL: { group: 'server', schema: enumVar(LOG_LEVELS, 'info', 'pino log level.') },
  LIPSYNC_TRUST_PROXY: {
    group: 'server',
    schema: flagVar(
      false,
      'Behind a reverse proxy: client IPs (per-IP rate limits) come from `X-Forwarded-For`.',
    ),
  },

  LIPSYNC_REQUEST_TIMEOUT_SECONDS: {
    group: 'http',
    schema: intVar(
      1,
      24 * 3600,
      600,
      'Time to receive a whole request, headers and body; then 408 and close.',
    ),
  },
  LIPSYNC_HEADERS_TIMEOUT_SECONDS: {
    group: 'http',
    schema: intVar(1, 3600, 30, 'Time to receive the request headers; at most the request timeout.'),
  },
  LIPSYNC_CONNECTION_TIMEOUT_SECONDS: {
    group: 'http',
    schema: intVar(
      0,
      24 * 3600,
      600,
      'A socket idle this long is closed; 0 = never. Must exceed 10 (long-polls) and the fetch timeout.',
    ),
  },
  LIPSYNC_KEEP_ALIVE_TIMEOUT_SECONDS: {
    group: 'http',
    schema: intVar(1, 3600, 72, 'How long an idle keep-alive connection waits for its next request.'),
  },

  LIPSYNC_DATA_DIR: {
    group: 'database',
    schema: textVar(
      'SQLite file, stored media (local storage), temp files, the generated signing secret.',
      './data',
    ),
  },
  DATABASE_URL: {
    group: 'database',
    schema: urlVar(['postgres:', 'postgresql:'], 'PostgreSQL database; unset = SQLite in the data folder.'),
  },
  REDIS_URL: {
    group: 'database',
    schema: urlVar(
      ['redis:', 'rediss:'],
      'Shares rate-limit counters between API instances; unset = in memory.',
    ),
  },

  LIPSYNC_STORAGE: {
    group: 'storage',
    schema: enumVar(
      ['local', 's3'],
      'local',
      'Where media and outputs live: the data folder or an S3 bucket.',
    ),
  },
  LIPSYNC_S3_BUCKET: {
    group: 'storage',
    schema: textVar('An existing bucket (checked at start, never created); required with `s3`.'),
  },
  LIPSYNC_S3_ACCESS_KEY_ID: { group: 'storage', schema: textVar('Access key id; required with `s3`.') },
  LIPSYNC_S3_SECRET_ACCESS_KEY: {
    group: 'storage',
    schema: textVar('Secret key (never logged); required with `s3`.'),
  },
  LIPSYNC_S3_ENDPOINT: {
    group: 'storage',
    schema: urlVar(
      ['http:', 'https:'],
      'An S3-compatible server (MinIO, R2, ...); unset = AWS S3 of the region.',
    ),
  },
  LIPSYNC_S3_REGION: {
    group: 'storage',
    schema: textVar("The bucket's region (`auto` for Cloudflare R2).", 'us-east-1'),
  },
  LIPSYNC_S3_FORCE_PATH_STYLE: {
    group: 'storage',
    schema: flagVar(false, '`<endpoint>/<bucket>/<key>` URLs (usual for MinIO).'),
  },
  LIPSYNC_SIGNING_SECRET: {
    group: 'storage',
    schema: Type.String({
      minLength: 32,
      description: 'HMAC key of signed file URLs; set the same value on every API instance.',
    }),
    defaultText: 'generated once into the data folder',
  },
  LIPSYNC_UPLOAD_SWEEP_GRACE_SECONDS: {
    group: 'storage',
    schema: intVar(
      0,
      7 * 24 * 3600,
      3600,
      'Unregistered direct uploads are removed this long after their URL expired.',
    ),
  },

  LIPSYNC_ALLOW_PRIVATE_URLS: {
    group: 'limits',
    schema: flagVar(
      false,
      'Media and webhook URLs may reach loopback and private addresses (tests, private networks).',
    ),
  },
  LIPSYNC_RATE_LIMIT_ENABLED: { group: 'limits', schema: flagVar(true, 'Off disables rate limiting.') },
  LIPSYNC_RATE_LIMIT_PER_MINUTE: {
    group: 'limits',
    schema: intVar(
      1,
      1_000_000,
      600,
      'Requests per minute per key (or IP) of endpoints without a tabled limit.',
    ),
  },
  LIPSYNC_JSON_BODY_LIMIT_BYTES: {
    group: 'limits',
    schema: intVar(1024, 1024 ** 3, 10 * 1024 ** 2, 'Largest JSON request body.'),
  },
  LIPSYNC_MAX_UPLOAD_BYTES: {
    group: 'limits',
    schema: intVar(1, 5 * GiB, 5 * GiB, 'Largest file of a multipart upload.'),
  },
  LIPSYNC_FETCH_MAX_BYTES: {
    group: 'limits',
    schema: intVar(1, 5 * GiB, 5 * GiB, 'Largest download of a media URL.'),
  },
  LIPSYNC_FETCH_TIMEOUT_SECONDS: {
    group: 'limits',
    schema: intVar(1, 3600, 300, 'Longest download of a media URL.'),
  },
  LIPSYNC_BATCH_CONCURRENCY: {
    group: 'limits',
    schema: Type.String({
      pattern: '^[a-z]+=\\d+(,[a-z]+=\\d+)*$',
      description:
        'Unfinished batches per organization by plan, `plan=n,...` (one organization: `lipsync org batch-limits`).',
    }),
    defaultText: '`scale=2,enterprise=5`',
  },

  LIPSYNC_WORKER_CONCURRENCY: {
    group: 'workers',
    schema: intVar(1, 64, 1, 'Jobs run at once per worker process (`lipsync worker --concurrency`).'),
  },
  LIPSYNC_WORKER_KINDS: {
    group: 'workers',
    schema: Type.String({
      pattern: '^[a-z][a-z0-9_-]{0,63}(,[a-z][a-z0-9_-]{0,63})*$',
      description: 'Job kinds this process runs, comma-separated (`lipsync worker --kinds generation`).',
    }),
    defaultText: 'every kind',
  },
  LIPSYNC_WORKER_IDLE_POLL_MS: {
    group: 'workers',
    schema: intVar(50, 60_000, 1000, 'Longest sleep of an idle worker; new work wakes it at once.'),
    defaultText: '`1000` (SQLite), `5000` (PostgreSQL)',
  },
  LIPSYNC_WORKER_UPLOAD_MAX_BYTES: {
    group: 'workers',
    // Two outputs (a generation and its watermarked copy) of the largest plan file size.
    schema: intVar(1024 ** 2, 1024 ** 4, 10 * GiB, 'The most one attempt of a remote job uploads in total.'),
  },
  LIPSYNC_JOB_LEASE_SECONDS: {
    group: 'workers',
    schema: intVar(2, 3600, 30, "A job's lease without a heartbeat before the watchdog requeues it."),
  },
  LIPSYNC_JOB_MAX_ATTEMPTS: {
    group: 'workers',
    schema: intVar(1, 20, 3, 'Claims of one job before it fails (a graceful shutdown does not count).'),
  },
  LIPSYNC_JOB_TIMEOUT_SECONDS: {
    group: 'workers',
    schema: intVar(10, 7 * 24 * 3600, 3600, 'Longest run of one attempt, from its start; then `TIMED_OUT`.'),
  },

  LIPSYNC_DEFAULT_ENGINE: {
    group: 'engine',
    schema: enumVar(ENGINE_NAMES, 'cpu', 'Engine of every model the engines file does not map.'),
  },
  LIPSYNC_ENGINES_FILE: {
    group: 'engine',
    schema: textVar(
      'JSON mapping of model ids to engines and their settings (docs/engine.md); unset = built-in.',
    ),
  },
  LIPSYNC_ENGINE_WARM_UP: {
    group: 'engine',
    schema: flagVar(
      true,
      'A worker loads the face models at start and keeps them loaded (about 160 MB per job slot).',
    ),
  },
  LIPSYNC_MODELS_DIR: {
    group: 'engine',
    schema: textVar('Optional model files (`lipsync models download`), such as the cherry viseme model.'),
    defaultText: '`$LIPSYNC_DATA_DIR/models`',
  },
  LIPSYNC_ARTICULATION: {
    group: 'engine',
    schema: enumVar(
      ['auto', 'acoustic'],
      'auto',
      '`auto`: voice activity with transcript alignment or recognition; `acoustic`: loudness only.',
    ),
  },
  LIPSYNC_VISEME_MODEL: {
    group: 'engine',
    schema: enumVar(
      VISEME_MODELS,
      'articulation-v1',
      'Lips of recordings without trusted words: the shipped model, the downloaded cherry model, or none (acoustic shapes).',
    ),
  },
  LIPSYNC_ARTICULATION_RECOGNIZE: {
    group: 'engine',
    schema: flagVar(false, 'Recordings without a transcript are recognized to shape the mouth per sound.'),
    defaultText: 'off; on when `LIPSYNC_STT_PROVIDER` is `openai`',
  },
  LIPSYNC_PRICING_FILE: {
    group: 'engine',
    schema: textVar('JSON per-model prices for estimates (docs/pricing.md); unset = built-in table.'),
  },

  LIPSYNC_TTS_DEFAULT_PROVIDER: {
    group: 'speech',
    schema: enumVar(SPEECH_PROVIDERS, 'local', 'Provider of a TTS request or text input that names none.'),
  },
  LIPSYNC_TTS_TIMEOUT_SECONDS: {
    group: 'speech',
    // A 5,000-character script took the local engines 8-16 s on a loaded 2-core machine; the margin is
    // for slower machines and remote providers under load.
    schema: intVar(1, 600, 120, 'Longest synthesis; then 504 `provider_service_unavailable`.'),
  },
  LIPSYNC_SPEECH_PROCESSES: {
    group: 'speech',
    schema: intVar(
      1,
      256,
      undefined,
      'Local speech tool processes (synthesis, recognition, alignment, voices) at once.',
    ),
    defaultText: 'the number of cores',
  },
  LIPSYNC_SPEECH_QUEUE: {
    group: 'speech',
    schema: intVar(
      0,
      10_000,
      32,
      'Speech tool runs that may wait for a process; more get 503 with `Retry-After`.',
    ),
  },
  LIPSYNC_SPEECH_QUEUE_WAIT_SECONDS: {
    group: 'speech',
    schema: intVar(1, 600, 30, 'Longest wait for a speech process; then 503 with `Retry-After`.'),
  },
  LIPSYNC_OPENAI_TTS_URL: {
    group: 'speech',
    schema: urlVar(['http:', 'https:'], 'An OpenAI-compatible speech server; unset = provider off.'),
  },
  LIPSYNC_OPENAI_TTS_API_KEY: { group: 'speech', schema: textVar('Its API key.') },
  LIPSYNC_OPENAI_TTS_MODEL: { group: 'speech', schema: textVar('Its model.', 'tts-1') },
  LIPSYNC_OPENAI_TTS_VOICES: {
    group: 'speech',
    schema: textVar('Voices offered when the server cannot list its own, comma-separated.'),
    defaultText: "OpenAI's own voices",
  },
  LIPSYNC_ELEVENLABS_ENABLED: {
    group: 'speech',
    schema: flagVar(false, 'ElevenLabs on; without a server-wide key, organizations bring their own.'),
    defaultText: 'on when its key or URL is set',
  },
  LIPSYNC_ELEVENLABS_API_KEY: { group: 'speech', schema: textVar('Server-wide ElevenLabs key.') },
  LIPSYNC_ELEVENLABS_URL: {
    group: 'speech',
    schema: urlVar(['http:', 'https:'], 'ElevenLabs API base URL.'),
    defaultText: '`https://api.elevenlabs.io`',
  },
  LIPSYNC_ELEVENLABS_MODEL: {
    group: 'speech',
    schema: textVar('ElevenLabs model.', 'eleven_multilingual_v2'),
  },
  LIPSYNC_VOICE_CLONE_VERIFICATION: {
    group: 'speech',
    schema: flagVar(false, 'Clones need `lipsync voice verify ID` (consent) before use.'),
  },
  LIPSYNC_STT_PROVIDER: {
    group: 'speech',
    schema: enumVar(
      ['local', 'openai'],
      'local',
      'Speech recognition of transcriptions (docs/transcription.md).',
    ),
    defaultText: '`local`; `openai` when `LIPSYNC_OPENAI_STT_URL` is set',
  },
  LIPSYNC_OPENAI_STT_URL: {
    group: 'speech',
    schema: urlVar(['http:', 'https:'], 'An OpenAI-compatible transcription server; unset = off.'),
  },
  LIPSYNC_OPENAI_STT_API_KEY: { group: 'speech', schema: textVar('Its API key.') },
  LIPSYNC_OPENAI_STT_MODEL: { group: 'speech', schema: textVar('Its model.', 'whisper-1') },

  LIPSYNC_TRANSLATION_TIMEOUT_SECONDS: {
    group: 'translation',
    schema: intVar(1, 600, 60, 'Longest translation request or Apertium run; then 504.'),
  },
  LIPSYNC_OPENAI_TRANSLATION_URL: {
    group: 'translation',
    schema: urlVar(['http:', 'https:'], 'An OpenAI-compatible chat server; unset = provider off.'),
  },
  LIPSYNC_OPENAI_TRANSLATION_API_KEY: { group: 'translation', schema: textVar('Its API key.') },
  LIPSYNC_OPENAI_TRANSLATION_MODEL: {
    group: 'translation',
    schema: textVar('Its chat model.', 'gpt-4o-mini'),
  },
  LIPSYNC_DEEPL_API_KEY: { group: 'translation', schema: textVar('DeepL API key; unset = provider off.') },
  LIPSYNC_DEEPL_URL: {
    group: 'translation',
    schema: urlVar(['http:', 'https:'], 'DeepL API base URL.'),
    defaultText: '`https://api-free.deepl.com` for keys ending in `:fx`, else `https://api.deepl.com`',
  },

  LIPSYNC_WEBHOOK_RETRY_HOURS: {
    group: 'webhooks',
    schema: intVar(1, 168, 24, 'How long a webhook delivery is retried.'),
  },
  LIPSYNC_WEBHOOK_TIMEOUT_SECONDS: {
    group: 'webhooks',
    schema: intVar(1, 120, 10, 'Timeout of one delivery attempt.'),
  },

  LIPSYNC_SESSION_TTL_HOURS: {
    group: 'sessions',
    schema: intVar(1, 90 * 24, 7 * 24, 'How long a web session lasts after sign-in.'),
  },
  LIPSYNC_SIGN_UP: {
    group: 'sessions',
    schema: flagVar(
      true,
      'Anyone may sign up; a new account owns a new draft organization until the operator activates it.',
    ),
  },
  LIPSYNC_TRUSTED_ORIGINS: {
    group: 'sessions',
    schema: textVar(
      "Comma-separated origins (`https://studio.example.com`) whose pages may send signed-in requests, beside the public URL's.",
    ),
  },
  LIPSYNC_SMTP_URL: {
    group: 'sessions',
    schema: urlVar(
      ['smtp:', 'smtps:'],
      'SMTP server for sign-in codes (`smtps://user:password@mail.example.com:465`); unset: the codes go to the server log.',
    ),
  },
  LIPSYNC_SMTP_FROM: {
    group: 'sessions',
    schema: textVar('Sender address of the emails.'),
    defaultText: "`lipsync@` and the public URL's host",
  },

  LIPSYNC_METRICS_TOKEN: {
    group: 'operations',
    schema: textVar('When set, `GET /metrics` needs `Authorization: Bearer <token>`.'),
  },
  LIPSYNC_METRICS_PORT: {
    group: 'operations',
    schema: intVar(
      1,
      65535,
      undefined,
      'A listener of its own for `GET /metrics` and `/healthz` (how workers are scraped).',
    ),
  },
  LIPSYNC_METRICS_HOST: {
    group: 'operations',
    schema: textVar('Bind address of that listener.'),
    defaultText: '`HOST`',
  },
  LIPSYNC_SHUTDOWN_DRAIN_SECONDS: {
    group: 'operations',
    schema: intVar(0, 600, 5, 'After SIGTERM, an API instance reads not ready but keeps serving this long.'),
  },
  LIPSYNC_SHUTDOWN_TIMEOUT_SECONDS: {
    group: 'operations',
    schema: intVar(
      1,
      3600,
      25,
      'Hard cap of a shutdown (more than the drain); then open requests are cut, exit 1.',
    ),
  },

  LIPSYNC_SERVER: {
    group: 'cli',
    schema: textVar(
      'The server of client commands; `--server` overrides it, it overrides the saved `lipsync login`.',
    ),
    defaultText: '`http://127.0.0.1:$PORT`',
  },
  LIPSYNC_API_KEY: {
    group: 'cli',
    schema: textVar(
      'The API key of client commands; `--key` overrides it, it overrides the saved `lipsync login`.',
    ),
  },
  LIPSYNC_WORKER_TOKEN: {
    group: 'cli',
    schema: textVar('The token of `lipsync worker --server` (instead of `--token`).'),
  },
} as const satisfies Record<string, EnvVariable>;
export type EnvName = keyof typeof ENV_VARIABLES;

/** Translation providers of dubbing (docs/dubbing.md); local Apertium is always on. */
export interface TranslationConfig {
  readonly timeoutMs: number;
  /** OpenAI-compatible `POST /v1/chat/completions` server; null = provider off. */
  readonly openai: { readonly url: string; readonly apiKey: string | null; readonly model: string } | null;
  /** DeepL; `url` null = chosen from the key (free or pro API). */
  readonly deepl: { readonly apiKey: string; readonly url: string | null } | null;
}

/** Speech providers (docs/speech.md). */
export interface SpeechConfig {
  /** The provider a TTS request or text input uses when it names none. */
  readonly defaultProvider: 'local' | 'openai' | 'elevenlabs';
  /** Longest wait for one synthesis (any provider). */
  readonly synthesisTimeoutMs: number;
  /** The process-wide bound on local speech tool processes (src/processes/pool.ts). */
  readonly processes: ProcessPoolLimits;
  /** OpenAI-compatible `POST /v1/audio/speech` server; null = provider off. */
  readonly openai: {
    readonly url: string;
    readonly apiKey: string | null;
    readonly model: string;
    readonly voices: readonly string[] | null;
  } | null;
  /** ElevenLabs API; the key may be null (organizations then bring their own). */
  readonly elevenlabs: {
    readonly url: string;
    readonly apiKey: string | null;
    readonly modelId: string;
  } | null;
  /** Clones need `lipsync voice verify ID` before use (consent verification). */
  readonly cloneVerification: boolean;
  /** Speech recognition for transcriptions (docs/transcription.md). */
  readonly recognition: {
    readonly provider: 'local' | 'openai';
    /** OpenAI-compatible `POST /v1/audio/transcriptions` server; null = off. */
    readonly openai: { readonly url: string; readonly apiKey: string | null; readonly model: string } | null;
  };
  /** How recordings get mouth shapes per sound (docs/engine.md, "Articulation from any recording"). */
  readonly articulation: {
    /** auto: voice activity, transcript alignment or recognition; acoustic: loudness and vowel colour only. */
    readonly mode: 'auto' | 'acoustic';
    /** Recognize the words of recordings that come without a transcript. */
    readonly recognize: boolean;
    /**
     * The learned audio-to-viseme model (the shipped models/articulation-v1.onnx, or the downloaded
     * `cherry-visemes.onnx`), or null: it shapes the stretches no trusted phoneme covers.
     */
    readonly visemeModel: { readonly id: VisemeModelId; readonly path: string } | null;
  };
}

/** Where blobs live (docs/storage.md): the data folder, or an S3-compatible bucket. */
export type StorageConfig =
  | { readonly kind: 'local' }
  | {
      readonly kind: 's3';
      /** An S3-compatible server's URL (MinIO, R2, ...); null = AWS S3 of the region. */
      readonly endpoint: string | null;
      readonly region: string;
      readonly bucket: string;
      readonly accessKeyId: string;
      readonly secretAccessKey: string;
      readonly forcePathStyle: boolean;
    };

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  readonly databaseUrl: string | null;
  readonly publicUrl: string;
  readonly role: Role;
  readonly redisUrl: string | null;
  readonly logLevel: string;
  /** HMAC key for signed file URLs; null means "generate and keep one in the data folder". */
  readonly signingSecret: string | null;
  readonly allowPrivateUrls: boolean;
  /** Requests per minute per identity for endpoints without a tabled limit. */
  readonly rateLimitDefaultPerMinute: number;
  readonly rateLimitEnabled: boolean;
  readonly workerConcurrency: number;
  readonly bodyLimitBytes: number;
  readonly maxUploadBytes: number;
  /** The most one attempt of a remote job uploads in total (LIPSYNC_WORKER_UPLOAD_MAX_BYTES). */
  readonly workerUploadMaxBytes: number;
  /** How long after its URL expired an unregistered direct upload is kept (then swept). */
  readonly uploadSweepGraceMs: number;
  /** How long a worker's claim on a job lasts without a heartbeat. */
  readonly jobLeaseMs: number;
  /** Claims of one generation before the watchdog fails it (worker lost). */
  readonly jobMaxAttempts: number;
  /** Longest run of one job attempt (counted from the start of the run); then TIMED_OUT. */
  readonly jobTimeoutMs: number;
  /** Job kinds this process's workers serve (LIPSYNC_WORKER_KINDS); null = every registered kind. */
  readonly workerKinds: readonly string[] | null;
  /** Longest sleep of an idle worker between claims when no wake-up arrives. */
  readonly workerIdlePollMs: number;
  /** Scratch space of this process (jobs, uploads in flight, fetches): <data dir>/tmp. */
  readonly tempDir: string;
  /** Where blobs live: LIPSYNC_STORAGE and, for s3, the LIPSYNC_S3_* settings. */
  readonly storage: StorageConfig;
  readonly speech: SpeechConfig;
  readonly translation: TranslationConfig;
  /** Per-model prices file (JSON, see docs/pricing.md); null = built-in table. */
  readonly pricingFile: string | null;
  readonly fetchMaxBytes: number;
  readonly fetchTimeoutMs: number;
  /** How long webhook deliveries are retried. */
  readonly webhookRetryWindowMs: number;
  readonly webhookTimeoutMs: number;
  /** Web sessions (/api/auth/*) and the emails they send. */
  readonly sessions: SessionsConfig;
  /** JSON mapping of model ids to engines (docs/engine.md); null = built-in. */
  readonly enginesFile: string | null;
  /** Trust X-Forwarded-For (only behind a proxy that sets it); otherwise per-IP limits use the socket address. */
  readonly trustProxy: boolean;
  /** Engine of every model the engines file does not map (LIPSYNC_DEFAULT_ENGINE). */
  readonly defaultEngine: EngineName;
  /**
   * A worker loads the engine's models when it starts and keeps them loaded while idle
   * (LIPSYNC_ENGINE_WARM_UP, default on); off, the first job loads them and idle ones are let go.
   */
  readonly engineWarmUp: boolean;
  /** Time to receive a whole request, headers and body (not to answer it); then 408 and close. */
  readonly requestTimeoutMs: number;
  /** Time to receive the request headers; at most requestTimeoutMs. */
  readonly headersTimeoutMs: number;
  /** A socket with no traffic either way for this long is closed; 0 = never. */
  readonly connectionTimeoutMs: number;
  /** How long an idle keep-alive connection waits for its next request. */
  readonly keepAliveTimeoutMs: number;
  /** Unfinished batches an organization may have, per plan (LIPSYNC_BATCH_CONCURRENCY=scale=2,...). */
  readonly batchConcurrency: Readonly<Partial<Record<Plan, number>>>;
  /** Bearer token GET /metrics requires (LIPSYNC_METRICS_TOKEN); null = open (docs/operations.md). */
  readonly metricsToken: string | null;
  /**
   * A listener of its own for GET /metrics (LIPSYNC_METRICS_PORT), mainly for worker processes, which
   * have no HTTP server otherwise; null = none.
   */
  readonly metricsPort: number | null;
  /** Bind address of that listener (LIPSYNC_METRICS_HOST, default HOST). */
  readonly metricsHost: string;
  /** After SIGTERM, how long an API instance keeps serving while it reads not ready (the drain). */
  readonly shutdownDrainMs: number;
  /** Longest whole shutdown after the signal; then remaining connections are cut and the exit is 1. */
  readonly shutdownTimeoutMs: number;
}

export interface SessionsConfig {
  readonly ttlMs: number;
  readonly signUp: boolean;
  /** Origins that may send cookie-authenticated requests: the public URL's first. */
  readonly trustedOrigins: readonly string[];
  /** null: one-time codes are written to the server log instead of mailed. */
  readonly smtpUrl: string | null;
  readonly smtpFrom: string;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/** Seconds a long-poll (GET /v2/generate/:id?wait=true) may hold an idle connection: the spec's maximum. */
const LONG_POLL_MAX_SECONDS = 10;

/** "a, b or c" */
function orList(values: readonly string[]): string {
  return values.length < 2 ? values.join('') : `${values.slice(0, -1).join(', ')} or ${values.at(-1)}`;
}

/**
 * Reads variables of ENV_VARIABLES from `env`, each checked against its schema; a bad value adds a
 * problem naming the variable and gives the default. An empty value means the default.
 */
function envReader(env: Env, problems: string[]) {
  const schema = (name: EnvName) =>
    ENV_VARIABLES[name].schema as TSchema & {
      minimum?: number;
      maximum?: number;
      minLength?: number;
      protocols?: string[];
      anyOf?: { const: string }[];
    };
  const raw = (name: EnvName): string | undefined => (env[name] === '' ? undefined : env[name]);

  const int = (name: EnvName, def: number = schema(name).default as number): number => {
    const value = raw(name);
    if (value === undefined) return def;
    const { minimum: min, maximum: max } = schema(name);
    // Digits only: Number() would also take ' ' (0), '0x10' or '1e3'.
    const n = /^\s*-?\d+\s*$/.test(value) ? Number(value) : NaN;
    if (!Number.isInteger(n) || n < (min as number) || n > (max as number)) {
      problems.push(`${name}=${JSON.stringify(value)} must be an integer from ${min} to ${max}`);
      return def;
    }
    return n;
  };
  // `fallback` where the default depends on other variables (or for a switch with no entry).
  const bool = (name: EnvName, fallback?: boolean): boolean => {
    const def = fallback ?? (schema(name).default as boolean);
    const value = raw(name);
    if (value === undefined) return def;
    if (['1', 'true', 'yes', 'on'].includes(value.toLowerCase())) return true;
    if (['0', 'false', 'no', 'off'].includes(value.toLowerCase())) return false;
    problems.push(`${name}=${JSON.stringify(value)} must be a boolean (1/0, true/false)`);
    return def;
  };
  const url = (name: EnvName): string | null => {
    const value = raw(name);
    if (value === undefined) return null;
    const protocols = schema(name).protocols ?? [];
    try {
      const u = new URL(value);
      if (!protocols.includes(u.protocol)) throw new Error('protocol');
      return value;
    } catch {
      problems.push(`${name}=${JSON.stringify(value)} must be a URL with protocol ${protocols.join(' or ')}`);
      return null;
    }
  };
  /** One of the values the schema lists; `def` where the default depends on other variables. */
  const choice = <T extends string>(name: EnvName, def: string = schema(name).default as string): T => {
    const values = (schema(name).anyOf ?? []).map((s) => s.const);
    const value = raw(name) ?? def;
    if (values.includes(value)) return value as T;
    problems.push(`${name}=${JSON.stringify(value)} must be ${orList(values)}`);
    return def as T;
  };
  /** The value, else the table's default, else null. */
  const str = (name: EnvName): string | null =>
    raw(name) ?? (schema(name).default as string | undefined) ?? null;
  const list = (name: EnvName): string[] | null => {
    const value = env[name];
    if (value === undefined || value.trim() === '') return null;
    const items = value
      .split(',')
      .map((k) => k.trim())
      .filter(Boolean);
    const bad = items.filter((k) => !/^[a-z][a-z0-9_-]{0,63}$/.test(k));
    if (bad.length)
      problems.push(`${name}=${JSON.stringify(value)} must be a comma-separated list of job kinds`);
    return items;
  };
  return { env, problems, int, bool, url, choice, str, list };
}
type EnvReader = ReturnType<typeof envReader>;

/** The HTTP server's timeouts (docs/security.md), checked against each other. */
function httpTimeouts(
  { int, problems }: EnvReader,
  fetchTimeoutMs: number,
): Pick<Config, 'requestTimeoutMs' | 'headersTimeoutMs' | 'connectionTimeoutMs' | 'keepAliveTimeoutMs'> {
  const request = int('LIPSYNC_REQUEST_TIMEOUT_SECONDS');
  const headers = int('LIPSYNC_HEADERS_TIMEOUT_SECONDS');
  const connection = int('LIPSYNC_CONNECTION_TIMEOUT_SECONDS');
  const keepAlive = int('LIPSYNC_KEEP_ALIVE_TIMEOUT_SECONDS');
  if (headers > request) {
    problems.push(
      `LIPSYNC_HEADERS_TIMEOUT_SECONDS (${headers}) must not exceed LIPSYNC_REQUEST_TIMEOUT_SECONDS (${request})`,
    );
  }
  if (connection !== 0 && connection <= LONG_POLL_MAX_SECONDS) {
    problems.push(
      `LIPSYNC_CONNECTION_TIMEOUT_SECONDS must be 0 (off) or more than ${LONG_POLL_MAX_SECONDS}: a long-poll holds an idle connection that long`,
    );
  }
  if (connection !== 0 && connection * 1000 <= fetchTimeoutMs) {
    problems.push(
      `LIPSYNC_CONNECTION_TIMEOUT_SECONDS (${connection}) must be more than LIPSYNC_FETCH_TIMEOUT_SECONDS (${fetchTimeoutMs / 1000}): a generation request waits for its media URLs to download`,
    );
  }
  return {
    requestTimeoutMs: request * 1000,
    headersTimeoutMs: headers * 1000,
    connectionTimeoutMs: connection * 1000,
    keepAliveTimeoutMs: keepAlive * 1000,
  };
}

/** The drain and the hard cap of a shutdown (docs/operations.md), checked against each other. */
function shutdownTimes({ int, problems }: EnvReader): Pick<Config, 'shutdownDrainMs' | 'shutdownTimeoutMs'> {
  const drain = int('LIPSYNC_SHUTDOWN_DRAIN_SECONDS');
  const timeout = int('LIPSYNC_SHUTDOWN_TIMEOUT_SECONDS');
  if (timeout <= drain) {
    problems.push(
      `LIPSYNC_SHUTDOWN_TIMEOUT_SECONDS (${timeout}) must be more than LIPSYNC_SHUTDOWN_DRAIN_SECONDS (${drain}): in-flight requests finish after the drain`,
    );
  }
  return { shutdownDrainMs: drain * 1000, shutdownTimeoutMs: timeout * 1000 };
}

export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const problems: string[] = [];
  const read = envReader(env, problems);
  const { int, bool, url, choice, str, list } = read;

  const port = int('PORT');
  const host = str('HOST') as string;
  const dataDir = resolve(str('LIPSYNC_DATA_DIR') as string);
  const databaseUrl = url('DATABASE_URL');
  const redisUrl = url('REDIS_URL');
  const publicUrlRaw = url('LIPSYNC_PUBLIC_URL');
  const role = choice<Role>('LIPSYNC_ROLE');
  const logLevel = choice('LOG_LEVEL');
  const defaultEngine = choice<EngineName>('LIPSYNC_DEFAULT_ENGINE');
  const fetchTimeoutMs = int('LIPSYNC_FETCH_TIMEOUT_SECONDS') * 1000;

  const signingSecret = str('LIPSYNC_SIGNING_SECRET');
  const secretMin = ENV_VARIABLES.LIPSYNC_SIGNING_SECRET.schema.minLength as number;
  if (signingSecret !== null && signingSecret.length < secretMin) {
    problems.push(`LIPSYNC_SIGNING_SECRET must be at least ${secretMin} characters`);
  }

  const speech = speechConfig(read, dataDir);
  const translation = translationConfig(read);

  const config: Config = {
    port,
    host,
    dataDir,
    databaseUrl,
    publicUrl: (publicUrlRaw ?? `http://localhost:${port}`).replace(/\/+$/, ''),
    role,
    redisUrl,
    logLevel,
    signingSecret,
    allowPrivateUrls: bool('LIPSYNC_ALLOW_PRIVATE_URLS'),
    trustProxy: bool('LIPSYNC_TRUST_PROXY'),
    rateLimitDefaultPerMinute: int('LIPSYNC_RATE_LIMIT_PER_MINUTE'),
    rateLimitEnabled: bool('LIPSYNC_RATE_LIMIT_ENABLED'),
    workerConcurrency: int('LIPSYNC_WORKER_CONCURRENCY'),
    bodyLimitBytes: int('LIPSYNC_JSON_BODY_LIMIT_BYTES'),
    maxUploadBytes: int('LIPSYNC_MAX_UPLOAD_BYTES'),
    workerUploadMaxBytes: int('LIPSYNC_WORKER_UPLOAD_MAX_BYTES'),
    uploadSweepGraceMs: int('LIPSYNC_UPLOAD_SWEEP_GRACE_SECONDS') * 1000,
    jobLeaseMs: int('LIPSYNC_JOB_LEASE_SECONDS') * 1000,
    jobMaxAttempts: int('LIPSYNC_JOB_MAX_ATTEMPTS'),
    jobTimeoutMs: int('LIPSYNC_JOB_TIMEOUT_SECONDS') * 1000,
    workerKinds: list('LIPSYNC_WORKER_KINDS'),
    workerIdlePollMs: int('LIPSYNC_WORKER_IDLE_POLL_MS', databaseUrl ? 5000 : 1000),
    tempDir: join(dataDir, 'tmp'),
    storage: storageConfig(read),
    speech,
    translation,
    pricingFile: resolvedPath(str('LIPSYNC_PRICING_FILE')),
    fetchMaxBytes: int('LIPSYNC_FETCH_MAX_BYTES'),
    fetchTimeoutMs,
    webhookRetryWindowMs: int('LIPSYNC_WEBHOOK_RETRY_HOURS') * 3600 * 1000,
    enginesFile: resolvedPath(str('LIPSYNC_ENGINES_FILE')),
    defaultEngine,
    engineWarmUp: bool('LIPSYNC_ENGINE_WARM_UP'),
    webhookTimeoutMs: int('LIPSYNC_WEBHOOK_TIMEOUT_SECONDS') * 1000,
    sessions: sessionsConfig(read, (publicUrlRaw ?? `http://localhost:${port}`).replace(/\/+$/, '')),
    ...httpTimeouts(read, fetchTimeoutMs),
    batchConcurrency: planNumbers(read, 'LIPSYNC_BATCH_CONCURRENCY'),
    metricsToken: str('LIPSYNC_METRICS_TOKEN'),
    metricsPort: str('LIPSYNC_METRICS_PORT') === null ? null : int('LIPSYNC_METRICS_PORT'),
    metricsHost: str('LIPSYNC_METRICS_HOST') ?? host,
    ...shutdownTimes(read),
    ...overrides,
  };

  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}

/** `plan=n,plan=n` (e.g. `scale=2,enterprise=5`): a number per plan; plans not named keep the default. */
function planNumbers({ env, problems }: EnvReader, name: EnvName): Partial<Record<Plan, number>> {
  const raw = env[name];
  const out: Partial<Record<Plan, number>> = {};
  if (raw === undefined || raw.trim() === '') return out;
  for (const part of raw.split(',')) {
    const [plan, n] = part.split('=').map((x) => x.trim());
    const v = Number(n);
    if (!plan || !isPlan(plan) || !/^\d{1,6}$/.test(n ?? '') || !Number.isInteger(v)) {
      problems.push(
        `${name}=${JSON.stringify(raw)} must be a comma-separated list of plan=number (plans: ${PLANS.join(', ')})`,
      );
      return {};
    }
    out[plan] = v;
  }
  return out;
}

/**
 * LIPSYNC_STORAGE=local (default) or s3. The LIPSYNC_S3_* variables are read only for s3; there the
 * bucket and both keys are required. No problem message ever repeats a key's value.
 */
function storageConfig({ env, problems, url, bool, choice, str }: EnvReader): StorageConfig {
  const kind = choice<StorageConfig['kind']>('LIPSYNC_STORAGE');
  if (kind === 'local') return { kind };
  const required = (name: EnvName): string => {
    const v = env[name];
    if (v === undefined || v === '') problems.push(`${name} is required with LIPSYNC_STORAGE=s3`);
    return v ?? '';
  };
  const endpoint = url('LIPSYNC_S3_ENDPOINT');
  const region = str('LIPSYNC_S3_REGION') as string;
  // AWS regions, R2's "auto", MinIO's custom names: letters, digits and '-'.
  if (!/^[A-Za-z0-9-]{1,64}$/.test(region)) {
    problems.push(`LIPSYNC_S3_REGION=${JSON.stringify(region)} must be a region name such as us-east-1`);
  }
  const bucket = required('LIPSYNC_S3_BUCKET');
  // S3 bucket names (legacy ones included): letters, digits, '.', '_' and '-'; nothing that would
  // change a URL's path or host.
  if (bucket !== '' && !/^[A-Za-z0-9][A-Za-z0-9._-]{2,254}$/.test(bucket)) {
    problems.push(`LIPSYNC_S3_BUCKET=${JSON.stringify(bucket)} is not a bucket name`);
  }
  return {
    kind,
    endpoint: endpoint?.replace(/\/+$/, '') ?? null,
    region,
    bucket,
    accessKeyId: required('LIPSYNC_S3_ACCESS_KEY_ID'),
    secretAccessKey: required('LIPSYNC_S3_SECRET_ACCESS_KEY'),
    forcePathStyle: bool('LIPSYNC_S3_FORCE_PATH_STYLE'),
  };
}

function speechConfig(read: EnvReader, dataDir: string): SpeechConfig {
  const { problems, url, int, bool, choice, str } = read;
  const openaiUrl = url('LIPSYNC_OPENAI_TTS_URL');
  const elevenUrl = url('LIPSYNC_ELEVENLABS_URL');
  const elevenKey = str('LIPSYNC_ELEVENLABS_API_KEY');
  const voices = str('LIPSYNC_OPENAI_TTS_VOICES');
  const elevenlabsOn = bool('LIPSYNC_ELEVENLABS_ENABLED', elevenUrl !== null || elevenKey !== null);
  const defaultProvider = choice<SpeechConfig['defaultProvider']>('LIPSYNC_TTS_DEFAULT_PROVIDER');
  const openai = openaiUrl
    ? {
        url: openaiUrl.replace(/\/+$/, ''),
        apiKey: str('LIPSYNC_OPENAI_TTS_API_KEY'),
        model: str('LIPSYNC_OPENAI_TTS_MODEL') as string,
        voices: voices
          ? voices
              .split(',')
              .map((v) => v.trim())
              .filter(Boolean)
          : null,
      }
    : null;
  const elevenlabs = elevenlabsOn
    ? {
        url: (elevenUrl ?? 'https://api.elevenlabs.io').replace(/\/+$/, ''),
        apiKey: elevenKey,
        modelId: str('LIPSYNC_ELEVENLABS_MODEL') as string,
      }
    : null;
  if (defaultProvider === 'openai' && !openai)
    problems.push('LIPSYNC_TTS_DEFAULT_PROVIDER=openai needs LIPSYNC_OPENAI_TTS_URL');
  if (defaultProvider === 'elevenlabs' && !elevenlabs)
    problems.push('LIPSYNC_TTS_DEFAULT_PROVIDER=elevenlabs needs LIPSYNC_ELEVENLABS_API_KEY or _URL');
  const recognition = recognitionConfig(read);
  return {
    defaultProvider,
    synthesisTimeoutMs: int('LIPSYNC_TTS_TIMEOUT_SECONDS') * 1000,
    processes: {
      size: int('LIPSYNC_SPEECH_PROCESSES', defaultSpeechProcesses()),
      maxQueue: int('LIPSYNC_SPEECH_QUEUE'),
      maxWaitMs: int('LIPSYNC_SPEECH_QUEUE_WAIT_SECONDS') * 1000,
    },
    openai,
    elevenlabs,
    cloneVerification: bool('LIPSYNC_VOICE_CLONE_VERIFICATION'),
    recognition,
    articulation: articulationConfig(read, dataDir, recognition.provider),
  };
}

function translationConfig({ url, int, str }: EnvReader): TranslationConfig {
  const openaiUrl = url('LIPSYNC_OPENAI_TRANSLATION_URL');
  const deeplKey = str('LIPSYNC_DEEPL_API_KEY');
  return {
    timeoutMs: int('LIPSYNC_TRANSLATION_TIMEOUT_SECONDS') * 1000,
    openai: openaiUrl
      ? {
          url: openaiUrl.replace(/\/+$/, ''),
          apiKey: str('LIPSYNC_OPENAI_TRANSLATION_API_KEY'),
          model: str('LIPSYNC_OPENAI_TRANSLATION_MODEL') as string,
        }
      : null,
    deepl: deeplKey ? { apiKey: deeplKey, url: url('LIPSYNC_DEEPL_URL')?.replace(/\/+$/, '') ?? null } : null,
  };
}

/** The SMTP URL holds a password: no problem message repeats it. */
function sessionsConfig({ env, problems, int, bool, str }: EnvReader, publicUrl: string): SessionsConfig {
  let smtpUrl: string | null = null;
  const smtpRaw = env.LIPSYNC_SMTP_URL;
  if (smtpRaw !== undefined && smtpRaw !== '') {
    let ok = false;
    try {
      const u = new URL(smtpRaw);
      ok = (u.protocol === 'smtp:' || u.protocol === 'smtps:') && u.hostname !== '';
    } catch {
      ok = false;
    }
    if (ok) smtpUrl = smtpRaw;
    else problems.push('LIPSYNC_SMTP_URL must be a URL such as smtps://user:password@mail.example.com:465');
  }
  const origins = [new URL(publicUrl).origin];
  for (const item of (str('LIPSYNC_TRUSTED_ORIGINS') ?? '').split(',').map((o) => o.trim())) {
    if (item === '') continue;
    let origin: string | null = null;
    try {
      const u = new URL(item);
      if ((u.protocol === 'http:' || u.protocol === 'https:') && u.origin === item.replace(/\/+$/, ''))
        origin = u.origin;
    } catch {
      origin = null;
    }
    if (origin) origins.push(origin);
    else
      problems.push(
        `LIPSYNC_TRUSTED_ORIGINS item ${JSON.stringify(item)} must be an origin such as https://studio.example.com`,
      );
  }
  const from = str('LIPSYNC_SMTP_FROM') ?? `lipsync@${new URL(publicUrl).hostname}`;
  if (!/^[^\s@<>]+@[^\s@<>]+$/.test(from) && !/^[^<>]*<[^\s@<>]+@[^\s@<>]+>$/.test(from))
    problems.push(`LIPSYNC_SMTP_FROM=${JSON.stringify(from)} must be an email address`);
  return {
    ttlMs: int('LIPSYNC_SESSION_TTL_HOURS') * 3600 * 1000,
    signUp: bool('LIPSYNC_SIGN_UP'),
    trustedOrigins: [...new Set(origins)],
    smtpUrl,
    smtpFrom: from,
  };
}

function resolvedPath(path: string | null): string | null {
  return path === null ? null : resolve(path);
}

/** The downloadable viseme model's file name inside the models folder. */
export const VISEME_MODEL_FILE = 'cherry-visemes.onnx';

/**
 * The project's own viseme model, shipped in the package (`models/` beside `src/` and `dist/`, so a
 * clone, a build and an installed package all find it from this file).
 */
export const SHIPPED_VISEME_MODEL = join(
  dirname(fileURLToPath(import.meta.url)),
  '..',
  'models',
  'articulation-v1.onnx',
);

/** Where model files live: LIPSYNC_MODELS_DIR, else `models` in the data folder. */
export function modelsDir(env: Env, dataDir: string): string {
  return env.LIPSYNC_MODELS_DIR ? resolve(env.LIPSYNC_MODELS_DIR) : join(dataDir, 'models');
}

function articulationConfig(
  { env, problems, bool, choice }: EnvReader,
  dataDir: string,
  recognizer: SpeechConfig['recognition']['provider'],
): SpeechConfig['articulation'] {
  const mode = choice<SpeechConfig['articulation']['mode']>('LIPSYNC_ARTICULATION');
  // Off by default with the local recognizer: on a recording without a transcript, pocketsphinx took
  // 2.4-2.6 s of a 4 s 720p generation (1.3 s without) and barely moved the lips (ADR 8, amended). An
  // OpenAI-compatible server the operator configured is theirs to judge: on by default.
  const recognize = bool('LIPSYNC_ARTICULATION_RECOGNIZE', recognizer === 'openai');
  // The shipped model by default: on the face fixtures it shuts p, b, m without lowering the sync
  // outside lip sounds, which cherry's model does (docs/engine.md). Cherry's is the operator's choice.
  const id = choice<VisemeModelId | 'none'>('LIPSYNC_VISEME_MODEL');
  if (id === 'none') return { mode, recognize, visemeModel: null };
  const path = id === 'cherry' ? join(modelsDir(env, dataDir), VISEME_MODEL_FILE) : SHIPPED_VISEME_MODEL;
  let visemeModel: SpeechConfig['articulation']['visemeModel'] = { id, path };
  if (!existsSync(path)) {
    problems.push(
      id === 'cherry'
        ? `LIPSYNC_VISEME_MODEL=cherry needs ${VISEME_MODEL_FILE} in the models folder (lipsync models download)`
        : `the shipped viseme model ${path} is missing (a broken install)`,
    );
    visemeModel = null;
  }
  return { mode, recognize, visemeModel };
}

function recognitionConfig({ problems, url, choice, str }: EnvReader): SpeechConfig['recognition'] {
  const sttUrl = url('LIPSYNC_OPENAI_STT_URL');
  const openai = sttUrl
    ? {
        url: sttUrl.replace(/\/+$/, ''),
        apiKey: str('LIPSYNC_OPENAI_STT_API_KEY'),
        model: str('LIPSYNC_OPENAI_STT_MODEL') as string,
      }
    : null;
  const provider = choice<'local' | 'openai'>('LIPSYNC_STT_PROVIDER', openai ? 'openai' : 'local');
  if (provider === 'openai' && !openai)
    problems.push('LIPSYNC_STT_PROVIDER=openai needs LIPSYNC_OPENAI_STT_URL');
  return { provider, openai };
}
