import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { STATUS_CODES } from 'node:http';
import { AppError, ERRORS, catalogue, isAppError, type ErrorCode } from '../../../src/domain/errors.js';

// The codes the spec tables, with the status it gives them.
const SPEC_STATUSES: Record<string, number> = {
  provider_quota_exceeded: 402,
  generation_not_found: 404,
  generation_output_unavailable: 404,
  generation_not_ready: 409,
  generation_not_deletable_while_processing: 409,
  generation_conflict: 409,
  IDEMPOTENCY_KEY_CONFLICT: 409,
  IDEMPOTENCY_IN_PROGRESS: 409,
  generation_input_validation_failed: 413,
  generation_not_downloadable: 422,
  file_size_exceeds_plan_limit: 422,
  cost_estimate_unavailable: 422,
  voice_not_found: 422,
  voice_verification_required: 422,
  voice_blocked: 422,
  voice_access_denied: 400,
  dialogue_edit_retime_required: 422,
  dialogue_edit_unsupported: 422,
  dialogue_edit_removal_too_large: 422,
  generation_input_video_inaccessible: 422,
  generation_plan_duration_exceeded: 422,
  concurrency_limit_reached: 429,
  rate_limit_exceeded: 429,
  internal_error: 500,
  provider_service_unavailable: 503,
  IDEMPOTENCY_OUTCOME_UNKNOWN: 503,
  IDEMPOTENCY_UNAVAILABLE: 503,
  generation_admission_paused: 503,
  generation_admission_unavailable: 503,
  controller_dependency_error: 503,
  generation_infra_service_unavailable: 503,
  generation_download_unavailable: 503,
  controller_timeout: 504,
};
// Named by the spec without a status.
const SPEC_UNTABLED = ['project_not_found', 'asset_forbidden', 'provider_api_key_invalid'];

describe('error catalogue', () => {
  const entries = Object.entries(ERRORS);

  test('every entry is filed under its own code and codes are unique', () => {
    for (const [k, e] of entries) assert.equal(e.code, k);
    const codes = catalogue().map((e) => e.code);
    assert.equal(new Set(codes).size, codes.length);
    assert.equal(codes.length, entries.length);
  });

  test('every status is a client or server error that HTTP knows', () => {
    for (const [k, e] of entries) {
      assert.ok(Number.isInteger(e.status) && e.status >= 400 && e.status <= 599, `${k}: ${e.status}`);
      assert.ok(STATUS_CODES[e.status], `${k}: ${e.status} is not a known HTTP status`);
    }
  });

  test('every message and suggestion is a non-empty sentence', () => {
    for (const [k, e] of entries) {
      assert.ok(e.message.trim().length > 3, `${k} message`);
      assert.ok(e.suggestion.trim().length > 3, `${k} suggestion`);
      assert.equal(e.message, e.message.trim(), `${k} message has outer whitespace`);
      assert.equal(e.suggestion, e.suggestion.trim(), `${k} suggestion has outer whitespace`);
    }
  });

  test('codes are stable identifiers', () => {
    for (const [k] of entries) assert.match(k, /^[A-Za-z][A-Za-z0-9_]*$/);
  });

  test('every code the spec tables is there with the spec status', () => {
    for (const [code, status] of Object.entries(SPEC_STATUSES)) {
      const e = (ERRORS as Record<string, { status: number }>)[code];
      assert.ok(e, `${code} missing`);
      assert.equal(e.status, status, code);
    }
    for (const code of SPEC_UNTABLED) assert.ok(code in ERRORS, `${code} missing`);
  });

  test('catalogue() serves every entry with code, message and suggestion', () => {
    const served = catalogue();
    assert.deepEqual(served.map((e) => e.code).sort(), Object.keys(ERRORS).sort());
    for (const e of served) {
      const src = ERRORS[e.code as ErrorCode];
      assert.equal(e.message, src.message);
      assert.equal(e.suggestion, src.suggestion);
      assert.equal(e.status, src.status);
    }
  });
});

describe('AppError', () => {
  test('takes status, message and suggestion from the catalogue', () => {
    const e = new AppError('project_not_found');
    assert.ok(isAppError(e));
    assert.ok(e instanceof Error);
    assert.equal(e.code, 'project_not_found');
    assert.equal(e.status, ERRORS.project_not_found.status);
    assert.equal(e.message, ERRORS.project_not_found.message);
    assert.equal(e.suggestion, ERRORS.project_not_found.suggestion);
  });

  test('extras refine status, message and suggestion', () => {
    const e = new AppError('invalid_request', { status: 404, message: 'm', suggestion: 's', field: 'f' });
    assert.equal(e.status, 404);
    assert.equal(e.message, 'm');
    assert.equal(e.suggestion, 's');
    assert.equal(e.extras.field, 'f');
  });

  test('plain errors are not AppErrors', () => {
    assert.equal(isAppError(new Error('x')), false);
    assert.equal(isAppError({ code: 'internal_error' }), false);
  });
});
