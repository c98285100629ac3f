// One request of the HTTP translation providers (openai.ts, deepl.ts) through the guarded client:
// every transport and HTTP outcome becomes a TranslationError, the key never appears in its detail,
// and a 429 is retried once after the server's Retry-After (at most MAX_RETRY_WAIT_MS).
import { setTimeout as sleep } from 'node:timers/promises';
import { guardedRequest, OutgoingRequestError } from '../media/http-client.js';
import { scrub } from '../speech/http-speech.js';
import { TranslationError, type TranslationFailure, type TranslationProviderName } from './types.js';

export interface TranslationHttpOptions {
  provider: TranslationProviderName;
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  allowPrivate: boolean;
  secret: string | null;
  signal?: AbortSignal;
}

const MAX_ANSWER_BYTES = 8 * 1024 * 1024;
const MAX_RETRY_WAIT_MS = 2_000;

function failureFor(status: number): TranslationFailure {
  if (status === 401 || status === 403) return 'key_invalid';
  // 456: DeepL's "quota exceeded"; 402: payment required elsewhere.
  if (status === 402 || status === 456) return 'quota';
  if (status === 429) return 'rate_limited';
  return 'unavailable';
}

/** Seconds of a Retry-After header (delta-seconds only), or null. */
function retryAfter(value: string | string[] | undefined): number | null {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined || !/^\d+$/.test(v.trim())) return null;
  return Number(v.trim());
}

async function once(
  opts: TranslationHttpOptions,
): Promise<{ status: number; body: Buffer; wait: number | null }> {
  try {
    const res = await guardedRequest({
      method: 'POST',
      url: opts.url,
      headers: opts.headers,
      body: opts.body,
      timeoutMs: opts.timeoutMs,
      maxResponseBytes: MAX_ANSWER_BYTES,
      allowPrivate: opts.allowPrivate,
      signal: opts.signal,
    });
    const body = await res.buffer();
    return { status: res.status, body, wait: retryAfter(res.headers['retry-after']) };
  } catch (err) {
    if (err instanceof OutgoingRequestError) {
      const reason: TranslationFailure =
        err.reason === 'timeout' ? 'timeout' : err.reason === 'aborted' ? 'aborted' : 'unavailable';
      throw new TranslationError(reason, opts.provider, scrub(`${err.reason}: ${err.detail}`, opts.secret), {
        cause: err,
      });
    }
    throw err;
  }
}

/** POSTs and parses a JSON answer; rejects with TranslationError. */
export async function translationRequest(opts: TranslationHttpOptions): Promise<unknown> {
  let answer = await once(opts);
  if (answer.status === 429) {
    const waitMs = Math.min((answer.wait ?? 1) * 1000, MAX_RETRY_WAIT_MS);
    await sleep(waitMs, undefined, { signal: opts.signal }).catch(() => undefined);
    if (opts.signal?.aborted) throw new TranslationError('aborted', opts.provider, 'aborted');
    answer = await once(opts);
  }
  const { status, body } = answer;
  if (status < 200 || status >= 300) {
    const text = scrub(`HTTP ${status}: ${body.toString('utf8').slice(0, 200)}`, opts.secret);
    throw new TranslationError(failureFor(status), opts.provider, text, {
      ...(status === 429 ? { retryAfterSeconds: answer.wait ?? 5 } : {}),
    });
  }
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    throw new TranslationError('malformed', opts.provider, 'the answer is not JSON');
  }
}
