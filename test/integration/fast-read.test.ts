// The fast read path (src/http/fast-read.ts, ADR 19): a plain `GET /v2/generate/{id}` is answered
// before Fastify with what Fastify would have answered (status, headers in the same order, body,
// metrics, log line), and every other request, failures included, is left to Fastify, counted
// against the rate limit once. Real listening server, real database; `?` after the id sends the
// same request through Fastify (a query string is never taken by the fast path).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { randomUUID } from 'node:crypto';
import {
  completedGenerationRecord,
  createKey,
  createOrgWithKey,
  createTestServices,
  type TestOrg,
  type TestServices,
} from '../helpers/index.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';

interface Answer {
  status: number;
  /** Header names in the order they were sent, lower case. */
  names: string[];
  headers: http.IncomingHttpHeaders;
  body: string;
}

function get(base: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  return new Promise((resolve, reject) => {
    // By path, not URL: a URL would drop a bare `?`.
    const { hostname, port } = new URL(base);
    const req = http.request({ hostname, port, path, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d: string) => (body += d));
      res.on('end', () => {
        const names = res.rawHeaders.filter((_, i) => i % 2 === 0).map((n) => n.toLowerCase());
        resolve({ status: res.statusCode!, names, headers: res.headers, body });
      });
    });
    req.on('error', reject);
    req.end();
  });
}

async function listening(t: TestServices): Promise<string> {
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
}

function collector(): { lines: Record<string, unknown>[]; raw: string[]; destination: Writable } {
  const lines: Record<string, unknown>[] = [];
  const raw: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const l of chunk.toString('utf8').split('\n').filter(Boolean)) {
        raw.push(l);
        lines.push(JSON.parse(l) as Record<string, unknown>);
      }
      cb();
    },
  });
  return { lines, raw, destination };
}

/** Sent by the server on every answer, with values that differ between two answers. */
const VARYING = new Set(['date', 'x-request-id', 'x-ratelimit-remaining', 'x-ratelimit-reset']);

describe(`the fast read path (${DB})`, { timeout: 120_000 }, () => {
  let t: TestServices;
  let base: string;
  let org: TestOrg;
  let other: TestOrg;
  const log = collector();
  const gens = new Map<string, string>();

  before(async () => {
    t = await createTestServices({
      env: { LOG_LEVEL: 'info', LIPSYNC_RATE_LIMIT_PER_MINUTE: '1000' },
      logDestination: log.destination,
    });
    org = await createOrgWithKey(t.services);
    other = await createOrgWithKey(t.services);
    for (const name of ['a', 'b', 'c']) {
      const g = completedGenerationRecord(org.organization.id);
      await t.services.store.generations.insert(g);
      gens.set(name, g.id);
    }
    const g = completedGenerationRecord(other.organization.id);
    await t.services.store.generations.insert(g);
    gens.set('other', g.id);
    base = await listening(t);
  });
  after(async () => t?.cleanup());

  const answered = () => t.app.fastRead!.answered;

  test('a plain poll is answered before Fastify with what Fastify answers', async () => {
    const id = gens.get('a')!;
    const before = answered();
    const fast = await get(base, `/v2/generate/${id}`, org.owner.headers);
    assert.equal(answered(), before + 1, 'the fast path answered');
    const slow = await get(base, `/v2/generate/${id}?`, org.owner.headers);
    assert.equal(answered(), before + 1, 'Fastify answered the one with a query string');

    assert.equal(fast.status, 200, fast.body);
    assert.equal(slow.status, 200, slow.body);
    assert.deepEqual(fast.names, slow.names, 'the same headers in the same order');
    for (const name of fast.names) {
      if (!VARYING.has(name)) assert.equal(fast.headers[name], slow.headers[name], name);
    }
    assert.equal(fast.headers['content-type'], 'application/json; charset=utf-8');
    assert.equal(fast.headers['x-ratelimit-limit'], '1000');
    assert.equal(
      Number(fast.headers['x-ratelimit-remaining']),
      Number(slow.headers['x-ratelimit-remaining']) + 1,
    );
    assert.match(String(fast.headers['x-request-id']), /^[0-9a-f-]{36}$/);
    // The signature's expiry moves on with the clock's second: the rest is the same text.
    const unsigned = (text: string) => text.replace(/expires=\d+&sig=[0-9a-f]+/, 'expires=E&sig=S');
    assert.equal(unsigned(fast.body), unsigned(slow.body), 'the same text');
    assert.notEqual(unsigned(fast.body), fast.body, 'a signed output URL');
    const view = JSON.parse(fast.body) as { id: string; status: string; outputUrl: string | null };
    assert.equal(view.id, id);
    assert.equal(view.status, 'COMPLETED');
    assert.match(String(view.outputUrl), /^http/);
  });

  test('the request id, the metrics and the log line are those of a Fastify answer', async () => {
    const id = gens.get('b')!;
    const scrape = async () => {
      const m = await get(base, '/metrics');
      const line = m.body
        .split('\n')
        .find((l) =>
          l.startsWith(
            'lipsync_http_request_duration_seconds_count{method="GET",route="/v2/generate/:id",status_code="200"}',
          ),
        );
      return line ? Number(line.split(' ').pop()) : 0;
    };
    const counted = await scrape();
    const before = answered();
    const reqId = `poll-${randomUUID()}`;
    const fast = await get(base, `/v2/generate/${id}`, { ...org.owner.headers, 'x-request-id': reqId });
    assert.equal(answered(), before + 1);
    assert.equal(fast.headers['x-request-id'], reqId);
    const slowId = `poll-${randomUUID()}`;
    await get(base, `/v2/generate/${id}?`, { ...org.owner.headers, 'x-request-id': slowId });
    assert.equal(await scrape(), counted + 2, 'both answers observed under the route pattern');

    const line = (rid: string) => log.lines.find((l) => l.reqId === rid && l.msg === 'request completed');
    const fastLine = line(reqId);
    const slowLine = line(slowId);
    assert.ok(fastLine && slowLine, 'one request line each');
    assert.deepEqual(Object.keys(fastLine), Object.keys(slowLine), 'the same fields in the same order');
    for (const k of ['level', 'method', 'statusCode', 'remoteAddress'])
      assert.equal(fastLine[k], slowLine[k], k);
    assert.equal(fastLine.url, `/v2/generate/${id}`);
    assert.equal(typeof fastLine.responseTime, 'number');
    assert.equal(JSON.stringify(fastLine).includes(org.owner.key), false, 'no API key in the log');
    // The same text but for the values that differ between two requests.
    const rawLine = (rid: string) =>
      log.raw
        .find((l) => l.includes(`"reqId":"${rid}"`) && l.includes('request completed'))!
        .replace(/"time":\d+/, '"time":T')
        .replace(/"reqId":"[^"]+"/, '"reqId":R')
        .replace(/"responseTime":[\d.]+/, '"responseTime":M')
        .replace(/\?"/, '"');
    assert.equal(rawLine(reqId), rawLine(slowId));
    assert.equal(log.lines.filter((l) => l.reqId === reqId).length, 1, 'one line for the request');
  });

  test('everything but the plain success is answered by Fastify, as before', async () => {
    const id = gens.get('c')!;
    const before = answered();
    const cases: [string, string, Record<string, string>, number, string | null][] = [
      ['unknown generation', `/v2/generate/${randomUUID()}`, org.owner.headers, 404, 'generation_not_found'],
      [
        "another organization's",
        `/v2/generate/${gens.get('other')!}`,
        org.owner.headers,
        404,
        'generation_not_found',
      ],
      ['no key', `/v2/generate/${id}`, {}, 401, 'unauthorized'],
      [
        'a wrong key',
        `/v2/generate/${id}`,
        { 'x-api-key': `${org.owner.key.slice(0, -4)}AAAA` },
        401,
        'unauthorized',
      ],
      ['not a UUID', '/v2/generate/not-a-uuid-at-all-not-a-uuid-at-all-x', org.owner.headers, 404, null],
      ['upper-case route', `/V2/generate/${id}`, org.owner.headers, 404, 'route_not_found'],
      ['trailing slash', `/v2/generate/${id}/`, org.owner.headers, 404, 'route_not_found'],
    ];
    for (const [what, path, headers, status, code] of cases) {
      const r = await get(base, path, headers);
      assert.equal(r.status, status, `${what}: ${r.body}`);
      if (code) assert.equal((JSON.parse(r.body) as { errorCode: string }).errorCode, code, what);
      assert.ok(r.headers['x-request-id'], what);
    }
    assert.equal(answered(), before, 'none of them by the fast path');
  });

  test('a failure after the answer went out is logged, not answered twice', async () => {
    const id = gens.get('b')!;
    const metrics = t.services.metrics;
    const observe = metrics.httpRequest.bind(metrics);
    metrics.httpRequest = () => {
      throw new Error('metrics broke');
    };
    try {
      const before = answered();
      const r = await get(base, `/v2/generate/${id}`, {
        ...org.owner.headers,
        'x-request-id': 'after-answer',
      });
      assert.equal(r.status, 200, r.body);
      assert.equal((JSON.parse(r.body) as { id: string }).id, id);
      assert.equal(answered(), before + 1);
    } finally {
      metrics.httpRequest = observe;
    }
    const failed = log.lines.find((l) => l.msg === 'fast read: failed after answering');
    assert.ok(failed, 'logged');
    assert.equal((await get(base, `/v2/generate/${id}`, org.owner.headers)).status, 200, 'still serving');
  });

  test('revoking a key takes effect at once on the fast path', async () => {
    const id = gens.get('a')!;
    const k = await createKey(t.services, org.organization.id, { name: 'soon revoked' });
    assert.equal((await get(base, `/v2/generate/${id}`, k.headers)).status, 200);
    await t.services.apiKeys.revoke(k.record.id);
    const before = answered();
    const r = await get(base, `/v2/generate/${id}`, k.headers);
    assert.equal(r.status, 401, r.body);
    assert.equal(answered(), before);
  });

  test('a draft organization is refused by Fastify', async () => {
    const draft = await createOrgWithKey(t.services, { draft: true });
    const g = completedGenerationRecord(draft.organization.id);
    await t.services.store.generations.insert(g);
    const before = answered();
    const r = await get(base, `/v2/generate/${g.id}`, draft.owner.headers);
    assert.equal(r.status, 422, r.body);
    assert.equal((JSON.parse(r.body) as { errorCode: string }).errorCode, 'organization_draft');
    assert.equal(answered(), before);
  });
});

/** A listening instance with one organization and one COMPLETED generation of it. */
async function servedGeneration(opts: Parameters<typeof createTestServices>[0]) {
  const t = await createTestServices(opts);
  const org = await createOrgWithKey(t.services);
  const g = completedGenerationRecord(org.organization.id);
  await t.services.store.generations.insert(g);
  return { t, org, g, base: await listening(t) };
}

describe(`the fast read path: rate limit, drain, switched off (${DB})`, { timeout: 120_000 }, () => {
  test('a refused request is answered 429 by Fastify and counted once', async () => {
    const { t, org, g, base } = await servedGeneration({ env: { LIPSYNC_RATE_LIMIT_PER_MINUTE: '2' } });
    try {
      const limiter = t.services.rateLimiter;
      const hit = limiter.hit.bind(limiter);
      let hits = 0;
      limiter.hit = (...args) => {
        hits++;
        return hit(...args);
      };
      const remaining: string[] = [];
      for (let i = 0; i < 2; i++) {
        const r = await get(base, `/v2/generate/${g.id}`, org.owner.headers);
        assert.equal(r.status, 200, r.body);
        remaining.push(String(r.headers['x-ratelimit-remaining']));
      }
      assert.deepEqual(remaining, ['1', '0']);
      assert.equal(t.app.fastRead!.answered, 2);
      const refused = await get(base, `/v2/generate/${g.id}`, org.owner.headers);
      assert.equal(refused.status, 429, refused.body);
      assert.equal((JSON.parse(refused.body) as { errorCode: string }).errorCode, 'rate_limit_exceeded');
      assert.ok(Number(refused.headers['retry-after']) >= 1);
      assert.equal(refused.headers['x-ratelimit-remaining'], '0');
      assert.equal(hits, 3, 'each request counted once, the refused one included');
      assert.equal(t.app.fastRead!.answered, 2);
    } finally {
      await t.cleanup();
    }
  });

  test('a draining instance leaves the poll to Fastify, which closes the connection', async () => {
    const { t, org, g, base } = await servedGeneration({ env: { LIPSYNC_RATE_LIMIT_ENABLED: 'false' } });
    try {
      assert.equal((await get(base, `/v2/generate/${g.id}`, org.owner.headers)).status, 200);
      assert.equal(t.app.fastRead!.answered, 1);
      t.services.drain.begin();
      const r = await get(base, `/v2/generate/${g.id}`, org.owner.headers);
      assert.equal(r.status, 200, r.body);
      assert.equal(r.headers.connection, 'close');
      assert.equal(t.app.fastRead!.answered, 1);
    } finally {
      await t.cleanup();
    }
  });

  test('LIPSYNC_FAST_READ=0: Fastify answers every request, the same way', async () => {
    const { t, org, g, base } = await servedGeneration({
      env: { LIPSYNC_FAST_READ: '0', LIPSYNC_TRUST_PROXY: '1' },
    });
    try {
      assert.equal(t.app.fastRead, undefined);
      const r = await get(base, `/v2/generate/${g.id}`, org.owner.headers);
      assert.equal(r.status, 200, r.body);
      assert.equal((JSON.parse(r.body) as { id: string }).id, g.id);
    } finally {
      await t.cleanup();
    }
  });

  test('behind a trusted proxy the log line names the forwarded client, as Fastify does', async () => {
    const log = collector();
    const { t, org, g, base } = await servedGeneration({
      env: { LOG_LEVEL: 'info', LIPSYNC_TRUST_PROXY: '1', LIPSYNC_RATE_LIMIT_ENABLED: 'false' },
      logDestination: log.destination,
    });
    try {
      const headers = { ...org.owner.headers, 'x-forwarded-for': '203.0.113.7, 198.51.100.2' };
      await get(base, `/v2/generate/${g.id}`, { ...headers, 'x-request-id': 'fast-behind-proxy' });
      await get(base, `/v2/generate/${g.id}?`, { ...headers, 'x-request-id': 'slow-behind-proxy' });
      assert.equal(t.app.fastRead!.answered, 1);
      const address = (rid: string) =>
        log.lines.find((l) => l.reqId === rid && l.msg === 'request completed')?.remoteAddress;
      assert.equal(address('slow-behind-proxy'), '203.0.113.7');
      assert.equal(address('fast-behind-proxy'), '203.0.113.7');
    } finally {
      await t.cleanup();
    }
  });
});
