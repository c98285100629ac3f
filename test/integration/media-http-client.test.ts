// test-database: none
// The one guarded outgoing client (guardedRequest, guardedPost, assertPublicUrl) against real local
// HTTP servers. "good" listens on 127.0.0.1 and "evil" on 127.0.0.2 at the same port. The client's
// test hook `treatAsPublic: ['127.0.0.1']` makes exactly that address count as public; 127.0.0.2,
// ::1, 0.0.0.0 and the rest keep the real policy, so a hop towards them must be refused.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  assertPublicUrl,
  guardedRequest,
  OutgoingRequestError,
  type GuardedRequestOptions,
  type ResolvedAddress,
} from '../../src/media/http-client.js';
import { fetchToFile } from '../../src/media/fetch.js';
import { guardedPost } from '../../src/media/guarded-post.js';
import { makeTempDir, removeTempDir } from '../../src/media/tempdir.js';
import { join } from 'node:path';

const PUBLIC = ['127.0.0.1'];
const failsWith = (reason: string) => (e: unknown) => {
  assert.ok(e instanceof OutgoingRequestError, String(e));
  assert.equal(e.reason, reason, `${e.reason}: ${e.message} / ${e.detail}`);
  return true;
};

interface Seen {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}
type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;

describe('guarded outgoing client', () => {
  let good: http.Server;
  let evil: http.Server;
  let p: number;
  let base: string;
  let dir: string;
  const seen: Seen[] = [];
  let evilHits = 0;
  const routes: Record<string, Handler> = {
    '/ok': (_q, r) => r.writeHead(200, { 'content-type': 'text/plain', 'x-test': 'yes' }).end('hello'),
    '/big': (_q, r) => {
      r.writeHead(200);
      for (let i = 0; i < 10; i++) r.write(Buffer.alloc(10_000, 1));
      r.end();
    },
    '/declared-big': (_q, r) => r.writeHead(200, { 'content-length': 10_000_000 }).end('x'),
    '/hang': () => undefined,
    '/stall': (_q, r) => {
      r.writeHead(200, { 'content-length': 1000 });
      r.write('partial');
    },
    '/status-500': (_q, r) => r.writeHead(500).end('no'),
    '/same-origin': (_q, r) => r.writeHead(302, { location: '/ok' }).end(),
    '/cross-origin': (_q, r) => r.writeHead(302, { location: `http://127.0.0.1:${p}/ok` }).end(),
    '/see-other': (_q, r) => r.writeHead(303, { location: '/ok' }).end(),
    '/to-evil': (_q, r) => r.writeHead(302, { location: `http://127.0.0.2:${p}/ok` }).end(),
    '/to-ipv6-loopback': (_q, r) => r.writeHead(302, { location: `http://[::1]:${p}/ok` }).end(),
    '/to-mapped': (_q, r) => r.writeHead(302, { location: `http://[::ffff:127.0.0.2]:${p}/ok` }).end(),
    '/to-zero': (_q, r) => r.writeHead(302, { location: `http://0.0.0.0:${p}/ok` }).end(),
    '/to-smtp': (_q, r) => r.writeHead(302, { location: 'http://127.0.0.1:25/' }).end(),
  };
  const req = (extra: Partial<GuardedRequestOptions> & { url: string }): GuardedRequestOptions => ({
    method: 'GET',
    timeoutMs: 5000,
    maxResponseBytes: 1_000_000,
    allowPrivate: false,
    treatAsPublic: PUBLIC,
    ...extra,
  });
  // media.test -> 127.0.0.1 without touching DNS.
  const mediaTest = async (host: string): Promise<ResolvedAddress[]> => {
    assert.equal(host, 'media.test');
    return [{ address: '127.0.0.1', family: 4 }];
  };

  before(async () => {
    dir = await makeTempDir('http-client');
    good = http.createServer((q, r) => {
      const chunks: Buffer[] = [];
      q.on('data', (c: Buffer) => chunks.push(c));
      q.on('end', () => {
        seen.push({
          method: q.method ?? '',
          url: q.url ?? '',
          headers: q.headers,
          body: Buffer.concat(chunks).toString(),
        });
        (routes[(q.url ?? '').split('?')[0]] ?? ((_q, res) => res.writeHead(404).end()))(q, r);
      });
    });
    await new Promise<void>((ok) => good.listen(0, '127.0.0.1', ok));
    p = (good.address() as AddressInfo).port;
    base = `http://127.0.0.1:${p}`;
    evil = http.createServer((_q, r) => {
      evilHits++;
      r.end('evil');
    });
    await new Promise<void>((ok) => evil.listen(p, '127.0.0.2', ok));
  });
  after(async () => {
    good.closeAllConnections();
    evil.closeAllConnections();
    await Promise.all([new Promise((ok) => good.close(ok)), new Promise((ok) => evil.close(ok))]);
    await removeTempDir(dir);
  });

  it('guardedRequest: status, headers and the body as a buffer', async () => {
    const res = await guardedRequest(req({ url: `${base}/ok?x=1` }));
    assert.equal(res.status, 200);
    assert.equal(res.headers['x-test'], 'yes');
    assert.equal(res.url, `${base}/ok?x=1`);
    assert.equal((await res.buffer()).toString(), 'hello');
    assert.equal(seen.at(-1)?.headers['user-agent'], 'lipsync-service/1');
    // Any status is an answer: the caller decides.
    const r500 = await guardedRequest(req({ url: `${base}/status-500` }));
    assert.equal(r500.status, 500);
    r500.close();
  });

  it('refuses a redirect from an allowed host to loopback in every spelling, without connecting', async () => {
    const evilBefore = evilHits;
    for (const path of ['/to-evil', '/to-ipv6-loopback', '/to-mapped', '/to-zero']) {
      const before = seen.length;
      await assert.rejects(
        guardedRequest(req({ url: `${base}${path}`, maxRedirects: 5 })),
        failsWith('blocked_address'),
        path,
      );
      assert.equal(seen.length, before + 1, `only the first hop reached a server (${path})`);
    }
    await assert.rejects(guardedRequest(req({ url: `${base}/to-smtp`, maxRedirects: 5 })), failsWith('port'));
    assert.equal(evilHits, evilBefore, 'evil was never contacted');
  });

  it('follows redirects only when asked; 303 turns a POST into a GET without body', async () => {
    const r = await guardedRequest(req({ url: `${base}/same-origin` }));
    assert.equal(r.status, 302);
    r.close();
    const before = seen.length;
    const post = await guardedRequest(
      req({ method: 'POST', url: `${base}/see-other`, body: '{"a":1}', maxRedirects: 1 }),
    );
    assert.equal(post.status, 200);
    assert.equal((await post.buffer()).toString(), 'hello');
    assert.deepEqual(
      seen.slice(before).map((s) => [s.method, s.url, s.body]),
      [
        ['POST', '/see-other', '{"a":1}'],
        ['GET', '/ok', ''],
      ],
    );
  });

  it('cuts the body at maxResponseBytes, declared or streamed', async () => {
    await assert.rejects(
      guardedRequest(req({ url: `${base}/declared-big`, maxResponseBytes: 1000 })),
      failsWith('too_large'),
    );
    const res = await guardedRequest(req({ url: `${base}/big`, maxResponseBytes: 50_000 }));
    assert.equal(res.status, 200);
    await assert.rejects(res.buffer(), failsWith('too_large'));
    const whole = await guardedRequest(req({ url: `${base}/big`, maxResponseBytes: 100_000 }));
    assert.equal((await whole.buffer()).length, 100_000);
  });

  it('one deadline covers the head and the body', async () => {
    await assert.rejects(guardedRequest(req({ url: `${base}/hang`, timeoutMs: 300 })), failsWith('timeout'));
    const res = await guardedRequest(req({ url: `${base}/stall`, timeoutMs: 300 }));
    await assert.rejects(res.buffer(), failsWith('timeout'));
    // A caller holding an answer without reading it does not crash the process at the deadline.
    const held = await guardedRequest(req({ url: `${base}/stall`, timeoutMs: 100 }));
    await new Promise((ok) => setTimeout(ok, 300));
    assert.equal(held.body.destroyed, true);
  });

  it('guardedPost: sends the body and headers, returns the status, times out', async () => {
    const status = await guardedPost(
      `http://media.test:${p}/ok`,
      '{"id":"g1"}',
      { 'content-type': 'application/json', 'webhook-id': 'w1' },
      { allowPrivate: false, timeoutMs: 5000, treatAsPublic: PUBLIC, resolve: mediaTest },
    );
    assert.equal(status, 200);
    const last = seen.at(-1) as Seen;
    assert.deepEqual([last.method, last.body, last.headers['webhook-id']], ['POST', '{"id":"g1"}', 'w1']);
    assert.equal(last.headers.host, `media.test:${p}`);
    assert.equal(
      await guardedPost(
        `${base}/same-origin`,
        '{}',
        {},
        { allowPrivate: false, timeoutMs: 5000, treatAsPublic: PUBLIC },
      ),
      302,
      'redirects are not followed',
    );
    await assert.rejects(
      guardedPost(`${base}/hang`, '{}', {}, { allowPrivate: false, timeoutMs: 300, treatAsPublic: PUBLIC }),
      failsWith('timeout'),
    );
  });

  it('guardedPost: refuses loopback and metadata by default, before connecting; the error says it is final', async () => {
    const before = seen.length;
    for (const url of [
      `${base}/ok`,
      `http://localhost:${p}/ok`,
      'http://169.254.169.254/latest',
      `http://[::1]:${p}/`,
    ]) {
      const err = await guardedPost(url, '{}', {}, { allowPrivate: false, timeoutMs: 2000 }).then(
        () => assert.fail(url),
        (e: unknown) => e as OutgoingRequestError,
      );
      assert.equal(err.reason, 'blocked_address', url);
      assert.equal(err.refused, true);
      assert.doesNotMatch(err.message, /127\.0\.0\.1|::1|169\.254/, 'the message names no resolved address');
    }
    assert.equal(seen.length, before);
    // With the operator's allowPrivate, loopback is reachable; metadata never is.
    assert.equal(await guardedPost(`${base}/ok`, '{}', {}, { allowPrivate: true, timeoutMs: 2000 }), 200);
    await assert.rejects(
      guardedPost('http://169.254.169.254/latest', '{}', {}, { allowPrivate: true, timeoutMs: 2000 }),
      failsWith('blocked_address'),
    );
  });

  it('connects to the checked address even when DNS answers differently later (rebinding)', async () => {
    let calls = 0;
    const rebinding = async (): Promise<ResolvedAddress[]> => [
      { address: calls++ === 0 ? '127.0.0.1' : '127.0.0.2', family: 4 },
    ];
    const evilBefore = evilHits;
    const status = await guardedPost(
      `http://media.test:${p}/ok`,
      '{}',
      {},
      {
        allowPrivate: false,
        timeoutMs: 5000,
        treatAsPublic: PUBLIC,
        resolve: rebinding,
      },
    );
    assert.equal(status, 200);
    assert.equal(calls, 1, 'resolved once, by the guard');
    assert.equal(evilHits, evilBefore);
  });

  it('userinfo: sent as Basic auth to the same origin, dropped across origins, never echoed', async () => {
    const url = `http://user:s3cret@media.test:${p}/same-origin`;
    const res = await guardedRequest(req({ url, maxRedirects: 2, resolve: mediaTest }));
    assert.equal(res.url, `http://media.test:${p}/ok`);
    res.close();
    const basic = `Basic ${Buffer.from('user:s3cret').toString('base64')}`;
    assert.deepEqual(
      seen.slice(-2).map((s) => s.headers.authorization),
      [basic, basic],
    );

    const cross = await guardedRequest(
      req({
        url: `http://media.test:${p}/cross-origin`,
        headers: { Authorization: 'Bearer tok', Cookie: 'a=b' },
        maxRedirects: 2,
        resolve: mediaTest,
      }),
    );
    cross.close();
    assert.deepEqual(
      seen.slice(-2).map((s) => [s.url, s.headers.authorization, s.headers.cookie]),
      [
        ['/cross-origin', 'Bearer tok', 'a=b'],
        ['/ok', undefined, undefined],
      ],
    );

    // Nothing the caller can show or log carries the password.
    const out = join(dir, 'f');
    const fetched = await fetchToFile(`http://user:s3cret@media.test:${p}/ok`, out, {
      maxBytes: 1000,
      timeoutMs: 5000,
      treatAsPublic: PUBLIC,
      resolve: mediaTest,
    });
    assert.equal(fetched.finalUrl, `http://media.test:${p}/ok`);
    for (const bad of [
      `http://user:s3cret@127.0.0.2:${p}/ok`,
      `http://user:s3cret@media.test:${p}/status-500`,
      'ftp://user:s3cret@media.test/x',
      `http://user:s3cret@media.test:${p}/to-evil`,
    ]) {
      const err = await fetchToFile(bad, join(dir, 'g'), {
        maxBytes: 1000,
        timeoutMs: 5000,
        treatAsPublic: PUBLIC,
        resolve: mediaTest,
      }).then(
        () => assert.fail(bad),
        (e: unknown) => e as OutgoingRequestError,
      );
      assert.ok(err instanceof OutgoingRequestError);
      assert.doesNotMatch(`${err.message} ${err.detail} ${err.stack}`, /s3cret/, bad);
    }
  });

  it('network failures carry a message for users and the socket detail for logs', async () => {
    const closed = http.createServer();
    await new Promise<void>((ok) => closed.listen(0, '127.0.0.1', ok));
    const cp = (closed.address() as AddressInfo).port;
    await new Promise((ok) => closed.close(ok));
    const err = await guardedRequest(req({ url: `http://127.0.0.1:${cp}/` })).then(
      () => assert.fail('connected'),
      (e: unknown) => e as OutgoingRequestError,
    );
    assert.equal(err.reason, 'network');
    assert.equal(err.message, 'the server refused the connection');
    assert.match(err.detail, /ECONNREFUSED/);
    assert.equal(err.refused, false);

    const ctl = new AbortController();
    setTimeout(() => ctl.abort(), 50);
    await assert.rejects(
      guardedRequest(req({ url: `${base}/hang`, signal: ctl.signal })),
      failsWith('aborted'),
    );
  });
});

describe('assertPublicUrl', () => {
  const publicDns = async (): Promise<ResolvedAddress[]> => [{ address: '93.184.215.14', family: 4 }];
  const opts = { allowPrivate: false, resolve: publicDns };

  it('accepts a URL whose host resolves to public addresses only', async () => {
    await assertPublicUrl('https://hooks.example.com/lipsync', opts);
    await assertPublicUrl('http://hooks.example.com:8080/x', opts);
    await assertPublicUrl('https://8.8.8.8/x', { allowPrivate: false });
  });

  it('refuses with a typed reason what the client would refuse', async () => {
    const cases: [string, string][] = [
      ['not a url', 'invalid_url'],
      ['ftp://hooks.example.com/x', 'scheme'],
      ['javascript:alert(1)', 'scheme'],
      ['http://hooks.example.com:25/x', 'port'],
      ['http://127.0.0.1/x', 'blocked_address'],
      ['http://[::1]/x', 'blocked_address'],
      ['http://[::ffff:127.0.0.1]/x', 'blocked_address'],
      ['http://2130706433/x', 'blocked_address'],
      ['http://0/x', 'blocked_address'],
      ['http://0.0.0.0/x', 'blocked_address'],
      ['http://10.1.2.3/x', 'blocked_address'],
      ['http://169.254.169.254/latest/meta-data/', 'blocked_address'],
      ['http://[64:ff9b::7f00:1]/x', 'blocked_address'],
      ['http://[fd00::1]/x', 'blocked_address'],
    ];
    for (const [url, reason] of cases)
      await assert.rejects(assertPublicUrl(url, opts), failsWith(reason), url);
    // A name that resolves to a private address; one private address among public ones is enough.
    await assert.rejects(
      assertPublicUrl('https://internal.example.com/', {
        allowPrivate: false,
        resolve: async () => [
          { address: '93.184.215.14', family: 4 },
          { address: '192.168.1.10', family: 4 },
        ],
      }),
      failsWith('blocked_address'),
    );
    await assert.rejects(
      assertPublicUrl('http://localhost:3000/hook', { allowPrivate: false }),
      failsWith('blocked_address'),
    );
  });

  it('reports names that do not resolve, or not in time', async () => {
    await assert.rejects(
      assertPublicUrl('https://nowhere.example/', {
        allowPrivate: false,
        resolve: async () => {
          throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.example'), { code: 'ENOTFOUND' });
        },
      }),
      failsWith('unresolvable'),
    );
    await assert.rejects(
      assertPublicUrl('https://slow.example/', {
        allowPrivate: false,
        timeoutMs: 100,
        resolve: () => new Promise(() => undefined),
      }),
      failsWith('unresolvable'),
    );
  });

  it('allowPrivate lets private hosts through, never metadata', async () => {
    await assertPublicUrl('http://127.0.0.1:3000/hook', { allowPrivate: true });
    await assertPublicUrl('http://10.0.0.5/hook', { allowPrivate: true });
    await assert.rejects(
      assertPublicUrl('http://169.254.169.254/', { allowPrivate: true }),
      failsWith('blocked_address'),
    );
  });
});
