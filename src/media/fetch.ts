// Media fetches on the guarded outgoing client (http-client.ts): GET with redirects followed (each hop
// checked again), the body streamed to a file under a byte limit and one deadline. On any failure the
// partial file is removed.
import { Transform } from 'node:stream';
import { AppError } from '../domain/errors.js';
import { streamToFile } from '../stream-to-file.js';
import { guardedRequest, OutgoingRequestError, type OutgoingFailure } from './http-client.js';
import type { UrlPolicyOptions } from './url-policy.js';

/** The fetch error is the client's error; the old names stay for callers. */
export { OutgoingRequestError as UrlFetchError };
export type UrlFetchFailure = OutgoingFailure;
export type { HostResolver, ResolvedAddress } from './url-policy.js';

export interface FetchToFileOptions extends Partial<UrlPolicyOptions> {
  maxBytes: number;
  /** Limit for the whole fetch: resolution, redirects and body. */
  timeoutMs: number;
  maxRedirects?: number;
  signal?: AbortSignal;
  /** Extra trusted CA certificates (PEM), added to the default ones (private PKI, tests). */
  extraCa?: string[];
}

export interface FetchResult {
  bytes: number;
  /** The URL that answered (after redirects), without user name and password. */
  finalUrl: string;
  contentType: string | null;
  redirects: number;
}

/**
 * Downloads url to destPath under the guard. Rejects with UrlFetchError (OutgoingRequestError) for
 * anything about the URL or the remote server; a local write failure is rethrown as it is. destPath
 * is removed on any failure after it was opened.
 */
export async function fetchToFile(
  url: string,
  destPath: string,
  opts: FetchToFileOptions,
): Promise<FetchResult> {
  const res = await guardedRequest({
    method: 'GET',
    url,
    headers: { accept: '*/*', 'user-agent': 'lipsync-service-media-fetcher/1.0' },
    timeoutMs: opts.timeoutMs,
    maxResponseBytes: opts.maxBytes,
    maxRedirects: opts.maxRedirects ?? 5,
    signal: opts.signal,
    allowPrivate: opts.allowPrivate ?? false,
    resolve: opts.resolve,
    treatAsPublic: opts.treatAsPublic,
    extraCa: opts.extraCa,
  });
  if (res.status < 200 || res.status > 299) {
    res.close();
    throw new OutgoingRequestError('http_status', `the server answered HTTP ${res.status}`, {
      status: res.status,
    });
  }
  let bytes = 0;
  const count = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      bytes += chunk.length;
      cb(null, chunk);
    },
  });
  try {
    await streamToFile(res.body, [count], destPath, { mode: 0o600 });
  } catch (err) {
    res.close();
    throw err;
  }
  const contentType = res.headers['content-type'] ?? null;
  return { bytes, finalUrl: res.url, contentType, redirects: res.redirects };
}

/** The client-visible error for a failed input fetch (catalogue: generation_input_video_inaccessible). */
export function urlFetchAppError(err: OutgoingRequestError, field: string): AppError {
  return new AppError('generation_input_video_inaccessible', {
    field,
    message: `${field} could not be fetched: ${err.message}.`,
  });
}
