// With REDIS_URL set, rate-limit counters live in Redis and are shared by every API instance.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import {
  assertRateLimited,
  createKey,
  createOrgWithKey,
  createTestServices,
  redisClient,
  redisProblem,
  testRedisUrl,
  waitForFreshWindow,
  type TestKey,
  type TestOrg,
  type TestServices,
} from '../helpers/index.js';

describe(`rate limits shared through Redis (${process.env.TEST_DATABASE ?? 'sqlite'})`, () => {
  let a: TestServices;
  let b: TestServices;
  let org: TestOrg;
  const identities: string[] = [];
  let skip: string | null = null;

  before(async () => {
    const problem = await redisProblem();
    if (problem) {
      if (process.env.LIPSYNC_TEST_SKIP_REDIS === '1') {
        skip = `Redis at ${testRedisUrl()} is not reachable (${problem}); skipped by LIPSYNC_TEST_SKIP_REDIS=1`;
        return;
      }
      throw new Error(
        `Redis at ${testRedisUrl()} is not reachable: ${problem}. Start Redis, set TEST_REDIS_URL, ` +
          'or set LIPSYNC_TEST_SKIP_REDIS=1 to skip these tests.',
      );
    }
    const env = { LIPSYNC_RATE_LIMIT_PER_MINUTE: '3', REDIS_URL: testRedisUrl() };
    a = await createTestServices({ env });
    b = await createTestServices({ env, shareDatabaseWith: a });
    org = await createOrgWithKey(a.services);
  });

  after(async () => {
    if (skip) return;
    // Remove only the counters these tests made.
    const r = redisClient();
    try {
      await r.connect();
      for (const id of identities) {
        const keys = await r.keys(`lipsync:rl:*:${id}:*`);
        if (keys.length > 0) await r.del(...keys);
      }
    } finally {
      r.disconnect();
    }
    await b?.cleanup();
    await a?.cleanup();
  });

  const get = (t: TestServices, key: TestKey | null, ip: string, url = '/v2/projects') =>
    t.app.inject({ method: 'GET', url, headers: key ? key.headers : {}, remoteAddress: ip });

  test('two app instances count one key together', async (ctx) => {
    if (skip) return ctx.skip(skip);
    await waitForFreshWindow();
    const k = await createKey(a.services, org.organization.id);
    identities.push(`key:${k.record.id}`);
    assert.equal((await get(a, k, '192.0.2.1')).statusCode, 200);
    const second = await get(b, k, '192.0.2.2');
    assert.equal(second.statusCode, 200);
    assert.equal(second.headers['x-ratelimit-remaining'], '1');
    assert.equal((await get(a, k, '192.0.2.3')).statusCode, 200);
    assertRateLimited(await get(b, k, '192.0.2.4'));
    assertRateLimited(await get(a, k, '192.0.2.5'));
  });

  test('other keys keep their own count', async (ctx) => {
    if (skip) return ctx.skip(skip);
    await waitForFreshWindow();
    const k1 = await createKey(a.services, org.organization.id);
    const k2 = await createKey(b.services, org.organization.id);
    identities.push(`key:${k1.record.id}`, `key:${k2.record.id}`);
    for (const t of [a, b, a]) assert.equal((await get(t, k1, '192.0.2.9')).statusCode, 200);
    assertRateLimited(await get(b, k1, '192.0.2.9'));
    const other = await get(b, k2, '192.0.2.9');
    assert.equal(other.statusCode, 200);
    assert.equal(other.headers['x-ratelimit-remaining'], '2');
  });

  test('requests without a key are counted per IP across instances', async (ctx) => {
    if (skip) return ctx.skip(skip);
    await waitForFreshWindow();
    // Random documentation-range addresses, so runs never share a counter.
    const ip = `198.18.${randomInt(0, 255)}.${randomInt(1, 254)}`;
    const ip2 = `198.19.${randomInt(0, 255)}.${randomInt(1, 254)}`;
    identities.push(`ip:${ip}`, `ip:${ip2}`);
    for (const t of [a, b, b]) assert.equal((await get(t, null, ip, '/v2/errors')).statusCode, 200);
    assertRateLimited(await get(a, null, ip, '/v2/errors'));
    assert.equal((await get(a, null, ip2, '/v2/errors')).statusCode, 200);
  });

  test("the counter is in Redis under the key's identity", async (ctx) => {
    if (skip) return ctx.skip(skip);
    await waitForFreshWindow();
    const k = await createKey(a.services, org.organization.id);
    identities.push(`key:${k.record.id}`);
    await get(a, k, '192.0.2.1');
    await get(b, k, '192.0.2.1');
    const r = redisClient();
    try {
      await r.connect();
      const keys = await r.keys(`lipsync:rl:*:key:${k.record.id}:*`);
      assert.equal(keys.length, 1);
      assert.equal(await r.get(keys[0]), '2');
      const ttl = await r.pttl(keys[0]);
      assert.ok(ttl > 0 && ttl <= 61_000, `ttl ${ttl}`);
    } finally {
      r.disconnect();
    }
  });
});
