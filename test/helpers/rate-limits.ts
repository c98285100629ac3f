import assert from 'node:assert/strict';

// Fixed rate-limit windows are aligned to the epoch; a test that counts requests must not straddle a
// window boundary, so it starts early in a window.
export async function waitForFreshWindow(windowMs = 60_000, neededMs = 10_000): Promise<void> {
  const left = windowMs - (Date.now() % windowMs);
  if (left < neededMs) await new Promise((r) => setTimeout(r, left + 50));
}

/** The spec's 429 body (statusCode, errorCode, error, retryAfter, resetTime) and a Retry-After header. */
export function assertRateLimited(
  res: {
    statusCode: number;
    headers: Record<string, unknown>;
    json(): any;
  },
  windowMs = 60_000,
): void {
  assert.equal(res.statusCode, 429);
  const body = res.json();
  assert.equal(body.statusCode, 429);
  assert.equal(body.errorCode, 'rate_limit_exceeded');
  assert.equal(body.error, 'Too Many Requests');
  assert.equal(typeof body.message, 'string');
  assert.ok(
    Number.isInteger(body.retryAfter) && body.retryAfter >= 1 && body.retryAfter <= windowMs / 1000,
    `retryAfter ${body.retryAfter}`,
  );
  const reset = Date.parse(body.resetTime);
  assert.ok(!Number.isNaN(reset), `resetTime ${body.resetTime}`);
  assert.equal(new Date(reset).toISOString(), body.resetTime);
  assert.equal(reset % windowMs, 0, 'the window ends on a whole window (minute, hour)');
  const secondsLeft = (reset - Date.now()) / 1000;
  assert.ok(
    Math.abs(secondsLeft - body.retryAfter) <= 2,
    `retryAfter ${body.retryAfter} vs ${secondsLeft}s to reset`,
  );
  assert.equal(res.headers['retry-after'], String(body.retryAfter));
}
