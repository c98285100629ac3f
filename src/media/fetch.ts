// Guarded URL fetcher for user-supplied media URLs (SSRF-safe). Each hop: http/https only; the host
// name is resolved once by us, every address is checked by the address policy, and the connection is
// made to those checked addresses only (a pinned `lookup`), so a DNS answer that changes between the
// check and the connect (rebinding) cannot reach a private address. Redirects are followed by hand
// and checked the same way. The body streams to disk with a byte limit; on any failure the partial
// file is removed.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { rootCertificates } from 'node:tls';
import { AppError } from '../domain/errors.js';
import { defaultAddressPolicy, type AddressPolicy } from './address-guard.js';

export type UrlFetchFailure =
  | 'blocked_address'
  | 'too_large'
  | 'timeout'
  | 'http_status'
  | 'invalid_url'
  | 'network'
  | 'too_many_redirects'
  | 'aborted';

export class UrlFetchError extends Error {
  constructor(
    readonly reason: UrlFetchFailure,
    message: string,
    readonly status?: number,
  ) {
    super(message);
    this.name = 'UrlFetchError';
  }
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface FetchToFileOptions {
  maxBytes: number;
  /** Limit for the whole fetch: resolution, redirects and body. */
  timeoutMs: number;
  /** Operator setting (LIPSYNC_ALLOW_PRIVATE_URLS): skip the address checks. */
  allowPrivate?: boolean;
  maxRedirects?: number;
  signal?: AbortSignal;
  /** Name resolution; default dns.lookup (all addresses, as the system resolves them). */
  resolve?: HostResolver;
  /** Which resolved addresses may be connected to; default from allowPrivate. */
  addressPolicy?: AddressPolicy;
  /** Extra trusted CA certificates (PEM), added to the default ones (private PKI, tests). */
  extraCa?: string[];
}

export interface FetchResult {
  bytes: number;
  /** The URL that answered (after redirects). */
  finalUrl: string;
  contentType: string | null;
  redirects: number;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const USER_AGENT = 'lipsync-service-media-fetcher/1.0';

export const systemResolver: HostResolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses: LookupAddress[]) => {
      if (err) reject(err);
      else resolve(addresses.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 })));
    });
  });

function parseTarget(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new UrlFetchError('invalid_url', 'the URL is not valid');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UrlFetchError('invalid_url', `only http and https URLs can be fetched, not ${url.protocol}`);
  }
  if (url.hostname === '') throw new UrlFetchError('invalid_url', 'the URL has no host');
  return url;
}

function bareHost(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

function raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/** Resolves the host once and checks every address; returns the addresses that may be used. */
async function vetHost(url: URL, opts: FetchToFileOptions, signal: AbortSignal): Promise<ResolvedAddress[]> {
  const host = bareHost(url);
  const policy = opts.addressPolicy ?? defaultAddressPolicy(opts.allowPrivate ?? false);
  const literal = isIP(host);
  let addresses: ResolvedAddress[];
  if (literal !== 0) {
    addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await raceAbort((opts.resolve ?? systemResolver)(host), signal);
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      throw new UrlFetchError('network', `the host name could not be resolved (${errorCode(err)})`);
    }
    if (addresses.length === 0) throw new UrlFetchError('network', 'the host name has no address');
  }
  for (const a of addresses) {
    const verdict = policy(a.address);
    if (!verdict.allowed) {
      throw new UrlFetchError(
        'blocked_address',
        `the host ${literal ? 'is' : 'resolves to'} a non-public address (${verdict.category.replace(/_/g, ' ')}); ` +
          'only media on the public internet can be fetched',
      );
    }
  }
  return addresses;
}

/** A lookup that answers only with the vetted addresses, whatever DNS says now. */
function pinnedLookup(vetted: readonly ResolvedAddress[]): LookupFunction {
  return ((_hostname: string, options: unknown, callback: (...args: unknown[]) => void) => {
    const o = (typeof options === 'object' && options !== null ? options : {}) as {
      family?: number;
      all?: boolean;
    };
    const family = typeof options === 'number' ? options : o.family;
    const list = family === 4 || family === 6 ? vetted.filter((a) => a.family === family) : [...vetted];
    if (list.length === 0) {
      callback(Object.assign(new Error('no checked address of this family'), { code: 'ENOTFOUND' }));
    } else if (o.all) {
      callback(null, list);
    } else {
      callback(null, list[0].address, list[0].family);
    }
  }) as LookupFunction;
}

function get(url: URL, vetted: ResolvedAddress[], opts: FetchToFileOptions, signal: AbortSignal) {
  const host = bareHost(url);
  const secure = url.protocol === 'https:';
  const headers: Record<string, string> = {
    host: url.host,
    'user-agent': USER_AGENT,
    accept: '*/*',
    'accept-encoding': 'identity',
  };
  if (url.username || url.password) {
    const user = decodeURIComponent(url.username);
    const creds = `${user}:${decodeURIComponent(url.password)}`;
    headers.authorization = `Basic ${Buffer.from(creds).toString('base64')}`;
  }
  const options: https.RequestOptions = {
    host,
    port: url.port === '' ? (secure ? 443 : 80) : Number(url.port),
    path: `${url.pathname}${url.search}`,
    method: 'GET',
    headers,
    agent: false,
    lookup: pinnedLookup(vetted),
    signal,
  };
  if (secure) {
    if (isIP(host) === 0) options.servername = host;
    if (opts.extraCa && opts.extraCa.length > 0) options.ca = [...rootCertificates, ...opts.extraCa];
  }
  return new Promise<IncomingMessage>((resolve, reject) => {
    const req = (secure ? https : http).request(options, resolve);
    req.on('error', reject);
    req.end();
  });
}

function errorCode(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown };
  return typeof e?.code === 'string' ? e.code : String(e?.message ?? err);
}

function limitBytes(maxBytes: number, counter: { bytes: number }): Transform {
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      counter.bytes += chunk.length;
      if (counter.bytes > maxBytes) cb(tooLarge(maxBytes));
      else cb(null, chunk);
    },
  });
}

function tooLarge(maxBytes: number): UrlFetchError {
  return new UrlFetchError('too_large', `the file is larger than the limit of ${maxBytes} bytes`);
}

/**
 * Downloads url to destPath under the guard. Rejects with UrlFetchError; destPath is removed on any
 * failure after it was opened.
 */
export async function fetchToFile(
  url: string,
  destPath: string,
  opts: FetchToFileOptions,
): Promise<FetchResult> {
  const maxRedirects = opts.maxRedirects ?? 5;
  const ctl = new AbortController();
  const timer = setTimeout(
    () =>
      ctl.abort(new UrlFetchError('timeout', `no complete answer within ${Math.round(opts.timeoutMs)} ms`)),
    opts.timeoutMs,
  );
  const onAbort = (): void => ctl.abort(new UrlFetchError('aborted', 'the fetch was aborted'));
  if (opts.signal?.aborted) onAbort();
  else opts.signal?.addEventListener('abort', onAbort, { once: true });
  let opened = false;
  try {
    let current = parseTarget(url);
    for (let redirects = 0; ; redirects++) {
      const vetted = await vetHost(current, opts, ctl.signal);
      const res = await get(current, vetted, opts, ctl.signal);
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (REDIRECTS.has(status) && location) {
        res.destroy();
        if (redirects >= maxRedirects) {
          throw new UrlFetchError('too_many_redirects', `more than ${maxRedirects} redirects`, status);
        }
        current = parseTarget(new URL(location, current).href);
        continue;
      }
      if (status < 200 || status > 299) {
        res.destroy();
        throw new UrlFetchError('http_status', `the server answered HTTP ${status}`, status);
      }
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > opts.maxBytes) {
        res.destroy();
        throw tooLarge(opts.maxBytes);
      }
      opened = true;
      const counter = { bytes: 0 };
      await pipeline(res, limitBytes(opts.maxBytes, counter), createWriteStream(destPath, { mode: 0o600 }), {
        signal: ctl.signal,
      });
      const contentType = res.headers['content-type'] ?? null;
      return { bytes: counter.bytes, finalUrl: current.href, contentType, redirects };
    }
  } catch (err) {
    if (opened) await rm(destPath, { force: true });
    if (ctl.signal.aborted && ctl.signal.reason instanceof UrlFetchError) throw ctl.signal.reason;
    if (err instanceof UrlFetchError) throw err;
    throw new UrlFetchError('network', `the download failed (${errorCode(err)})`);
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onAbort);
  }
}

/** The client-visible error for a failed input fetch (catalogue: generation_input_video_inaccessible). */
export function urlFetchAppError(err: UrlFetchError, field: string): AppError {
  return new AppError('generation_input_video_inaccessible', {
    field,
    message: `${field} could not be fetched: ${err.message}.`,
  });
}
