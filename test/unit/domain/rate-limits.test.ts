import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  TABLED_RATE_RULES,
  decide,
  ruleFor,
  windowStart,
  type RateRule,
} from '../../../src/domain/rate-limits.js';

const MINUTE = 60_000;

describe('rate rules', () => {
  test('the spec table: tts, tts jobs, voices and asset uploads', () => {
    assert.deepEqual(ruleFor('POST', '/v2/tts', 600), { bucket: 'tts', max: 60, windowMs: MINUTE });
    assert.deepEqual(ruleFor('POST', '/v2/tts/jobs', 600), { bucket: 'tts_jobs', max: 60, windowMs: MINUTE });
    assert.deepEqual(ruleFor('POST', '/v2/voices', 600), {
      bucket: 'voices_create',
      max: 10,
      windowMs: 60 * MINUTE,
    });
    assert.deepEqual(ruleFor('POST', '/v2/assets/upload', 600), {
      bucket: 'assets_upload',
      max: 120,
      windowMs: MINUTE,
    });
  });

  test('tabled endpoints are counted apart from each other and from everything else', () => {
    // One counter per row of the spec's table: the sign-in row names several paths.
    const rules = new Set(Object.values(TABLED_RATE_RULES));
    const buckets = [...rules].map((r) => r.bucket);
    assert.equal(new Set(buckets).size, buckets.length);
    for (const path of ['/api/auth/sign-up/*', '/api/auth/otp/*', '/api/auth/email-otp/*'])
      assert.equal(ruleFor('POST', path, 5), ruleFor('POST', '/api/auth/sign-in/*', 5));
    assert.deepEqual(ruleFor('POST', '/api/auth/sign-in/*', 5), {
      bucket: 'auth_sign_in',
      max: 10,
      windowMs: MINUTE,
    });
    assert.equal(ruleFor('GET', '/api/auth/session', 5).max, 60);
    assert.ok(!buckets.includes('default'));
    assert.notEqual(ruleFor('POST', '/v2/tts', 5).bucket, ruleFor('POST', '/v2/tts/jobs', 5).bucket);
  });

  test('other endpoints, and other methods on tabled paths, get the configured default', () => {
    for (const [m, u] of [
      ['GET', '/v2/projects'],
      ['GET', '/v2/tts/jobs/:id'],
      ['GET', '/v2/voices'],
      ['GET', '/v2/assets/upload'],
      ['POST', '/v2/generate'],
    ]) {
      assert.deepEqual(ruleFor(m, u, 7), { bucket: 'default', max: 7, windowMs: MINUTE }, `${m} ${u}`);
    }
  });
});

describe('fixed windows', () => {
  test('a window starts at a multiple of its length, at or before now', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 45 }),
        fc.constantFrom(1000, MINUTE, 3_600_000),
        (now, w) => {
          const s = windowStart(now, w);
          assert.equal(s % w, 0);
          assert.ok(s <= now && now < s + w);
        },
      ),
    );
  });

  test('instants in the same window share it; the next window starts right after', () => {
    const s = windowStart(1_700_000_000_000, MINUTE);
    assert.equal(windowStart(s, MINUTE), s);
    assert.equal(windowStart(s + MINUTE - 1, MINUTE), s);
    assert.equal(windowStart(s + MINUTE, MINUTE), s + MINUTE);
  });
});

describe('decide', () => {
  const rule: RateRule = { bucket: 'default', max: 3, windowMs: MINUTE };
  const now = Date.UTC(2030, 0, 1, 12, 0, 20, 500); // 39.5 s left in the minute

  test('counts up to the limit pass; the next is refused', () => {
    assert.equal(decide(1, rule, now).allowed, true);
    assert.equal(decide(3, rule, now).allowed, true);
    assert.equal(decide(4, rule, now).allowed, false);
    assert.deepEqual(
      [1, 2, 3, 4, 5].map((c) => decide(c, rule, now).remaining),
      [2, 1, 0, 0, 0],
    );
  });

  test('reset is the end of the window and retryAfter the whole seconds until then', () => {
    const d = decide(4, rule, now);
    assert.equal(d.limit, 3);
    assert.equal(d.resetAtMs, Date.UTC(2030, 0, 1, 12, 1, 0, 0));
    assert.equal(d.retryAfterSeconds, 40);
  });

  test('for any count and instant the decision is consistent', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 1000 }),
        fc.integer({ min: 0, max: 2 ** 45 }),
        fc.constantFrom(1000, MINUTE, 3_600_000),
        (count, max, t, windowMs) => {
          const r: RateRule = { bucket: 'b', max, windowMs };
          const d = decide(count, r, t);
          assert.equal(d.allowed, count <= max);
          assert.equal(d.remaining, Math.max(0, max - count));
          assert.ok(d.resetAtMs > t && d.resetAtMs <= t + windowMs);
          assert.ok(d.retryAfterSeconds >= 1 && d.retryAfterSeconds <= Math.ceil(windowMs / 1000));
          assert.ok(t + d.retryAfterSeconds * 1000 >= d.resetAtMs);
        },
      ),
    );
  });
});
