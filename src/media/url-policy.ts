// The URL half of the outgoing policy: which URLs may be requested at all (scheme, host, port), the
// one resolution of the host name, the check of every address it gives, and the pinned `lookup` that
// makes the socket connect to exactly those checked addresses. `assertPublicUrl` runs the same checks
// without connecting, so that a URL the client would refuse can be refused when it is submitted.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP, type LookupFunction } from 'node:net';
import { classifyAddress, defaultAddressPolicy, isRefusedPort, type AddressPolicy } from './address-guard.js';
import { OutgoingRequestError } from './outgoing-error.js';

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

export type HostResolver = (hostname: string) => Promise<ResolvedAddress[]>;

export interface UrlPolicyOptions {
  /** Operator setting (LIPSYNC_ALLOW_PRIVATE_URLS): private addresses allowed (metadata never). */
  allowPrivate: boolean;
  /** Name resolution; default dns.lookup (every address, as the system resolves them). */
  resolve?: HostResolver;
  /**
   * TEST HOOK, not for production callers: exact IP addresses that count as public although the
   * policy refuses them (the tests' HTTP servers listen on 127.0.0.1). Every other address keeps its
   * real classification, so redirects and DNS answers to 127.0.0.2, 10/8 etc. are still refused.
   */
  treatAsPublic?: readonly string[];
}

/** A parsed URL the policy accepts (scheme and port); its host is not checked yet. */
export interface OutgoingTarget {
  url: URL;
  /** The host without IPv6 brackets. */
  host: string;
  port: number;
  secure: boolean;
}

export const systemResolver: HostResolver = (hostname) =>
  new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses: LookupAddress[]) => {
      if (err) reject(err);
      else resolve(addresses.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 })));
    });
  });

/** The URL as it may be shown or logged: without user name and password. */
export function redactUrl(url: URL | string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    return u.href;
  } catch {
    return '(not a URL)';
  }
}

export function parseOutgoingUrl(raw: string | URL): OutgoingTarget {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new OutgoingRequestError('invalid_url', 'the URL is not valid');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new OutgoingRequestError('scheme', 'only http and https URLs are allowed', {
      detail: `scheme ${url.protocol}`,
    });
  }
  if (url.hostname === '') throw new OutgoingRequestError('invalid_url', 'the URL has no host');
  const secure = url.protocol === 'https:';
  const port = url.port === '' ? (secure ? 443 : 80) : Number(url.port);
  if (isRefusedPort(port)) {
    throw new OutgoingRequestError('port', `port ${port} is not allowed`);
  }
  return { url, host: url.hostname.replace(/^\[(.*)\]$/, '$1'), port, secure };
}

export function addressPolicyFor(opts: UrlPolicyOptions): AddressPolicy {
  const policy = defaultAddressPolicy(opts.allowPrivate);
  const trusted = new Set((opts.treatAsPublic ?? []).map((a) => classifyAddress(a).address));
  if (trusted.size === 0) return policy;
  return (address) => {
    const v = classifyAddress(address);
    return trusted.has(v.address) ? { ...v, allowed: true, category: 'public' } : policy(address);
  };
}

function raceAbort<T>(p: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return p;
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * Resolves the host once and checks every address it gives (one refused address refuses the host).
 * Returns the addresses the connection may use. An aborted signal rejects with its reason.
 */
export async function vetHost(
  target: OutgoingTarget,
  opts: UrlPolicyOptions,
  signal?: AbortSignal,
): Promise<ResolvedAddress[]> {
  const { host } = target;
  const literal = isIP(host);
  let addresses: ResolvedAddress[];
  if (literal !== 0) {
    addresses = [{ address: host, family: literal === 6 ? 6 : 4 }];
  } else {
    try {
      addresses = await raceAbort((opts.resolve ?? systemResolver)(host), signal);
    } catch (err) {
      if (signal?.aborted) throw signal.reason;
      const code = (err as { code?: unknown })?.code;
      throw new OutgoingRequestError('unresolvable', 'the host name could not be resolved', {
        detail: `resolving ${host}: ${typeof code === 'string' ? code : String(err)}`,
      });
    }
    if (addresses.length === 0) {
      throw new OutgoingRequestError('unresolvable', 'the host name has no address', {
        detail: `resolving ${host}: no address`,
      });
    }
  }
  const policy = addressPolicyFor(opts);
  for (const a of addresses) {
    const verdict = policy(a.address);
    if (!verdict.allowed) {
      const what = verdict.category.replace(/_/g, ' ');
      throw new OutgoingRequestError(
        'blocked_address',
        `the host ${literal ? 'is' : 'resolves to'} a non-public address (${what}); ` +
          'only servers on the public internet can be reached',
        { detail: `${host} -> ${a.address} (${verdict.category})` },
      );
    }
  }
  return addresses;
}

/** A `lookup` for the socket that answers only with the vetted addresses, whatever DNS says now. */
export function pinnedLookup(vetted: readonly ResolvedAddress[]): LookupFunction {
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

export interface AssertPublicUrlOptions extends UrlPolicyOptions {
  /** Limit for the name resolution; default 5000 ms. */
  timeoutMs?: number;
}

/**
 * Throws OutgoingRequestError ('invalid_url', 'scheme', 'port', 'blocked_address', 'unresolvable')
 * for a URL that the guarded client would refuse; resolves when it would try to connect. Meant for
 * submit time (a webhookUrl, a media URL): the client checks again, on the address it connects to.
 */
export async function assertPublicUrl(url: string, opts: AssertPublicUrlOptions): Promise<void> {
  const target = parseOutgoingUrl(url);
  const limit = opts.timeoutMs ?? 5000;
  const ctl = new AbortController();
  const timer = setTimeout(() => ctl.abort(), limit);
  try {
    await vetHost(target, opts, ctl.signal);
  } catch (err) {
    if (err instanceof OutgoingRequestError) throw err;
    throw new OutgoingRequestError('unresolvable', 'the host name could not be resolved in time', {
      detail: `resolving ${target.host}: no answer within ${limit} ms`,
    });
  } finally {
    clearTimeout(timer);
  }
}
