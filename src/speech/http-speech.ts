// What the HTTP synthesis providers (openai-provider.ts, elevenlabs-provider.ts) share: one guarded
// request that turns every transport and HTTP outcome into a SpeechProviderError, the conversion of
// whatever audio a server answers with into the mono 16-bit WAV the rest of the pipeline expects, and
// a multipart encoder for uploads.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runFfmpeg } from '../media/ffmpeg.js';
import { guardedRequest, OutgoingRequestError, type GuardedRequestOptions } from '../media/http-client.js';
import { probeMedia } from '../media/probe.js';
import { SpeechProviderError, type ProviderName, type SpeechFailure } from './types.js';

export interface SpeechHttpOptions {
  provider: ProviderName;
  method: GuardedRequestOptions['method'];
  url: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  timeoutMs: number;
  maxResponseBytes: number;
  allowPrivate: boolean;
  /** The key sent with the request: scrubbed from every error detail. */
  secret?: string | null;
  /** The request names a voice, so a 404 means that voice is unknown (not a missing endpoint). */
  voiceRequest?: boolean;
  /** Non-2xx statuses answered instead of thrown (e.g. 404 for an optional endpoint). */
  passStatuses?: readonly number[];
  signal?: AbortSignal;
}

export interface SpeechHttpAnswer {
  status: number;
  body: Buffer;
  contentType: string;
}

/** Removes the key from text meant for logs, and bounds its length. */
export function scrub(text: string, secret?: string | null): string {
  let out = text;
  if (secret) out = out.split(secret).join('[key]');
  return out.length > 300 ? `${out.slice(0, 300)}...` : out;
}

/** The provider's own short reason from a JSON error body (ElevenLabs `detail`, OpenAI `error`). */
function errorFields(body: Buffer): { code: string; message: string } {
  try {
    const json = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
    const d = (json.detail ?? json.error ?? json) as unknown;
    if (typeof d === 'string') return { code: '', message: d };
    if (d && typeof d === 'object') {
      const o = d as Record<string, unknown>;
      const code = [o.status, o.code, o.type].find((v) => typeof v === 'string') as string | undefined;
      const message = typeof o.message === 'string' ? o.message : '';
      return { code: code ?? '', message };
    }
  } catch {
    // Not JSON: the status alone decides.
  }
  return { code: '', message: '' };
}

const QUOTA_CODES = new Set(['quota_exceeded', 'insufficient_quota', 'payment_required']);

/** The reason a non-2xx answer stands for (see docs/speech.md, "HTTP providers"). */
export function failureForStatus(status: number, body: Buffer, voiceRequest: boolean): SpeechFailure {
  const { code } = errorFields(body);
  if (status === 402 || QUOTA_CODES.has(code)) return 'quota';
  if (code === 'voice_not_found' || (status === 404 && voiceRequest)) return 'voice_not_found';
  if (status === 401 || status === 403) return 'key_invalid';
  // Rate and concurrency limits pass: the call may succeed later, like an overloaded server.
  if (status === 429) return 'unavailable';
  if (status === 400 || status === 422) return 'rejected';
  return 'unavailable';
}

function transportFailure(err: OutgoingRequestError): SpeechFailure {
  return err.reason === 'timeout' ? 'timeout' : 'unavailable';
}

/**
 * One request through the guarded client. Resolves with a 2xx (or passStatuses) answer read to the
 * end; rejects with SpeechProviderError for everything else (the key never appears in its detail).
 */
export async function speechRequest(opts: SpeechHttpOptions): Promise<SpeechHttpAnswer> {
  let status: number;
  let body: Buffer;
  let contentType: string;
  try {
    const res = await guardedRequest({
      method: opts.method,
      url: opts.url,
      headers: opts.headers,
      body: opts.body,
      timeoutMs: opts.timeoutMs,
      maxResponseBytes: opts.maxResponseBytes,
      allowPrivate: opts.allowPrivate,
      signal: opts.signal,
    });
    status = res.status;
    contentType = String(res.headers['content-type'] ?? '');
    body = await res.buffer();
  } catch (err) {
    if (err instanceof OutgoingRequestError) {
      const detail = scrub(`${err.reason}: ${err.detail}`, opts.secret);
      throw new SpeechProviderError(transportFailure(err), opts.provider, detail);
    }
    throw err;
  }
  if ((status >= 200 && status < 300) || opts.passStatuses?.includes(status)) {
    return { status, body, contentType };
  }
  const { code, message } = errorFields(body);
  const detail = scrub(
    `HTTP ${status}${code ? ` ${code}` : ''}${message ? `: ${message}` : ''}`,
    opts.secret,
  );
  throw new SpeechProviderError(
    failureForStatus(status, body, opts.voiceRequest ?? false),
    opts.provider,
    detail,
  );
}

/** Parses a JSON answer; a body that is not JSON means the server is not what we expect. */
export function parseJson(answer: SpeechHttpAnswer, provider: ProviderName): unknown {
  try {
    return JSON.parse(answer.body.toString('utf8'));
  } catch {
    throw new SpeechProviderError('unavailable', provider, `the answer is not JSON (${answer.contentType})`);
  }
}

export interface ConvertedAudio {
  audioPath: string;
  durationMs: number;
  sampleRate: number;
}

/**
 * Writes the provider's audio into workDir and converts it to a mono 16-bit PCM WAV at its own
 * sample rate. `rawPcmRate` reads the input as headerless s16le mono at that rate. Audio ffmpeg cannot
 * decode, or that holds no sound, is the provider's failure ('unavailable').
 */
export async function toMonoWav(
  audio: Buffer,
  opts: { provider: ProviderName; workDir: string; name: string; rawPcmRate?: number; signal?: AbortSignal },
): Promise<ConvertedAudio> {
  const input = join(opts.workDir, `${opts.name}.answer`);
  const audioPath = join(opts.workDir, `${opts.name}.wav`);
  await writeFile(input, audio);
  const inputArgs = opts.rawPcmRate ? ['-f', 's16le', '-ar', String(opts.rawPcmRate), '-ac', '1'] : [];
  try {
    await runFfmpeg([...inputArgs, '-i', input, '-vn', '-ac', '1', '-c:a', 'pcm_s16le', audioPath], {
      signal: opts.signal,
      timeoutMs: 120_000,
    });
    const probe = await probeMedia(audioPath);
    const seconds = probe.durationSeconds ?? 0;
    if (!probe.audio || seconds <= 0) throw new Error('no audio in the answer');
    return { audioPath, durationMs: Math.round(seconds * 1000), sampleRate: probe.audio.sampleRate };
  } catch (err) {
    if (opts.signal?.aborted) throw err;
    const why = err instanceof Error ? err.message : String(err);
    throw new SpeechProviderError('unavailable', opts.provider, `the audio could not be decoded: ${why}`);
  }
}

export interface MultipartFile {
  name: string;
  filename: string;
  type: string;
  content: Uint8Array;
}

/** A multipart/form-data body from text fields and files (the platform's own encoder). */
export async function multipartBody(
  fields: Record<string, string>,
  files: MultipartFile[],
): Promise<{ body: Uint8Array; contentType: string }> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  for (const f of files) form.append(f.name, new Blob([f.content], { type: f.type }), f.filename);
  const req = new Request('http://multipart.invalid/', { method: 'POST', body: form });
  const body = new Uint8Array(await req.arrayBuffer());
  return { body, contentType: req.headers.get('content-type') ?? 'multipart/form-data' };
}

/** `{baseUrl}{path}` without doubled slashes (baseUrl may end with / or carry a path prefix). */
export function endpoint(baseUrl: string, path: string): string {
  return `${baseUrl.replace(/\/+$/, '')}${path}`;
}
