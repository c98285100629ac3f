// test-database: none
// The guarded fetcher against real local HTTP(S) servers. "good" listens on 127.0.0.1 and "evil" on
// 127.0.0.2 at the same port. Tests that need a reachable server use the client's test hook
// `treatAsPublic: ['127.0.0.1']`: that one address counts as public while everything else keeps the
// real classification (127.0.0.2 stays blocked as loopback), so redirects and DNS answers pointing at
// "evil" must be refused.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { access, readFile } from 'node:fs/promises';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import {
  fetchToFile,
  urlFetchAppError,
  UrlFetchError,
  type FetchToFileOptions,
  type ResolvedAddress,
} from '../../src/media/fetch.js';
import { makeTempDir, removeTempDir } from '../../src/media/tempdir.js';

const BODY = randomBytes(100_000);
const testPolicy = ['127.0.0.1'];
const exists = (p: string) =>
  access(p).then(
    () => true,
    () => false,
  );
const failsWith = (reason: string, status?: number) => (e: unknown) =>
  e instanceof UrlFetchError && e.reason === reason && (status === undefined || e.status === status);

type Handler = (req: http.IncomingMessage, res: http.ServerResponse) => void;
const routes: Record<string, Handler> = {
  '/file': (_q, r) =>
    r.writeHead(200, { 'content-type': 'video/mp4', 'content-length': BODY.length }).end(BODY),
  '/chunked': (_q, r) => {
    r.writeHead(200);
    for (let i = 0; i < 20; i++) r.write(BODY.subarray(0, 10_000));
    r.end();
  },
  '/declared-big': (_q, r) => r.writeHead(200, { 'content-length': 50_000_000 }).end(BODY.subarray(0, 10)),
  '/stall': (_q, r) => {
    r.writeHead(200, { 'content-length': BODY.length });
    r.write(BODY.subarray(0, 5000));
  },
  '/hang': () => undefined,
  '/missing': (_q, r) => r.writeHead(404).end('no'),
  '/relative': (_q, r) => r.writeHead(302, { location: '/file' }).end(),
  '/to-evil': (q, r) => r.writeHead(302, { location: `http://127.0.0.2:${port(q)}/file` }).end(),
  '/to-metadata': (_q, r) => r.writeHead(301, { location: 'http://169.254.169.254/latest/meta-data/' }).end(),
  '/to-ftp': (_q, r) => r.writeHead(307, { location: 'ftp://example.com/x' }).end(),
  '/loop': (_q, r) => r.writeHead(302, { location: '/loop' }).end(),
};
function port(q: http.IncomingMessage): number {
  return (q.socket.address() as AddressInfo).port;
}

describe('fetchToFile', () => {
  let dir: string;
  let good: http.Server;
  let evil: http.Server;
  let base: string;
  let p: number;
  const hits = { good: [] as string[], evil: 0, hosts: [] as string[] };
  let n = 0;
  const dest = () => join(dir, `out-${++n}`);
  const opts = (extra: Partial<FetchToFileOptions> = {}): FetchToFileOptions => ({
    maxBytes: 1_000_000,
    timeoutMs: 5000,
    ...extra,
  });

  before(async () => {
    dir = await makeTempDir('media-fetch');
    good = http.createServer((q, r) => {
      hits.good.push(q.url ?? '');
      hits.hosts.push(q.headers.host ?? '');
      (routes[q.url ?? ''] ?? ((_q, res) => res.writeHead(404).end()))(q, r);
    });
    await new Promise<void>((ok) => good.listen(0, '127.0.0.1', ok));
    p = (good.address() as AddressInfo).port;
    base = `http://127.0.0.1:${p}`;
    evil = http.createServer((_q, r) => {
      hits.evil++;
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

  it('refuses loopback, private and metadata addresses by default, in every spelling, without connecting', async () => {
    const before = hits.good.length;
    for (const url of [
      `${base}/file`,
      `http://localhost:${p}/file`,
      `http://[::1]:${p}/file`,
      `http://[::ffff:127.0.0.1]:${p}/file`,
      `http://[::ffff:7f00:1]:${p}/file`,
      `http://2130706433:${p}/file`,
      `http://0x7f.1:${p}/file`,
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/x',
      'http://[fd00::1]/x',
      'http://[64:ff9b::a00:1]/x',
    ]) {
      const out = dest();
      await assert.rejects(fetchToFile(url, out, opts()), failsWith('blocked_address'), url);
      assert.equal(await exists(out), false);
    }
    assert.equal(hits.good.length, before, 'no request reached the server');
  });

  it('fetches from a private address when the operator allows it', async () => {
    const out = dest();
    const r = await fetchToFile(`${base}/file`, out, opts({ allowPrivate: true }));
    assert.deepEqual(await readFile(out), BODY);
    assert.deepEqual(r, {
      bytes: BODY.length,
      finalUrl: `${base}/file`,
      contentType: 'video/mp4',
      redirects: 0,
    });
  });

  it('follows redirects and checks every hop', async () => {
    const out = dest();
    const r = await fetchToFile(`${base}/relative`, out, opts({ treatAsPublic: testPolicy }));
    assert.equal(r.redirects, 1);
    assert.equal(r.finalUrl, `${base}/file`);
    assert.deepEqual(await readFile(out), BODY);

    const evilBefore = hits.evil;
    await assert.rejects(
      fetchToFile(`${base}/to-evil`, dest(), opts({ treatAsPublic: testPolicy })),
      failsWith('blocked_address'),
    );
    await assert.rejects(
      fetchToFile(`${base}/to-metadata`, dest(), opts({ treatAsPublic: testPolicy })),
      failsWith('blocked_address'),
    );
    assert.equal(hits.evil, evilBefore, 'the redirect target was never contacted');
    await assert.rejects(
      fetchToFile(`${base}/to-ftp`, dest(), opts({ treatAsPublic: testPolicy })),
      failsWith('scheme'),
    );
    await assert.rejects(
      fetchToFile(`${base}/loop`, dest(), opts({ treatAsPublic: testPolicy, maxRedirects: 3 })),
      failsWith('too_many_redirects'),
    );
  });

  it('connects to the checked address even when DNS answers differently later (rebinding)', async () => {
    // The setup can tell: a plain request to the same port on 127.0.0.2 reaches "evil".
    const direct = await new Promise<string>((ok, fail) =>
      http
        .get(`http://127.0.0.2:${p}/file`, (res) => res.setEncoding('utf8').on('data', ok))
        .on('error', fail),
    );
    assert.equal(direct, 'evil');

    // First answer 127.0.0.1 (allowed here), every later answer 127.0.0.2 (evil).
    const rebinding = () => {
      const r = {
        calls: 0,
        resolve: async (host: string): Promise<ResolvedAddress[]> => {
          assert.equal(host, 'media.test');
          return [{ address: r.calls++ === 0 ? '127.0.0.1' : '127.0.0.2', family: 4 }];
        },
      };
      return r;
    };
    const evilBefore = hits.evil;
    const dns = rebinding();
    const out = dest();
    await fetchToFile(
      `http://media.test:${p}/file`,
      out,
      opts({ treatAsPublic: testPolicy, resolve: dns.resolve }),
    );
    assert.deepEqual(await readFile(out), BODY);
    assert.equal(dns.calls, 1, 'resolved once, by the guard; the HTTP client did not look up again');
    assert.equal(hits.hosts.at(-1), `media.test:${p}`, 'the Host header names the host, not the address');

    // A redirect is a new hop: resolved and checked again, so the changed answer is refused.
    const dns2 = rebinding();
    await assert.rejects(
      fetchToFile(
        `http://media.test:${p}/relative`,
        dest(),
        opts({ treatAsPublic: testPolicy, resolve: dns2.resolve }),
      ),
      failsWith('blocked_address'),
    );
    assert.equal(dns2.calls, 2);
    assert.equal(hits.evil, evilBefore, 'evil was never contacted');
  });

  it('refuses a host when any of its addresses is blocked', async () => {
    const mixed = async (): Promise<ResolvedAddress[]> => [
      { address: '127.0.0.1', family: 4 },
      { address: '10.1.2.3', family: 4 },
    ];
    await assert.rejects(
      fetchToFile(`http://media.test:${p}/file`, dest(), opts({ treatAsPublic: testPolicy, resolve: mixed })),
      failsWith('blocked_address'),
    );
    const none = async (): Promise<ResolvedAddress[]> => {
      throw Object.assign(new Error('nx'), { code: 'ENOTFOUND' });
    };
    await assert.rejects(
      fetchToFile(`http://nowhere.test/x`, dest(), opts({ resolve: none })),
      failsWith('unresolvable'),
    );
  });

  it('stops at maxBytes, declared or streamed, and removes the partial file', async () => {
    const o = opts({ treatAsPublic: testPolicy, maxBytes: 50_000 });
    let out = dest();
    await assert.rejects(fetchToFile(`${base}/declared-big`, out, o), failsWith('too_large'));
    assert.equal(await exists(out), false);
    out = dest();
    await assert.rejects(fetchToFile(`${base}/chunked`, out, o), failsWith('too_large'));
    assert.equal(await exists(out), false);
    out = dest();
    const r = await fetchToFile(
      `${base}/chunked`,
      out,
      opts({ treatAsPublic: testPolicy, maxBytes: 200_000 }),
    );
    assert.equal(r.bytes, 200_000);
  });

  it('times out (before headers or mid-body) and removes the partial file', async () => {
    for (const path of ['/hang', '/stall']) {
      // Neither route ever finishes: the call can only end by its timeout.
      const out = dest();
      await assert.rejects(
        fetchToFile(`${base}${path}`, out, opts({ treatAsPublic: testPolicy, timeoutMs: 400 })),
        failsWith('timeout'),
      );
      assert.equal(await exists(out), false, path);
    }
  });

  it('refuses non-2xx answers, other schemes and bad URLs; honours abort', async () => {
    const out = dest();
    await assert.rejects(
      fetchToFile(`${base}/missing`, out, opts({ treatAsPublic: testPolicy })),
      failsWith('http_status', 404),
    );
    assert.equal(await exists(out), false);
    for (const url of ['ftp://example.com/a.mp4', 'file:///etc/passwd', 'data:video/mp4;base64,AAAA']) {
      await assert.rejects(fetchToFile(url, dest(), opts()), failsWith('scheme'), url);
    }
    for (const url of ['not a url', 'http://']) {
      await assert.rejects(fetchToFile(url, dest(), opts()), failsWith('invalid_url'), url);
    }
    const ctl = new AbortController();
    setTimeout(() => ctl.abort(), 100);
    await assert.rejects(
      fetchToFile(`${base}/hang`, dest(), opts({ treatAsPublic: testPolicy, signal: ctl.signal })),
      failsWith('aborted'),
    );
  });

  it('maps to the catalogue error for inaccessible inputs', () => {
    const e = urlFetchAppError(
      new UrlFetchError('http_status', 'the server answered HTTP 404', { status: 404 }),
      'input[0].url',
    );
    assert.equal(e.code, 'generation_input_video_inaccessible');
    assert.equal(e.status, 422);
    assert.equal(e.extras.field, 'input[0].url');
    assert.match(e.message, /HTTP 404/);
  });

  it('https: pinned address with the right SNI and certificate check by host name', async () => {
    const run = promisify(execFile);
    const key = join(dir, 'key.pem');
    const cert = join(dir, 'cert.pem');
    await run('openssl', [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      key,
      '-out',
      cert,
      '-days',
      '1',
      '-subj',
      '/CN=media.test',
      '-addext',
      'subjectAltName=DNS:media.test',
    ]);
    const servernames: (string | false | null)[] = [];
    const server = https.createServer({ key: await readFile(key), cert: await readFile(cert) }, (q, r) => {
      servernames.push((q.socket as import('node:tls').TLSSocket).servername);
      r.end(BODY);
    });
    await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
    const sp = (server.address() as AddressInfo).port;
    const resolve = async (): Promise<ResolvedAddress[]> => [{ address: '127.0.0.1', family: 4 }];
    const o = opts({ treatAsPublic: testPolicy, resolve, extraCa: [await readFile(cert, 'utf8')] });
    try {
      const out = dest();
      await fetchToFile(`https://media.test:${sp}/x`, out, o);
      assert.deepEqual(await readFile(out), BODY);
      assert.deepEqual(servernames, ['media.test']);
      await assert.rejects(fetchToFile(`https://other.test:${sp}/x`, dest(), o), failsWith('network'));
      await assert.rejects(
        fetchToFile(`https://media.test:${sp}/x`, dest(), { ...o, extraCa: undefined }),
        failsWith('network'),
      );
    } finally {
      server.closeAllConnections();
      await new Promise((ok) => server.close(ok));
    }
  });
});
