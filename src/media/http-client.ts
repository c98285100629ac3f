// The one guarded outgoing HTTP client: every request the service makes to a URL a user gave (media
// fetches, webhooks, speech providers) goes through `guardedRequest`. Per hop: the URL policy
// (http/https, no refused port), one resolution of the host, every address checked by the address
// policy, and a socket pinned to those checked addresses (its `lookup` answers only with them), so a
// DNS answer that changes between the check and the connect cannot reach a private address.
// Redirects, when the caller follows them, are new hops checked the same way. One deadline covers
// resolution, connection, redirects and the whole body; the body is cut at maxResponseBytes.
import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { Transform, type Readable } from 'node:stream';
import { rootCertificates } from 'node:tls';
import { networkError, OutgoingRequestError } from './outgoing-error.js';
import {
  parseOutgoingUrl,
  pinnedLookup,
  redactUrl,
  vetHost,
  type OutgoingTarget,
  type ResolvedAddress,
  type UrlPolicyOptions,
} from './url-policy.js';

export { OutgoingRequestError, type OutgoingFailure } from './outgoing-error.js';
export {
  assertPublicUrl,
  redactUrl,
  systemResolver,
  type AssertPublicUrlOptions,
  type HostResolver,
  type ResolvedAddress,
  type UrlPolicyOptions,
} from './url-policy.js';

export interface GuardedRequestOptions extends UrlPolicyOptions {
  method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  url: string;
  headers?: Record<string, string>;
  body?: string | Uint8Array;
  /** One deadline for everything: resolution, connection, redirects, and reading the body. */
  timeoutMs: number;
  /** A declared Content-Length above this is refused before reading; a longer body is cut off. */
  maxResponseBytes: number;
  /**
   * Redirects to follow (default 0: a 3xx is returned as the answer). Each is a new checked hop;
   * 301/302/303 turn a non-GET request into a GET without body; authorization and cookie headers
   * are dropped when the origin changes.
   */
  maxRedirects?: number;
  signal?: AbortSignal;
  /** Extra trusted CA certificates (PEM), added to the default ones (private PKI, tests). */
  extraCa?: string[];
}

export interface GuardedResponse {
  status: number;
  headers: IncomingHttpHeaders;
  /** The URL that answered (after redirects), without user name and password. */
  url: string;
  redirects: number;
  /**
   * The body, under the byte limit and the deadline: it fails with OutgoingRequestError ('too_large',
   * 'timeout', 'aborted', 'network'). Read it to the end or call close().
   */
  body: Readable;
  /** Reads the whole body (within maxResponseBytes). */
  buffer(): Promise<Buffer>;
  /** Drops the body and the connection. */
  close(): void;
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const CREDENTIAL_HEADERS = ['authorization', 'cookie', 'proxy-authorization'];
const USER_AGENT = 'lipsync-service/1';

interface Hop {
  target: OutgoingTarget;
  method: GuardedRequestOptions['method'];
  headers: Record<string, string>;
  body?: string | Uint8Array;
}

function send(hop: Hop, vetted: ResolvedAddress[], extraCa: string[] | undefined, signal: AbortSignal) {
  const { url, host, port, secure } = hop.target;
  const headers: Record<string, string> = { ...hop.headers, host: url.host };
  if ((url.username || url.password) && headers.authorization === undefined) {
    const creds = `${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`;
    headers.authorization = `Basic ${Buffer.from(creds).toString('base64')}`;
  }
  if (hop.body !== undefined) headers['content-length'] = String(Buffer.byteLength(hop.body));
  const options: https.RequestOptions = {
    host,
    port,
    path: `${url.pathname}${url.search}`,
    method: hop.method,
    headers,
    // No pooled sockets: every connection is opened by this request, through the pinned lookup.
    agent: false,
    lookup: pinnedLookup(vetted),
  };
  if (secure) {
    if (isIP(host) === 0) options.servername = host;
    if (extraCa && extraCa.length > 0) options.ca = [...rootCertificates, ...extraCa];
  }
  return new Promise<IncomingMessage>((resolve, reject) => {
    // Until the answer's head arrives, the deadline or the caller's abort destroys the request with
    // the typed reason; after that the body owns the connection (see answer()).
    const onAbort = (): void => {
      req.destroy(signal.reason as Error);
    };
    const req = (secure ? https : http).request(options, (res) => {
      signal.removeEventListener('abort', onAbort);
      resolve(res);
    });
    req.on('error', (err) => {
      signal.removeEventListener('abort', onAbort);
      reject(err);
    });
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
    req.end(hop.body);
  });
}

function nextHop(hop: Hop, status: number, location: string): Hop {
  let target: OutgoingTarget;
  try {
    target = parseOutgoingUrl(new URL(location, hop.target.url));
  } catch (err) {
    if (err instanceof OutgoingRequestError) throw err;
    throw new OutgoingRequestError('invalid_url', 'the server redirected to an invalid URL');
  }
  const headers = { ...hop.headers };
  if (target.url.origin !== hop.target.url.origin) for (const h of CREDENTIAL_HEADERS) delete headers[h];
  if (
    status === 303 ||
    ((status === 301 || status === 302) && hop.method !== 'GET' && hop.method !== 'HEAD')
  ) {
    delete headers['content-type'];
    delete headers['content-length'];
    return { target, method: hop.method === 'HEAD' ? 'HEAD' : 'GET', headers };
  }
  return { ...hop, target, headers };
}

function asOutgoing(err: unknown, signal: AbortSignal): OutgoingRequestError {
  if (signal.aborted && signal.reason instanceof OutgoingRequestError) return signal.reason;
  return err instanceof OutgoingRequestError ? err : networkError(err);
}

function tooLarge(maxBytes: number): OutgoingRequestError {
  return new OutgoingRequestError('too_large', `the answer is larger than the limit of ${maxBytes} bytes`);
}

/** Wraps the answer's body: byte limit, typed errors, deadline; `done` runs once when it closes. */
function answer(res: IncomingMessage, maxBytes: number, signal: AbortSignal, done: () => void): Readable {
  let bytes = 0;
  const body = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      bytes += chunk.length;
      if (bytes > maxBytes) cb(tooLarge(maxBytes));
      else cb(null, chunk);
    },
  });
  const onAbort = (): void => {
    body.destroy(signal.reason as Error);
  };
  if (signal.aborted) queueMicrotask(onAbort);
  else signal.addEventListener('abort', onAbort, { once: true });
  res.on('error', (err) => body.destroy(asOutgoing(err, signal)));
  // A consumer that holds the answer without reading must not crash the process when the deadline
  // fails the body; readers (pipeline, for await, buffer()) still see the error.
  body.on('error', () => undefined);
  body.once('close', () => {
    signal.removeEventListener('abort', onAbort);
    res.destroy();
    done();
  });
  res.pipe(body);
  return body;
}

async function readAll(body: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/**
 * One request under the outgoing policy. Rejects with OutgoingRequestError; any HTTP status is an
 * answer (callers decide what a 4xx or 5xx means). The caller must read the body or close() it.
 */
export async function guardedRequest(opts: GuardedRequestOptions): Promise<GuardedResponse> {
  const maxRedirects = opts.maxRedirects ?? 0;
  const ctl = new AbortController();
  const timer = setTimeout(
    () =>
      ctl.abort(
        new OutgoingRequestError('timeout', `no complete answer within ${Math.round(opts.timeoutMs)} ms`),
      ),
    opts.timeoutMs,
  );
  const onCallerAbort = (): void => ctl.abort(new OutgoingRequestError('aborted', 'the request was aborted'));
  if (opts.signal?.aborted) onCallerAbort();
  else opts.signal?.addEventListener('abort', onCallerAbort, { once: true });
  const finish = (): void => {
    clearTimeout(timer);
    opts.signal?.removeEventListener('abort', onCallerAbort);
  };
  try {
    const headers: Record<string, string> = { 'user-agent': USER_AGENT, 'accept-encoding': 'identity' };
    for (const [k, v] of Object.entries(opts.headers ?? {})) headers[k.toLowerCase()] = v;
    let hop: Hop = { target: parseOutgoingUrl(opts.url), method: opts.method, headers, body: opts.body };
    for (let redirects = 0; ; redirects++) {
      const vetted = await vetHost(hop.target, opts, ctl.signal);
      const res = await send(hop, vetted, opts.extraCa, ctl.signal);
      const status = res.statusCode ?? 0;
      const location = res.headers.location;
      if (maxRedirects > 0 && REDIRECTS.has(status) && location) {
        res.destroy();
        if (redirects >= maxRedirects) {
          throw new OutgoingRequestError('too_many_redirects', `more than ${maxRedirects} redirects`, {
            status,
          });
        }
        hop = nextHop(hop, status, location);
        continue;
      }
      const declared = Number(res.headers['content-length']);
      if (Number.isFinite(declared) && declared > opts.maxResponseBytes) {
        res.destroy();
        throw tooLarge(opts.maxResponseBytes);
      }
      const body = answer(res, opts.maxResponseBytes, ctl.signal, finish);
      return {
        status,
        headers: res.headers,
        url: redactUrl(hop.target.url),
        redirects,
        body,
        buffer: () => readAll(body),
        close: () => body.destroy(),
      };
    }
  } catch (err) {
    finish();
    throw asOutgoing(err, ctl.signal);
  }
}
