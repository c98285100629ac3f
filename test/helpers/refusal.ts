// The catalogue error a pure rule throws, for the unit tests of src/domain.
import assert from 'node:assert/strict';
import { AppError } from '../../src/domain/errors.js';

/** The AppError `fn` throws (fails the test if it returns or throws anything else). */
export function refusal(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof AppError, String(err));
    return err;
  }
  assert.fail('expected a refusal');
}

/** The same, as the code, field and status a test compares in one deepEqual. */
export function refusalOf(fn: () => unknown): { code: string; field: string | undefined; status: number } {
  const err = refusal(fn);
  return { code: err.code, field: err.extras.field, status: err.status };
}
