import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../../src/domain/errors.js';
import { DEFAULT_PRICES, estimateCost, priceOf, type PriceTable } from '../../../src/domain/pricing.js';

const PROTOTYPE_NAMES = [
  'constructor',
  '__proto__',
  'toString',
  'valueOf',
  'hasOwnProperty',
  'isPrototypeOf',
  '__defineGetter__',
];

describe('pricing: only own keys of the price table are models', () => {
  test('names inherited from Object.prototype have no price', () => {
    for (const name of PROTOTYPE_NAMES) assert.equal(priceOf(DEFAULT_PRICES, name), null, name);
    assert.deepEqual(priceOf(DEFAULT_PRICES, 'lipsync-2'), DEFAULT_PRICES['lipsync-2']);
  });

  test('estimateCost refuses them with 400 unsupported_model on field model', () => {
    for (const model of [...PROTOTYPE_NAMES, 'lipsync-9']) {
      assert.throws(
        () => estimateCost(DEFAULT_PRICES, { model, duration: 10 }, 'usd'),
        (err: unknown) =>
          err instanceof AppError &&
          err.code === 'unsupported_model' &&
          err.status === 400 &&
          err.extras.field === 'model',
        model,
      );
    }
  });

  test('a table parsed from JSON with a "__proto__" key does not make the prototype a model', () => {
    const parsed = JSON.parse('{"__proto__": {"perSecond": 1}, "m": {"perSecond": 0.5}}') as PriceTable;
    const table: PriceTable = { ...DEFAULT_PRICES, m: parsed.m };
    assert.equal(priceOf(table, '__proto__'), null);
    assert.equal(estimateCost(table, { model: 'm', duration: 2 }, 'usd').estimatedGenerationCost, 1);
  });

  test('an own key that is not a price object is no model either', () => {
    const table = { ...DEFAULT_PRICES, broken: null } as unknown as PriceTable;
    assert.equal(priceOf(table, 'broken'), null);
  });
});
