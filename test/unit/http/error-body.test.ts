import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { FastifyError } from 'fastify';
import { AppError } from '../../../src/domain/errors.js';
import { appErrorBody, toAppError } from '../../../src/http/error-body.js';

function validationError(
  instancePath: string,
  params: Record<string, unknown> = {},
  context = 'body',
  message = 'must be string',
): FastifyError {
  const err = new Error(`${context}${instancePath} ${message}`) as FastifyError;
  err.statusCode = 400;
  err.code = 'FST_ERR_VALIDATION';
  err.validationContext = context as FastifyError['validationContext'];
  err.validation = [{ keyword: 'type', instancePath, schemaPath: '#', params, message }];
  return err;
}

function fieldFor(instancePath: string, params: Record<string, unknown> = {}, context = 'body') {
  const e = toAppError(validationError(instancePath, params, context));
  assert.ok(e);
  assert.equal(e.code, 'invalid_request');
  assert.equal(e.status, 400);
  return e.extras.field;
}

describe('schema failure field paths', () => {
  test('nested objects are joined with dots', () => {
    assert.equal(fieldFor('/options/pads'), 'options.pads');
    assert.equal(fieldFor('/name'), 'name');
  });

  test('array items are written with brackets', () => {
    assert.equal(fieldFor('/input/0/url'), 'input[0].url');
    assert.equal(fieldFor('/options/output_resolution/1'), 'options.output_resolution[1]');
    assert.equal(fieldFor('/segments/2/0'), 'segments[2][0]');
    assert.equal(fieldFor('/0'), '[0]');
  });

  test('a missing property is named after its parent', () => {
    assert.equal(fieldFor('', { missingProperty: 'model' }), 'model');
    assert.equal(fieldFor('/input/1', { missingProperty: 'type' }), 'input[1].type');
  });

  test('an unexpected property is named', () => {
    assert.equal(fieldFor('/options', { additionalProperty: 'colour' }), 'options.colour');
  });

  test('a failure of the whole body or query names where it happened', () => {
    assert.equal(fieldFor('', {}, 'body'), 'body');
    assert.equal(fieldFor('/limit', {}, 'querystring'), 'limit');
  });

  test('the message says where and what', () => {
    const e = toAppError(validationError('/input/0/url', {}, 'body', 'must be string'));
    assert.equal(e?.message, 'input[0].url must be string');
  });
});

describe('framework errors', () => {
  const coded = (code: string, statusCode?: number, message = 'x'): FastifyError => {
    const e = new Error(message) as FastifyError;
    e.code = code;
    if (statusCode) e.statusCode = statusCode;
    return e;
  };

  test('are mapped onto catalogue codes', () => {
    assert.equal(toAppError(coded('FST_ERR_CTP_BODY_TOO_LARGE', 413))?.code, 'payload_too_large');
    assert.equal(toAppError(coded('FST_ERR_CTP_INVALID_MEDIA_TYPE', 415))?.code, 'unsupported_media_type');
    assert.equal(toAppError(coded('FST_ERR_CTP_EMPTY_JSON_BODY', 400))?.code, 'invalid_request');
    assert.equal(toAppError(coded('FST_ERR_CTP_INVALID_JSON_BODY', 400))?.code, 'invalid_request');
    assert.equal(
      toAppError(coded('FST_REQ_FILE_TOO_LARGE', 413))?.code,
      'generation_input_validation_failed',
    );
    assert.equal(toAppError(coded('FST_FILES_LIMIT', 413))?.code, 'generation_input_validation_failed');
  });

  test('other 4xx errors keep their status; anything else is unexpected', () => {
    const e = toAppError(coded('FST_SOMETHING', 405, 'nope'));
    assert.equal(e?.status, 405);
    assert.equal(e?.message, 'nope');
    assert.equal(toAppError(new Error('boom')), null);
    assert.equal(toAppError(coded('ECONNREFUSED')), null);
    assert.equal(toAppError(coded('FST_X', 502)), null);
    assert.equal(toAppError(undefined), null);
  });

  test('an AppError passes through unchanged', () => {
    const e = new AppError('project_not_found');
    assert.equal(toAppError(e), e);
  });
});

describe('error body', () => {
  test('has the spec fields and only the extras that were given', () => {
    assert.deepEqual(appErrorBody(new AppError('project_not_found')), {
      message: 'Project not found in this organization.',
      statusCode: 404,
      errorCode: 'project_not_found',
      suggestion: 'Check the projectId; list projects with GET /v2/projects.',
    });
    const b = appErrorBody(
      new AppError('IDEMPOTENCY_OUTCOME_UNKNOWN', {
        field: 'input[0].assetId',
        generationId: 'g1',
        retryAfter: 2,
        details: { lineNumber: 3 },
      }),
    );
    assert.equal(b.statusCode, 503);
    assert.equal(b.field, 'input[0].assetId');
    assert.equal(b.generationId, 'g1');
    assert.equal(b.retryAfter, 2);
    assert.equal(b.lineNumber, 3);
  });
});
