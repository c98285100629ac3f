// Idempotency-Key rules: header syntax, canonical JSON fingerprints, and what a bound key answers.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import fc from 'fast-check';
import { AppError } from '../../src/domain/errors.js';
import {
  IDEMPOTENCY_STALE_MS,
  IDEMPOTENCY_PENDING_EXPIRY_MS,
  canonicalJson,
  decideReplay,
  fingerprint,
  parseIdempotencyKey,
  type IdempotencyRecord,
} from '../../src/domain/idempotency.js';

const KEY_CHARS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._~-';

describe('Idempotency-Key header', () => {
  test('absent is null; valid keys are returned unchanged', () => {
    assert.equal(parseIdempotencyKey(undefined), null);
    for (const k of ['a', 'order-42', 'A.b_c~d-e', '0', 'x'.repeat(128), KEY_CHARS]) {
      assert.equal(parseIdempotencyKey(k), k);
    }
  });

  test('any string of 1-128 allowed characters is accepted', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom(...KEY_CHARS.split('')), minLength: 1, maxLength: 128 }),
        (k) => parseIdempotencyKey(k) === k,
      ),
    );
  });

  test('malformed, too long, empty or repeated headers are 400 on field Idempotency-Key', () => {
    const bad: (string | string[])[] = [
      '',
      'x'.repeat(129),
      'has space',
      'comma,joined',
      'a, b',
      'ключ',
      'tab\there',
      'slash/key',
      'quote"',
      ['a', 'b'],
      ['only-one-but-array'],
    ];
    for (const h of bad) {
      assert.throws(
        () => parseIdempotencyKey(h),
        (err: unknown) =>
          err instanceof AppError &&
          err.code === 'invalid_request' &&
          err.status === 400 &&
          err.extras.field === 'Idempotency-Key',
        JSON.stringify(h),
      );
    }
  });

  test('any string with a character outside the allowed set is refused', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 60 }),
        fc.string({ minLength: 1, maxLength: 3 }).filter((s) => [...s].some((c) => !KEY_CHARS.includes(c))),
        fc.string({ maxLength: 60 }),
        (a, bad, b) => {
          assert.throws(() => parseIdempotencyKey(a + bad + b), AppError);
        },
      ),
    );
  });
});

/** A deterministic shuffle of every object's keys, at every level (mulberry32 from a seed). */
function shuffleKeys(value: unknown, seed: number): unknown {
  let s = seed >>> 0;
  const rand = () => {
    s = (s + 0x6d2b79f5) >>> 0;
    let t = s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v === null || typeof v !== 'object') return v;
    const entries = Object.entries(v as Record<string, unknown>);
    for (let i = entries.length - 1; i > 0; i--) {
      const j = Math.floor(rand() * (i + 1));
      [entries[i], entries[j]] = [entries[j], entries[i]];
    }
    // Object.fromEntries keeps insertion order for non-integer keys (integer-like keys sort anyway).
    return Object.fromEntries(entries.map(([k, x]) => [k, walk(x)]));
  };
  return walk(value);
}

const roundTrip = (v: unknown): unknown => JSON.parse(JSON.stringify(v));

describe('canonical JSON and fingerprints', () => {
  test('key order never changes the canonical form or the fingerprint', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.integer(), (v, seed) => {
        const shuffled = shuffleKeys(v, seed);
        assert.equal(canonicalJson(shuffled), canonicalJson(v));
        assert.equal(fingerprint(shuffled), fingerprint(v));
      }),
      { numRuns: 300 },
    );
  });

  test('the canonical form is valid JSON of the same value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (v) => {
        assert.deepStrictEqual(JSON.parse(canonicalJson(v)), roundTrip(v));
      }),
    );
  });

  test('different values have different canonical forms', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
        const same = isDeepStrictEqual(roundTrip(a), roundTrip(b));
        assert.equal(canonicalJson(a) === canonicalJson(b), same);
      }),
      { numRuns: 300 },
    );
  });

  test('a typical request: nested key order is irrelevant, values are not', () => {
    const a = {
      model: 'lipsync-2',
      input: [
        { type: 'video', url: 'https://x.example/v.mp4' },
        { type: 'audio', assetId: 'a1' },
      ],
      options: { sync_mode: 'loop', output_format: 'mp4' },
    };
    const b = {
      options: { output_format: 'mp4', sync_mode: 'loop' },
      input: [
        { url: 'https://x.example/v.mp4', type: 'video' },
        { assetId: 'a1', type: 'audio' },
      ],
      model: 'lipsync-2',
    };
    assert.equal(fingerprint(a), fingerprint(b));
    assert.equal(
      canonicalJson(a),
      '{"input":[{"type":"video","url":"https://x.example/v.mp4"},{"assetId":"a1","type":"audio"}],' +
        '"model":"lipsync-2","options":{"output_format":"mp4","sync_mode":"loop"}}',
    );
    assert.equal(fingerprint(a), createHash('sha256').update(canonicalJson(a)).digest('hex'));
    // array order is meaningful
    assert.notEqual(fingerprint(a), fingerprint({ ...a, input: [...a.input].reverse() }));
    assert.notEqual(fingerprint(a), fingerprint({ ...a, options: { ...a.options, sync_mode: 'bounce' } }));
    // undefined members are left out, as JSON.stringify does
    assert.equal(canonicalJson({ x: 1, y: undefined }), '{"x":1}');
    assert.equal(canonicalJson([1, undefined]), '[1,null]');
  });
});

describe('decideReplay', () => {
  const now = Date.parse('2026-03-01T12:00:00.000Z');
  const rec = (over: Partial<IdempotencyRecord>): IdempotencyRecord => ({
    organizationId: 'org',
    scope: 'generate',
    key: 'k',
    fingerprint: 'fp',
    state: 'done',
    resourceId: 'gen-1',
    createdAt: new Date(now - 1000).toISOString(),
    expiresAt: new Date(now + 7 * 86400_000).toISOString(),
    ...over,
  });
  const ago = (ms: number) => new Date(now - ms).toISOString();

  test('the spec rows', () => {
    // same key, same payload, finished: replay the original
    assert.deepEqual(decideReplay(rec({}), 'fp', now), { kind: 'replay', resourceId: 'gen-1' });
    // same key, other payload: conflict, whatever the state
    assert.deepEqual(decideReplay(rec({}), 'other', now), { kind: 'conflict' });
    assert.deepEqual(decideReplay(rec({ state: 'pending', resourceId: null }), 'other', now), {
      kind: 'conflict',
    });
    assert.deepEqual(
      decideReplay(
        rec({ state: 'pending', resourceId: null, createdAt: ago(IDEMPOTENCY_STALE_MS * 10) }),
        'x',
        now,
      ),
      { kind: 'conflict' },
    );
    // the original is still being prepared
    assert.deepEqual(decideReplay(rec({ state: 'pending', resourceId: null }), 'fp', now), {
      kind: 'in_progress',
    });
    // a claim that stayed pending too long: the outcome must be reconciled
    assert.deepEqual(
      decideReplay(
        rec({ state: 'pending', resourceId: null, createdAt: ago(IDEMPOTENCY_STALE_MS + 1) }),
        'fp',
        now,
      ),
      { kind: 'outcome_unknown', resourceId: null },
    );
    assert.deepEqual(
      decideReplay(
        rec({ state: 'pending', resourceId: 'gen-9', createdAt: ago(IDEMPOTENCY_STALE_MS + 1) }),
        'fp',
        now,
      ),
      { kind: 'outcome_unknown', resourceId: 'gen-9' },
    );
  });

  test('staleness starts exactly at IDEMPOTENCY_STALE_MS', () => {
    const pending = (age: number) => rec({ state: 'pending', resourceId: null, createdAt: ago(age) });
    assert.equal(decideReplay(pending(IDEMPOTENCY_STALE_MS - 1), 'fp', now).kind, 'in_progress');
    assert.equal(decideReplay(pending(IDEMPOTENCY_STALE_MS), 'fp', now).kind, 'outcome_unknown');
  });

  test('a dead claim expires: after IDEMPOTENCY_PENDING_EXPIRY_MS it no longer answers outcome unknown', () => {
    const pending = (age: number, resourceId: string | null = null) =>
      rec({ state: 'pending', resourceId, createdAt: ago(age) });
    assert.equal(decideReplay(pending(IDEMPOTENCY_PENDING_EXPIRY_MS - 1), 'fp', now).kind, 'outcome_unknown');
    assert.deepEqual(decideReplay(pending(IDEMPOTENCY_PENDING_EXPIRY_MS, 'gen-3'), 'fp', now), {
      kind: 'expired',
      resourceId: 'gen-3',
    });
    // another payload under the key is still a conflict, however old the claim
    assert.equal(decideReplay(pending(IDEMPOTENCY_PENDING_EXPIRY_MS * 5), 'other', now).kind, 'conflict');
  });

  test('a finished key replays however old it is', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 30 * 86400_000 }), (age) => {
        assert.deepEqual(decideReplay(rec({ createdAt: ago(age) }), 'fp', now), {
          kind: 'replay',
          resourceId: 'gen-1',
        });
      }),
    );
  });
});
