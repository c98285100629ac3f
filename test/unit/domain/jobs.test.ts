// Pure rules of the job system: retry delays and decisions, and the plan's work budget.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { decideRetry, retryDelayMs, RETRY_BASE_MS, RETRY_MAX_MS } from '../../../src/domain/jobs.js';
import { checkWorkBudget, PLAN_LIMITS, PLANS } from '../../../src/domain/plans.js';
import { AppError } from '../../../src/domain/errors.js';

test('retry delays double per attempt from the base, are capped, and lose at most a quarter to jitter', () => {
  assert.equal(retryDelayMs(1, 0), RETRY_BASE_MS);
  assert.equal(retryDelayMs(2, 0), RETRY_BASE_MS * 2);
  assert.equal(retryDelayMs(3, 0), RETRY_BASE_MS * 4);
  assert.equal(retryDelayMs(50, 0), RETRY_MAX_MS);
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 60 }), fc.double({ min: 0, max: 1, noNaN: true }), (attempt, r) => {
      const d = retryDelayMs(attempt, r);
      const full = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** (attempt - 1));
      return d <= full && d >= Math.floor(full * 0.75) && d > 0;
    }),
  );
});

test('permanent failures and exhausted attempts are not retried; transient ones are, after a delay', () => {
  assert.deepEqual(decideRetry('permanent', 1, 3, 0), { retry: false, delayMs: 0 });
  assert.deepEqual(decideRetry('transient', 3, 3, 0), { retry: false, delayMs: 0 });
  const d = decideRetry('transient', 1, 3, 0.5);
  assert.equal(d.retry, true);
  assert.ok(d.delayMs > 0);
});

test('work budget: a frame larger than the plan allows is refused before anything else is known', () => {
  assert.throws(
    () => checkWorkBudget('free', { width: 7680, height: 7680 }),
    (e: unknown) =>
      e instanceof AppError &&
      e.code === 'generation_plan_work_exceeded' &&
      e.status === 422 &&
      e.extras.details?.limit === 'maxOutputPixels',
  );
  // unknown frame size (taken from the input): nothing to check yet
  checkWorkBudget('free', {});
});

test('work budget: pixels x fps x seconds within the plan passes, beyond it is refused naming the limit', () => {
  for (const plan of PLANS) {
    const l = PLAN_LIMITS[plan];
    // a 1280x720 output at 25 fps for the plan's longest duration fits every plan
    checkWorkBudget(plan, { width: 1280, height: 720, fps: 25, seconds: l.maxDurationSeconds });
    const side = Math.floor(Math.sqrt(l.maxOutputPixels));
    const seconds = (l.maxPixelFrames / (side * side * 120)) * 1.01;
    assert.throws(
      () => checkWorkBudget(plan, { width: side, height: side, fps: 120, seconds }),
      (e: unknown) => e instanceof AppError && e.extras.details?.limit === 'maxPixelFrames',
      plan,
    );
  }
});
