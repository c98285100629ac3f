import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { MemoryRateLimiter } from '../../../src/services/rate-limiter.js';
import type { RateRule } from '../../../src/domain/rate-limits.js';

const rule: RateRule = { bucket: 'default', max: 2, windowMs: 60_000 };
const t0 = Date.UTC(2030, 0, 1, 0, 0, 5);

describe('in-memory rate limiter', () => {
  test('counts per identity within a window', async () => {
    const rl = new MemoryRateLimiter();
    assert.deepEqual(
      [
        await rl.hit(rule, 'key:a', t0),
        await rl.hit(rule, 'key:a', t0 + 1),
        await rl.hit(rule, 'key:a', t0 + 2),
      ].map((d) => [d.allowed, d.remaining]),
      [
        [true, 1],
        [true, 0],
        [false, 0],
      ],
    );
    assert.equal((await rl.hit(rule, 'key:b', t0)).allowed, true);
  });

  test('buckets are counted apart', async () => {
    const rl = new MemoryRateLimiter();
    await rl.hit(rule, 'ip:1', t0);
    await rl.hit(rule, 'ip:1', t0);
    assert.equal((await rl.hit(rule, 'ip:1', t0)).allowed, false);
    assert.equal((await rl.hit({ ...rule, bucket: 'assets_upload' }, 'ip:1', t0)).allowed, true);
  });

  test('a new window starts from zero', async () => {
    const rl = new MemoryRateLimiter();
    for (let i = 0; i < 3; i++) await rl.hit(rule, 'key:a', t0);
    const next = await rl.hit(rule, 'key:a', t0 + 60_000);
    assert.equal(next.allowed, true);
    assert.equal(next.remaining, 1);
  });

  test('old windows are swept, live ones kept', async () => {
    const rl = new MemoryRateLimiter();
    await rl.hit(rule, 'key:old', t0);
    for (let i = 0; i < 1000; i++) await rl.hit(rule, `key:${i}`, t0 + 120_000);
    const counters = (rl as unknown as { counters: Map<string, unknown> }).counters;
    assert.ok(![...counters.keys()].some((k) => k.includes('key:old')));
    assert.equal((await rl.hit(rule, 'key:5', t0 + 120_000)).remaining, 0);
  });
});
