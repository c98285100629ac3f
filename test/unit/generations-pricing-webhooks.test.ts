// Cost estimates (frames, dollars, credits, limits) and webhook signing, verification and backoff.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import fc from 'fast-check';
import { AppError } from '../../src/domain/errors.js';
import {
  DEFAULT_PRICES,
  buildPriceTable,
  MAX_ESTIMATE_FPS,
  MAX_ESTIMATE_SECONDS,
  estimateCost,
  type PriceTable,
} from '../../src/domain/pricing.js';
import { MODELS } from '../../src/domain/models.js';
import {
  isDeliverySuccess,
  isPermanentFailure,
  nextRetryDelayMs,
  signWebhook,
  verifyWebhook,
} from '../../src/domain/webhooks.js';

describe('estimateCost', () => {
  test('every model has a price', () => {
    for (const m of MODELS) assert.ok(DEFAULT_PRICES[m.id], m.id);
  });

  test('frames are duration x fps rounded up; fps defaults to 30', () => {
    const e = estimateCost(DEFAULT_PRICES, { model: 'lipsync-2', duration: 10 }, 'usd');
    assert.deepEqual(e, {
      model: 'lipsync-2',
      duration: 10,
      fps: 30,
      estimatedFrameCount: 300,
      estimatedGenerationCost: 0.5,
      estimatedCredits: null,
    });
    assert.equal(
      estimateCost(DEFAULT_PRICES, { model: 'lipsync-2', duration: 1.01, fps: 25 }, 'usd')
        .estimatedFrameCount,
      26,
    );
    // 2.5 x 24 = 60 exactly, even though 2.5 * 24 in floating point may land a hair above
    assert.equal(
      estimateCost(DEFAULT_PRICES, { model: 'lipsync-2', duration: 2.5, fps: 24 }, 'usd').estimatedFrameCount,
      60,
    );
    assert.equal(
      estimateCost(DEFAULT_PRICES, { model: 'lipsync-2', duration: 0.1, fps: 29.97 }, 'usd')
        .estimatedFrameCount,
      3,
    );
  });

  test('credits only for credit-billed organizations', () => {
    const usd = estimateCost(DEFAULT_PRICES, { model: 'lipsync-1.6.0', duration: 12.5, fps: 25 }, 'usd');
    const credits = estimateCost(
      DEFAULT_PRICES,
      { model: 'lipsync-1.6.0', duration: 12.5, fps: 25 },
      'credits',
    );
    assert.equal(usd.estimatedCredits, null);
    assert.equal(credits.estimatedCredits, 50);
    assert.equal(usd.estimatedGenerationCost, 0.5);
    assert.equal(credits.estimatedGenerationCost, 0.5);
    // credits are rounded up to cents of a credit
    assert.equal(
      estimateCost(DEFAULT_PRICES, { model: 'lipsync-2-pro', duration: 1.001 }, 'credits').estimatedCredits,
      8.34,
    );
  });

  test('per-frame prices charge frames', () => {
    const table: PriceTable = { 'lipsync-2': { perFrame: 0.002, creditsPerSecond: 1 } };
    const e = estimateCost(table, { model: 'lipsync-2', duration: 1.01, fps: 25 }, 'usd');
    assert.equal(e.estimatedFrameCount, 26);
    assert.equal(e.estimatedGenerationCost, 0.052);
  });

  test('cost grows with duration and is never negative', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...MODELS.map((m) => m.id)),
        fc.double({ min: 0.01, max: MAX_ESTIMATE_SECONDS / 2, noNaN: true }),
        fc.double({ min: 1, max: MAX_ESTIMATE_FPS, noNaN: true }),
        (model, duration, fps) => {
          const a = estimateCost(DEFAULT_PRICES, { model, duration, fps }, 'credits');
          const b = estimateCost(DEFAULT_PRICES, { model, duration: duration * 2, fps }, 'credits');
          assert.ok(a.estimatedGenerationCost >= 0 && (a.estimatedCredits ?? -1) >= 0);
          assert.ok(b.estimatedGenerationCost >= a.estimatedGenerationCost);
          assert.ok((b.estimatedCredits ?? 0) >= (a.estimatedCredits ?? 0));
          assert.ok(
            a.estimatedFrameCount >= duration * fps - 1e-6 && a.estimatedFrameCount < duration * fps + 1,
          );
        },
      ),
    );
  });

  test('a model whose table entry has no price is refused, never billed 0', () => {
    const table: PriceTable = { 'lipsync-2': { creditsPerSecond: 1 }, 'sync-3': { perSecond: 0.1 } };
    assert.throws(() => estimateCost(table, { model: 'lipsync-2', duration: 1 }, 'usd'), /no perSecond/);
    assert.throws(
      () => estimateCost(table, { model: 'sync-3', duration: 1 }, 'credits'),
      /no creditsPerSecond/,
    );
    assert.equal(estimateCost(table, { model: 'sync-3', duration: 1 }, 'usd').estimatedGenerationCost, 0.1);
  });

  test('billing limits: 422 cost_estimate_unavailable beyond them, accepted at them', () => {
    assert.ok(
      estimateCost(
        DEFAULT_PRICES,
        { model: 'lipsync-2', duration: MAX_ESTIMATE_SECONDS, fps: MAX_ESTIMATE_FPS },
        'usd',
      ),
    );
    for (const input of [
      { model: 'lipsync-2', duration: MAX_ESTIMATE_SECONDS + 1 },
      { model: 'lipsync-2', duration: 10, fps: MAX_ESTIMATE_FPS + 1 },
      { model: 'lipsync-2', duration: 1e12, fps: 1e6 },
    ]) {
      assert.throws(
        () => estimateCost(DEFAULT_PRICES, input, 'usd'),
        (e: unknown) => e instanceof AppError && e.code === 'cost_estimate_unavailable' && e.status === 422,
      );
    }
    assert.throws(
      () => estimateCost(DEFAULT_PRICES, { model: 'lipsync-9', duration: 1 }, 'usd'),
      (e: unknown) => e instanceof AppError && e.code === 'unsupported_model' && e.extras.field === 'model',
    );
  });
});

describe('webhook signatures', () => {
  const secret = 'whsec_test_0123456789';
  const body = JSON.stringify({ id: 'g1', status: 'COMPLETED' });

  test('t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">', () => {
    const header = signWebhook(secret, body, 1_700_000_000);
    const expected = createHmac('sha256', secret).update(`1700000000.${body}`).digest('hex');
    assert.equal(header, `t=1700000000,v1=${expected}`);
    assert.match(header, /^t=\d+,v1=[0-9a-f]{64}$/);
  });

  test('verification accepts the signed body and refuses any change', () => {
    const t = 1_700_000_000;
    const header = signWebhook(secret, body, t);
    assert.equal(verifyWebhook(secret, body, header, t), true);
    assert.equal(verifyWebhook(secret, body, header, t + 299), true);
    assert.equal(verifyWebhook(secret, body + ' ', header, t), false);
    assert.equal(verifyWebhook('other-secret', body, header, t), false);
    assert.equal(verifyWebhook(secret, body, header, t + 301), false, 'too old');
    assert.equal(verifyWebhook(secret, body, header, t - 301), false, 'from the future');
    assert.equal(verifyWebhook(secret, body, header.replace(/v1=../, 'v1=00'), t), false);
    assert.equal(verifyWebhook(secret, body, `t=${t + 1},${header.split(',')[1]}`, t), false, 'moved t');
    for (const junk of [
      '',
      'garbage',
      `t=${t}`,
      `v1=${'0'.repeat(64)}`,
      `t=abc,v1=${'0'.repeat(64)}`,
      `t=${t},v1=zz`,
    ]) {
      assert.equal(verifyWebhook(secret, body, junk, t), false, junk);
    }
  });

  test('sign then verify holds for any secret, body and time', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }),
        fc.string(),
        fc.integer({ min: 0, max: 4_000_000_000 }),
        (s, b, t) => {
          assert.equal(verifyWebhook(s, b, signWebhook(s, b, t), t), true);
        },
      ),
    );
  });
});

describe('webhook retries', () => {
  test('exponential from about one second, with jitter in [base/2, base], capped at one hour', () => {
    assert.equal(
      nextRetryDelayMs(0, () => 1),
      1000,
    );
    assert.equal(
      nextRetryDelayMs(0, () => 0),
      500,
    );
    assert.equal(
      nextRetryDelayMs(1, () => 1),
      2000,
    );
    assert.equal(
      nextRetryDelayMs(3, () => 0.5),
      6000,
    );
    assert.equal(
      nextRetryDelayMs(40, () => 1),
      3600_000,
    );
    assert.equal(
      nextRetryDelayMs(-3, () => 1),
      1000,
    );
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 200 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        (n, r) => {
          const base = Math.min(3600_000, 1000 * 2 ** n);
          const d = nextRetryDelayMs(n, () => r);
          assert.ok(d >= base / 2 && d <= base, `${n}: ${d}`);
          assert.ok(nextRetryDelayMs(n + 1, () => r) >= d);
        },
      ),
    );
    // the default random source stays within the bounds too
    for (let n = 0; n < 20; n++) {
      const d = nextRetryDelayMs(n);
      const base = Math.min(3600_000, 1000 * 2 ** n);
      assert.ok(d >= base / 2 && d <= base);
    }
  });

  test('which answers end a delivery', () => {
    for (const s of [200, 201, 204, 299]) assert.equal(isDeliverySuccess(s), true, String(s));
    for (const s of [100, 199, 300, 301, 400, 500]) assert.equal(isDeliverySuccess(s), false, String(s));
    for (const s of [400, 401, 403, 404, 410, 422]) assert.equal(isPermanentFailure(s), true, String(s));
    for (const s of [200, 302, 408, 409, 425, 429, 500, 502, 503])
      assert.equal(isPermanentFailure(s), false, String(s));
  });
});

describe('buildPriceTable', () => {
  const served = MODELS.map((m) => m.id);

  test('no pricing file: the built-in table, no problems', () => {
    const { prices, problems } = buildPriceTable({}, served);
    assert.deepEqual(problems, []);
    assert.deepEqual(prices, DEFAULT_PRICES);
  });

  test("a file's entry is laid over the built-in one field by field", () => {
    const { prices, problems } = buildPriceTable(
      { 'sync-3': { perFrame: 0.004 }, 'my-model': { perSecond: 1 } },
      served,
    );
    assert.deepEqual(problems, []);
    assert.deepEqual(prices['sync-3'], { perSecond: 0.1, creditsPerSecond: 10, perFrame: 0.004 });
    assert.deepEqual(prices['lipsync-2'], DEFAULT_PRICES['lipsync-2']);
    assert.deepEqual(prices['my-model'], { perSecond: 1 });
  });

  test('a served model without a dollar or credit price is a problem', () => {
    const { problems } = buildPriceTable({}, [...served, 'lipsync-3']);
    assert.deepEqual(problems, ['model "lipsync-3" is served but has no price']);
  });

  test('prices that are not numbers ≥ 0, unknown fields and non-objects are problems', () => {
    const { problems } = buildPriceTable(
      {
        'lipsync-2': { perSecond: -1 },
        'sync-3': { perSecond: '0.1' },
        'lipsync-1.6.0': null,
        x: { perMinute: 1 },
      },
      served,
    );
    assert.deepEqual(problems, [
      '"lipsync-2".perSecond must be a number ≥ 0',
      '"sync-3".perSecond must be a number ≥ 0',
      'the price of "lipsync-1.6.0" must be an object',
      'the price of "x" has an unknown field "perMinute"',
    ]);
    assert.deepEqual(buildPriceTable([], served).problems, [
      'the pricing file must hold a JSON object of model → price',
    ]);
  });

  test('an explicit 0 is a price', () => {
    const { problems } = buildPriceTable({ 'lipsync-2': { perSecond: 0, creditsPerSecond: 0 } }, served);
    assert.deepEqual(problems, []);
  });
});
