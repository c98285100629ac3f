// Request-rate limits in one process (in-memory counters): per key, per IP without a key, the spec's
// 429 body and headers, and the separately counted asset upload.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createKey,
  createOrgWithKey,
  createTestServices,
  assertRateLimited,
  waitForFreshWindow,
  type TestKey,
  type TestOrg,
  type TestServices,
} from '../helpers/index.js';

describe(`rate limits, in memory (${process.env.TEST_DATABASE ?? 'sqlite'})`, () => {
  let t: TestServices;
  let org: TestOrg;

  before(async () => {
    t = await createTestServices({ env: { LIPSYNC_RATE_LIMIT_PER_MINUTE: '3' } });
    org = await createOrgWithKey(t.services);
  });
  after(() => t.cleanup());

  const get = (
    key: TestKey | null,
    opts: { ip?: string; url?: string; headers?: Record<string, string> } = {},
  ) =>
    t.app.inject({
      method: 'GET',
      url: opts.url ?? '/v2/projects',
      headers: { ...(key ? key.headers : {}), ...opts.headers },
      remoteAddress: opts.ip ?? '192.0.2.10',
    });

  test('the default limit lets 3 requests a minute through and refuses the 4th with the spec body', async () => {
    await waitForFreshWindow();
    const k = await createKey(t.services, org.organization.id);
    for (let i = 0; i < 3; i++) {
      const res = await get(k);
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['x-ratelimit-limit'], '3');
      assert.equal(res.headers['x-ratelimit-remaining'], String(2 - i));
    }
    const res = await get(k);
    assertRateLimited(res);
    assert.equal(res.headers['x-ratelimit-remaining'], '0');
    // Still refused: the counter is not reset by being refused.
    assertRateLimited(await get(k));
  });

  test('two keys are counted separately', async () => {
    await waitForFreshWindow();
    const a = await createKey(t.services, org.organization.id);
    const b = await createKey(t.services, org.organization.id);
    for (let i = 0; i < 3; i++) assert.equal((await get(a)).statusCode, 200);
    assertRateLimited(await get(a));
    const resB = await get(b);
    assert.equal(resB.statusCode, 200);
    assert.equal(resB.headers['x-ratelimit-remaining'], '2');
  });

  test("changing IP does not bypass a key's limit", async () => {
    await waitForFreshWindow();
    const k = await createKey(t.services, org.organization.id);
    for (let i = 0; i < 3; i++) assert.equal((await get(k, { ip: `198.51.100.${i + 1}` })).statusCode, 200);
    assertRateLimited(await get(k, { ip: '198.51.100.99' }));
    assertRateLimited(await get(k, { ip: '198.51.100.98', headers: { 'x-forwarded-for': '203.0.113.77' } }));
  });

  test('requests without a key are counted per IP', async () => {
    await waitForFreshWindow();
    for (let i = 0; i < 3; i++)
      assert.equal((await get(null, { url: '/v2/errors', ip: '203.0.113.1' })).statusCode, 200);
    assertRateLimited(await get(null, { url: '/v2/errors', ip: '203.0.113.1' }));
    assert.equal((await get(null, { url: '/v2/errors', ip: '203.0.113.2' })).statusCode, 200);
    // A key's requests from the exhausted IP are not charged to that IP.
    const k = await createKey(t.services, org.organization.id);
    assert.equal((await get(k, { ip: '203.0.113.1' })).statusCode, 200);
  });

  test('failed key guesses are counted against the IP', async () => {
    await waitForFreshWindow();
    const guess = { 'x-api-key': 'sk_lipsync_' + 'A'.repeat(43) };
    for (let i = 0; i < 3; i++)
      assert.equal((await get(null, { ip: '203.0.113.50', headers: guess })).statusCode, 401);
    assertRateLimited(await get(null, { ip: '203.0.113.50', headers: guess }));
    assertRateLimited(await get(null, { ip: '203.0.113.50' }));
  });

  test('probes and /metrics answer 200 from an IP that failed key guesses exhausted', async () => {
    // Its own listening instance: /readyz is ready only on a listening server, and fetch comes from
    // 127.0.0.1 (this instance's counters are its own).
    const d = await createTestServices({ shareDatabaseWith: t });
    try {
      const base = await d.app.listen({ port: 0, host: '127.0.0.1' });
      await waitForFreshWindow();
      const guess = { 'x-api-key': 'sk_lipsync_' + 'B'.repeat(43) };
      const api = () => fetch(`${base}/v2/projects`, { headers: guess });
      for (let i = 0; i < 3; i++) assert.equal((await api()).status, 401);
      assert.equal((await api()).status, 429, 'the IP is out of requests');
      for (const path of ['/readyz', '/health', '/healthz', '/metrics']) {
        for (let i = 0; i < 5; i++) {
          const res = await fetch(`${base}${path}`);
          assert.equal(res.status, 200, `${path}: ${await res.text()}`);
          assert.equal(res.headers.get('x-ratelimit-limit'), null, `${path} is not counted`);
        }
      }
      assert.equal((await api()).status, 429, 'the probes reset nothing');
    } finally {
      await d.cleanup();
    }
  });

  test('POST /v2/assets/upload is counted separately at 120 a minute', async (ctx) => {
    if (!t.app.hasRoute({ method: 'POST', url: '/v2/assets/upload' })) {
      ctx.skip('POST /v2/assets/upload is not registered in this build');
      return;
    }
    await waitForFreshWindow();
    const k = await createKey(t.services, org.organization.id);
    for (let i = 0; i < 3; i++) assert.equal((await get(k)).statusCode, 200);
    assertRateLimited(await get(k));
    const up = await t.app.inject({
      method: 'POST',
      url: '/v2/assets/upload',
      headers: { ...k.headers, 'content-type': 'application/json' },
      payload: '{}',
    });
    assert.notEqual(up.statusCode, 429);
    assert.equal(up.headers['x-ratelimit-limit'], '120');
    assert.equal(up.headers['x-ratelimit-remaining'], '119');
  });
  test('POST /v2/voices: 10 an hour per key; POST /v2/tts and /v2/tts/jobs: 60 a minute each, apart', async () => {
    const k = await createKey(t.services, org.organization.id);
    const post = (url: string) =>
      t.app.inject({
        method: 'POST',
        url,
        headers: { ...k.headers, 'content-type': 'application/json' },
        payload: '{}',
      });
    // The ten requests must fall in one hour window: start again if an hour boundary passed meanwhile.
    for (;;) {
      const hour = Math.floor(Date.now() / 3_600_000);
      const k2 = await createKey(t.services, org.organization.id);
      const clone = () =>
        t.app.inject({
          method: 'POST',
          url: '/v2/voices',
          headers: { ...k2.headers, 'content-type': 'application/json' },
          payload: '{}',
        });
      const answers = [];
      for (let i = 0; i < 11; i++) answers.push(await clone());
      if (Math.floor(Date.now() / 3_600_000) !== hour) continue;
      for (const a of answers.slice(0, 10)) assert.equal(a.statusCode, 400, a.body);
      assert.equal(answers[0].headers['x-ratelimit-limit'], '10');
      assertRateLimited(answers[10], 3_600_000);
      break;
    }
    await waitForFreshWindow();
    const tts = await post('/v2/tts');
    const jobs = await post('/v2/tts/jobs');
    assert.equal(tts.headers['x-ratelimit-limit'], '60');
    assert.equal(tts.headers['x-ratelimit-remaining'], '59');
    assert.equal(jobs.headers['x-ratelimit-limit'], '60');
    assert.equal(jobs.headers['x-ratelimit-remaining'], '59');
    assert.equal((await post('/v2/tts')).headers['x-ratelimit-remaining'], '58');
  });
});

describe(`rate limits switched off (${process.env.TEST_DATABASE ?? 'sqlite'})`, () => {
  let t: TestServices;
  before(async () => {
    t = await createTestServices({
      env: { LIPSYNC_RATE_LIMIT_PER_MINUTE: '1', LIPSYNC_RATE_LIMIT_ENABLED: 'false' },
    });
  });
  after(() => t.cleanup());

  test('LIPSYNC_RATE_LIMIT_ENABLED=false never refuses and sends no rate headers', async () => {
    const org = await createOrgWithKey(t.services);
    for (let i = 0; i < 5; i++) {
      const res = await t.app.inject({ method: 'GET', url: '/v2/projects', headers: org.owner.headers });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['x-ratelimit-limit'], undefined);
    }
  });
});
