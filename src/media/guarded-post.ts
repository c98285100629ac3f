// POSTs to user-given URLs (webhooks) under the same address guard as media fetches: the host is
// resolved once, every address is checked, and the connection goes to the checked address only, so
// a DNS answer that changes between check and connect cannot reach a private address. Redirects are
// not followed (a 3xx counts as a failed delivery).
import http from 'node:http';
import https from 'node:https';
import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupFunction } from 'node:net';
import { classifyAddress, defaultAddressPolicy, type AddressPolicy } from './address-guard.js';

export class GuardedRequestError extends Error {
  constructor(
    readonly reason: 'invalid_url' | 'blocked_address' | 'timeout' | 'network',
    message: string,
  ) {
    super(message);
    this.name = 'GuardedRequestError';
  }
}

export interface GuardedPostOptions {
  allowPrivate: boolean;
  timeoutMs: number;
  policy?: AddressPolicy;
  resolve?: (host: string) => Promise<{ address: string; family: number }[]>;
}

export async function guardedPost(
  url: string,
  body: string,
  headers: Record<string, string>,
  opts: GuardedPostOptions,
): Promise<number> {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new GuardedRequestError('invalid_url', 'not a valid URL');
  }
  if (u.protocol !== 'http:' && u.protocol !== 'https:')
    throw new GuardedRequestError('invalid_url', 'only http and https URLs are allowed');
  const policy = opts.policy ?? defaultAddressPolicy(opts.allowPrivate);
  const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
  const literal = classifyAddress(host).category !== 'invalid';
  const resolve = opts.resolve ?? ((h: string) => dnsLookup(h, { all: true, verbatim: true }));
  let addrs: { address: string; family: number }[];
  try {
    addrs = literal ? [{ address: host, family: host.includes(':') ? 6 : 4 }] : await resolve(host);
  } catch (e) {
    throw new GuardedRequestError('network', `could not resolve ${host}: ${(e as Error).message}`);
  }
  if (addrs.length === 0) throw new GuardedRequestError('network', `no address for ${host}`);
  for (const a of addrs) {
    const v = policy(a.address);
    if (!v.allowed)
      throw new GuardedRequestError(
        'blocked_address',
        `${host} resolves to a ${v.category} address (${a.address})`,
      );
  }
  const pinned = addrs[0];
  const pinnedLookup: LookupFunction = (_h, o, cb) => {
    if ((o as { all?: boolean }).all)
      (cb as unknown as (e: null, a: { address: string; family: number }[]) => void)(null, [pinned]);
    else cb(null, pinned.address, pinned.family);
  };
  const mod = u.protocol === 'https:' ? https : http;
  return new Promise<number>((resolveStatus, reject) => {
    const req = mod.request(
      u,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) },
        lookup: pinnedLookup,
        timeout: opts.timeoutMs,
        servername: literal ? undefined : host,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolveStatus(res.statusCode ?? 0));
        res.on('error', (e) => reject(new GuardedRequestError('network', e.message)));
      },
    );
    const timer = setTimeout(
      () => req.destroy(new GuardedRequestError('timeout', `no answer within ${opts.timeoutMs} ms`)),
      opts.timeoutMs,
    );
    req.on('close', () => clearTimeout(timer));
    req.on('timeout', () =>
      req.destroy(new GuardedRequestError('timeout', `no answer within ${opts.timeoutMs} ms`)),
    );
    req.on('error', (e) =>
      reject(e instanceof GuardedRequestError ? e : new GuardedRequestError('network', e.message)),
    );
    req.end(body);
  });
}
