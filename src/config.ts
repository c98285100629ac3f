// Environment -> validated, frozen Config. Read once at start; a bad value stops the start with a
// message naming every bad variable. No other module reads process.env.
import { join, resolve } from 'node:path';
import { existsSync } from 'node:fs';
import { isPlan, PLANS, type Plan } from './domain/plans.js';

export type Role = 'api' | 'worker' | 'all';

/** The built-in engines (src/engines/registry.ts). */
export const ENGINE_NAMES = ['cpu', 'passthrough'] as const;
export type EngineName = (typeof ENGINE_NAMES)[number];

/** Speech providers (docs/speech.md). */
export interface SpeechConfig {
  /** The provider a TTS request or text input uses when it names none. */
  readonly defaultProvider: 'local' | 'openai' | 'elevenlabs';
  /** Longest wait for one synthesis (any provider). */
  readonly synthesisTimeoutMs: number;
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
     * The learned audio-to-viseme model (`cherry-visemes.onnx` in LIPSYNC_MODELS_DIR), or null: it
     * shapes the stretches no trusted phoneme covers.
     */
    readonly visemeModel: string | null;
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
  readonly fixturesDir: string | null;
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
  /** Per-model prices file (JSON, see docs/pricing.md); null = built-in table. */
  readonly pricingFile: string | null;
  readonly fetchMaxBytes: number;
  readonly fetchTimeoutMs: number;
  /** How long webhook deliveries are retried. */
  readonly webhookRetryWindowMs: number;
  readonly webhookTimeoutMs: number;
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

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

/** Seconds a long-poll (GET /v2/generate/:id?wait=true) may hold an idle connection: the spec's maximum. */
const LONG_POLL_MAX_SECONDS = 10;

type IntReader = (name: string, def: number, min: number, max: number) => number;

/** The HTTP server's timeouts (docs/security.md), checked against each other. */
function httpTimeouts(
  int: IntReader,
  problems: string[],
  fetchTimeoutMs: number,
): Pick<Config, 'requestTimeoutMs' | 'headersTimeoutMs' | 'connectionTimeoutMs' | 'keepAliveTimeoutMs'> {
  const request = int('LIPSYNC_REQUEST_TIMEOUT_SECONDS', 600, 1, 24 * 3600);
  const headers = int('LIPSYNC_HEADERS_TIMEOUT_SECONDS', 30, 1, 3600);
  const connection = int('LIPSYNC_CONNECTION_TIMEOUT_SECONDS', 600, 0, 24 * 3600);
  const keepAlive = int('LIPSYNC_KEEP_ALIVE_TIMEOUT_SECONDS', 72, 1, 3600);
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
function shutdownTimes(
  int: IntReader,
  problems: string[],
): Pick<Config, 'shutdownDrainMs' | 'shutdownTimeoutMs'> {
  const drain = int('LIPSYNC_SHUTDOWN_DRAIN_SECONDS', 5, 0, 600);
  const timeout = int('LIPSYNC_SHUTDOWN_TIMEOUT_SECONDS', 25, 1, 3600);
  if (timeout <= drain) {
    problems.push(
      `LIPSYNC_SHUTDOWN_TIMEOUT_SECONDS (${timeout}) must be more than LIPSYNC_SHUTDOWN_DRAIN_SECONDS (${drain}): in-flight requests finish after the drain`,
    );
  }
  return { shutdownDrainMs: drain * 1000, shutdownTimeoutMs: timeout * 1000 };
}

export function loadConfig(env: Env = process.env, overrides: Partial<Config> = {}): Config {
  const problems: string[] = [];

  const int = (name: string, def: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return def;
    // Digits only: Number() would also take ' ' (0), '0x10' or '1e3'.
    const n = /^\s*-?\d+\s*$/.test(raw) ? Number(raw) : NaN;
    if (!Number.isInteger(n) || n < min || n > max) {
      problems.push(`${name}=${JSON.stringify(raw)} must be an integer from ${min} to ${max}`);
      return def;
    }
    return n;
  };
  const bool = (name: string, def: boolean): boolean => {
    const raw = env[name];
    if (raw === undefined || raw === '') return def;
    if (['1', 'true', 'yes', 'on'].includes(raw.toLowerCase())) return true;
    if (['0', 'false', 'no', 'off'].includes(raw.toLowerCase())) return false;
    problems.push(`${name}=${JSON.stringify(raw)} must be a boolean (1/0, true/false)`);
    return def;
  };
  const url = (name: string, protocols: string[]): string | null => {
    const raw = env[name];
    if (raw === undefined || raw === '') return null;
    try {
      const u = new URL(raw);
      if (!protocols.includes(u.protocol)) throw new Error('protocol');
      return raw;
    } catch {
      problems.push(`${name}=${JSON.stringify(raw)} must be a URL with protocol ${protocols.join(' or ')}`);
      return null;
    }
  };

  const list = (name: string): string[] | null => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') return null;
    const items = raw
      .split(',')
      .map((k) => k.trim())
      .filter(Boolean);
    const bad = items.filter((k) => !/^[a-z][a-z0-9_-]{0,63}$/.test(k));
    if (bad.length)
      problems.push(`${name}=${JSON.stringify(raw)} must be a comma-separated list of job kinds`);
    return items;
  };

  const port = int('PORT', 8080, 0, 65535);
  const host = env.HOST && env.HOST !== '' ? env.HOST : '0.0.0.0';
  const dataDir = resolve(
    env.LIPSYNC_DATA_DIR && env.LIPSYNC_DATA_DIR !== '' ? env.LIPSYNC_DATA_DIR : './data',
  );
  const databaseUrl = url('DATABASE_URL', ['postgres:', 'postgresql:']);
  const redisUrl = url('REDIS_URL', ['redis:', 'rediss:']);
  const publicUrlRaw = url('LIPSYNC_PUBLIC_URL', ['http:', 'https:']);

  const roleRaw = env.LIPSYNC_ROLE || 'all';
  let role: Role = 'all';
  if (roleRaw === 'api' || roleRaw === 'worker' || roleRaw === 'all') role = roleRaw;
  else problems.push(`LIPSYNC_ROLE=${JSON.stringify(roleRaw)} must be api, worker or all`);

  const logLevel = env.LOG_LEVEL || 'info';
  if (!['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].includes(logLevel)) {
    problems.push(
      `LOG_LEVEL=${JSON.stringify(logLevel)} must be fatal, error, warn, info, debug, trace or silent`,
    );
  }

  const engineRaw = env.LIPSYNC_DEFAULT_ENGINE || 'cpu';
  let defaultEngine: EngineName = 'cpu';
  if ((ENGINE_NAMES as readonly string[]).includes(engineRaw)) defaultEngine = engineRaw as EngineName;
  else
    problems.push(`LIPSYNC_DEFAULT_ENGINE=${JSON.stringify(engineRaw)} must be ${ENGINE_NAMES.join(' or ')}`);

  const fetchTimeoutMs = int('LIPSYNC_FETCH_TIMEOUT_SECONDS', 300, 1, 3600) * 1000;

  const signingSecret =
    env.LIPSYNC_SIGNING_SECRET && env.LIPSYNC_SIGNING_SECRET !== '' ? env.LIPSYNC_SIGNING_SECRET : null;
  if (signingSecret !== null && signingSecret.length < 32) {
    problems.push('LIPSYNC_SIGNING_SECRET must be at least 32 characters');
  }

  const speech = speechConfig(env, problems, url, int, bool, dataDir);

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
    allowPrivateUrls: bool('LIPSYNC_ALLOW_PRIVATE_URLS', false),
    trustProxy: bool('LIPSYNC_TRUST_PROXY', false),
    rateLimitDefaultPerMinute: int('LIPSYNC_RATE_LIMIT_PER_MINUTE', 600, 1, 1_000_000),
    rateLimitEnabled: bool('LIPSYNC_RATE_LIMIT_ENABLED', true),
    workerConcurrency: int('LIPSYNC_WORKER_CONCURRENCY', 1, 1, 64),
    bodyLimitBytes: int('LIPSYNC_JSON_BODY_LIMIT_BYTES', 10 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    maxUploadBytes: int('LIPSYNC_MAX_UPLOAD_BYTES', 5 * 1024 ** 3, 1, 5 * 1024 ** 3),
    // Two outputs (a generation and its watermarked copy) of the largest plan file size.
    workerUploadMaxBytes: int('LIPSYNC_WORKER_UPLOAD_MAX_BYTES', 10 * 1024 ** 3, 1024 ** 2, 1024 ** 4),
    uploadSweepGraceMs: int('LIPSYNC_UPLOAD_SWEEP_GRACE_SECONDS', 3600, 0, 7 * 24 * 3600) * 1000,
    fixturesDir: env.LIPSYNC_FIXTURES_DIR || null,
    jobLeaseMs: int('LIPSYNC_JOB_LEASE_SECONDS', 30, 2, 3600) * 1000,
    jobMaxAttempts: int('LIPSYNC_JOB_MAX_ATTEMPTS', 3, 1, 20),
    jobTimeoutMs: int('LIPSYNC_JOB_TIMEOUT_SECONDS', 3600, 10, 7 * 24 * 3600) * 1000,
    workerKinds: list('LIPSYNC_WORKER_KINDS'),
    workerIdlePollMs: int('LIPSYNC_WORKER_IDLE_POLL_MS', databaseUrl ? 5000 : 1000, 50, 60_000),
    tempDir: join(dataDir, 'tmp'),
    storage: storageConfig(env, problems, url, bool),
    speech,
    pricingFile:
      env.LIPSYNC_PRICING_FILE && env.LIPSYNC_PRICING_FILE !== '' ? resolve(env.LIPSYNC_PRICING_FILE) : null,
    fetchMaxBytes: int('LIPSYNC_FETCH_MAX_BYTES', 5 * 1024 ** 3, 1, 5 * 1024 ** 3),
    fetchTimeoutMs,
    webhookRetryWindowMs: int('LIPSYNC_WEBHOOK_RETRY_HOURS', 24, 1, 168) * 3600 * 1000,
    enginesFile:
      env.LIPSYNC_ENGINES_FILE && env.LIPSYNC_ENGINES_FILE !== '' ? resolve(env.LIPSYNC_ENGINES_FILE) : null,
    defaultEngine,
    engineWarmUp: bool('LIPSYNC_ENGINE_WARM_UP', true),
    webhookTimeoutMs: int('LIPSYNC_WEBHOOK_TIMEOUT_SECONDS', 10, 1, 120) * 1000,
    ...httpTimeouts(int, problems, fetchTimeoutMs),
    batchConcurrency: planNumbers(env, 'LIPSYNC_BATCH_CONCURRENCY', problems),
    metricsToken: env.LIPSYNC_METRICS_TOKEN || null,
    metricsPort:
      env.LIPSYNC_METRICS_PORT === undefined || env.LIPSYNC_METRICS_PORT === ''
        ? null
        : int('LIPSYNC_METRICS_PORT', 0, 1, 65535),
    metricsHost: env.LIPSYNC_METRICS_HOST || host,
    ...shutdownTimes(int, problems),
    ...overrides,
  };

  if (problems.length > 0) throw new ConfigError(problems);
  return Object.freeze(config);
}

/** `plan=n,plan=n` (e.g. `scale=2,enterprise=5`): a number per plan; plans not named keep the default. */
function planNumbers(env: Env, name: string, problems: string[]): Partial<Record<Plan, number>> {
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
function storageConfig(
  env: Env,
  problems: string[],
  url: (name: string, protocols: string[]) => string | null,
  bool: (name: string, def: boolean) => boolean,
): StorageConfig {
  const kind = env.LIPSYNC_STORAGE || 'local';
  if (kind !== 'local' && kind !== 's3') {
    problems.push(`LIPSYNC_STORAGE=${JSON.stringify(kind)} must be local or s3`);
    return { kind: 'local' };
  }
  if (kind === 'local') return { kind };
  const required = (name: string): string => {
    const v = env[name];
    if (v === undefined || v === '') problems.push(`${name} is required with LIPSYNC_STORAGE=s3`);
    return v ?? '';
  };
  const endpoint = url('LIPSYNC_S3_ENDPOINT', ['http:', 'https:']);
  const region = env.LIPSYNC_S3_REGION || 'us-east-1';
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
    forcePathStyle: bool('LIPSYNC_S3_FORCE_PATH_STYLE', false),
  };
}

const PROVIDERS = ['local', 'openai', 'elevenlabs'] as const;

function speechConfig(
  env: Env,
  problems: string[],
  url: (name: string, protocols: string[]) => string | null,
  int: (name: string, def: number, min: number, max: number) => number,
  bool: (name: string, def: boolean) => boolean,
  dataDir: string,
): SpeechConfig {
  const str = (name: string): string | null => (env[name] && env[name] !== '' ? (env[name] as string) : null);
  const openaiUrl = url('LIPSYNC_OPENAI_TTS_URL', ['http:', 'https:']);
  const elevenUrl = url('LIPSYNC_ELEVENLABS_URL', ['http:', 'https:']);
  const elevenKey = str('LIPSYNC_ELEVENLABS_API_KEY');
  const voices = str('LIPSYNC_OPENAI_TTS_VOICES');
  const elevenlabsOn = bool('LIPSYNC_ELEVENLABS_ENABLED', elevenUrl !== null || elevenKey !== null);
  const def = env.LIPSYNC_TTS_DEFAULT_PROVIDER || 'local';
  let defaultProvider: SpeechConfig['defaultProvider'] = 'local';
  if ((PROVIDERS as readonly string[]).includes(def))
    defaultProvider = def as SpeechConfig['defaultProvider'];
  else problems.push(`LIPSYNC_TTS_DEFAULT_PROVIDER=${JSON.stringify(def)} must be ${PROVIDERS.join(', ')}`);
  const openai = openaiUrl
    ? {
        url: openaiUrl.replace(/\/+$/, ''),
        apiKey: str('LIPSYNC_OPENAI_TTS_API_KEY'),
        model: str('LIPSYNC_OPENAI_TTS_MODEL') ?? 'tts-1',
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
        modelId: str('LIPSYNC_ELEVENLABS_MODEL') ?? 'eleven_multilingual_v2',
      }
    : null;
  if (defaultProvider === 'openai' && !openai)
    problems.push('LIPSYNC_TTS_DEFAULT_PROVIDER=openai needs LIPSYNC_OPENAI_TTS_URL');
  if (defaultProvider === 'elevenlabs' && !elevenlabs)
    problems.push('LIPSYNC_TTS_DEFAULT_PROVIDER=elevenlabs needs LIPSYNC_ELEVENLABS_API_KEY or _URL');
  const recognition = recognitionConfig(env, problems, url, str);
  return {
    defaultProvider,
    // A 5,000-character script took the local engines 8-16 s on a loaded 2-core machine; the margin is
    // for slower machines and remote providers under load.
    synthesisTimeoutMs: int('LIPSYNC_TTS_TIMEOUT_SECONDS', 120, 1, 600) * 1000,
    openai,
    elevenlabs,
    cloneVerification: bool('LIPSYNC_VOICE_CLONE_VERIFICATION', false),
    recognition,
    articulation: articulationConfig(env, problems, bool, dataDir, recognition.provider),
  };
}

/** The viseme model's file name inside the models folder. */
export const VISEME_MODEL_FILE = 'cherry-visemes.onnx';

/** Where model files live: LIPSYNC_MODELS_DIR, else `models` in the data folder. */
export function modelsDir(env: Env, dataDir: string): string {
  return env.LIPSYNC_MODELS_DIR ? resolve(env.LIPSYNC_MODELS_DIR) : join(dataDir, 'models');
}

function articulationConfig(
  env: Env,
  problems: string[],
  bool: (name: string, def: boolean) => boolean,
  dataDir: string,
  recognizer: SpeechConfig['recognition']['provider'],
): SpeechConfig['articulation'] {
  const mode = env.LIPSYNC_ARTICULATION || 'auto';
  if (mode !== 'auto' && mode !== 'acoustic')
    problems.push(`LIPSYNC_ARTICULATION=${JSON.stringify(mode)} must be auto or acoustic`);
  // An explicit folder must hold the model; the default folder is used once `lipsync models
  // download` has put it there.
  let visemeModel: string | null = join(modelsDir(env, dataDir), VISEME_MODEL_FILE);
  if (!existsSync(visemeModel)) {
    if (env.LIPSYNC_MODELS_DIR)
      problems.push(`LIPSYNC_MODELS_DIR has no ${VISEME_MODEL_FILE} (lipsync models download)`);
    visemeModel = null;
  }
  return {
    mode: mode === 'acoustic' ? 'acoustic' : 'auto',
    // Off by default with the local recognizer: on a recording without a transcript, pocketsphinx took
    // 2.4-2.6 s of a 4 s 720p generation (1.3 s without) and barely moved the lips (ADR 8, amended). An
    // OpenAI-compatible server the operator configured is theirs to judge: on by default.
    recognize: bool('LIPSYNC_ARTICULATION_RECOGNIZE', recognizer === 'openai'),
    visemeModel,
  };
}

function recognitionConfig(
  env: Env,
  problems: string[],
  url: (name: string, protocols: string[]) => string | null,
  str: (name: string) => string | null,
): SpeechConfig['recognition'] {
  const sttUrl = url('LIPSYNC_OPENAI_STT_URL', ['http:', 'https:']);
  const openai = sttUrl
    ? {
        url: sttUrl.replace(/\/+$/, ''),
        apiKey: str('LIPSYNC_OPENAI_STT_API_KEY'),
        model: str('LIPSYNC_OPENAI_STT_MODEL') ?? 'whisper-1',
      }
    : null;
  const raw = env.LIPSYNC_STT_PROVIDER || (openai ? 'openai' : 'local');
  if (raw !== 'local' && raw !== 'openai') {
    problems.push(`LIPSYNC_STT_PROVIDER=${JSON.stringify(raw)} must be local or openai`);
    return { provider: 'local', openai };
  }
  if (raw === 'openai' && !openai) problems.push('LIPSYNC_STT_PROVIDER=openai needs LIPSYNC_OPENAI_STT_URL');
  return { provider: raw, openai };
}
