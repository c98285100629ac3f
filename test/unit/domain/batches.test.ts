// test-database: none
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  assertBatchCapacity,
  assertBatchPlan,
  batchLimits,
  finalBatchStatus,
  parseBatchFile,
  pendingCount,
  recordError,
} from '../../../src/domain/batches.js';
import { AppError } from '../../../src/domain/errors.js';
import { refusal } from '../../helpers/refusal.js';

const rec = (i: number) => ({
  request_id: `r${i}`,
  endpoint: '/v2/generate',
  payload: { model: 'lipsync-2' },
});
const file = (lines: string[]) => Buffer.from(lines.join('\n'));
const limits = { minRecords: 1, maxRecords: 500 };

test('lines are counted over non-empty lines only; blank lines and a missing final newline are fine', () => {
  const r = parseBatchFile(file(['', JSON.stringify(rec(1)), '   ', JSON.stringify(rec(2))]), limits);
  assert.deepEqual(
    r.map((x) => [x.line, x.requestId]),
    [
      [1, 'r1'],
      [2, 'r2'],
    ],
  );
});

test('every malformed record names its line (counting non-empty lines)', () => {
  const good = JSON.stringify(rec(1));
  const cases: [string[], RegExp][] = [
    [[good, '', '{nope'], /^Line 2: not valid JSON/],
    [[good, '[1,2]'], /^Line 2: each line must be a JSON object/],
    [[good, JSON.stringify({ ...rec(2), extra: 1 })], /^Line 2: unknown field "extra"/],
    [[good, JSON.stringify({ ...rec(2), request_id: '' })], /^Line 2: request_id/],
    [[good, JSON.stringify(rec(1))], /^Line 2: request_id "r1" was already used on line 1/],
    [[good, JSON.stringify({ ...rec(2), endpoint: '/v2/generate/' })], /^Line 2: endpoint/],
    [[good, JSON.stringify({ ...rec(2), payload: [] })], /^Line 2: payload/],
  ];
  for (const [lines, re] of cases) {
    const e = refusal(() => parseBatchFile(file(lines), limits));
    assert.equal(e.status, 400);
    assert.equal(e.code, 'batch_input_invalid');
    assert.match(e.message, re);
  }
});

test('BOM, CRLF, invalid UTF-8, size and record counts are refused', () => {
  const good = JSON.stringify(rec(1));
  assert.match(
    refusal(() => parseBatchFile(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), file([good])]), limits))
      .message,
    /BOM/,
  );
  assert.match(refusal(() => parseBatchFile(Buffer.from(`${good}\r\n`), limits)).message, /CRLF/);
  assert.match(refusal(() => parseBatchFile(Buffer.from([0x7b, 0xff, 0x7d]), limits)).message, /UTF-8/);
  assert.match(
    refusal(() => parseBatchFile(Buffer.alloc(5 * 1024 * 1024 + 1, 0x20), limits)).message,
    /5 MB/,
  );
  assert.match(
    refusal(() => parseBatchFile(file([good]), { minRecords: 2, maxRecords: 5 })).message,
    /at least 2/,
  );
  const many = Array.from({ length: 6 }, (_, i) => JSON.stringify(rec(i)));
  assert.match(
    refusal(() => parseBatchFile(file(many), { minRecords: 1, maxRecords: 5 })).message,
    /more than 5/,
  );
});

test('any set of distinct request ids round-trips in file order', () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(
        fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s.trim() !== ''),
        { minLength: 1, maxLength: 30 },
      ),
      (ids) => {
        const lines = ids.map((id) =>
          JSON.stringify({ request_id: id, endpoint: '/v2/generate', payload: {} }),
        );
        const r = parseBatchFile(file(lines), limits);
        assert.deepEqual(
          r.map((x) => x.requestId),
          ids,
        );
        assert.deepEqual(
          r.map((x) => x.line),
          ids.map((_, i) => i + 1),
        );
      },
    ),
  );
});

test('plans, limits and capacity', () => {
  assert.equal(refusal(() => assertBatchPlan('growth')).status, 402);
  assertBatchPlan('scale');
  assertBatchPlan('enterprise');
  const l = batchLimits('scale', null);
  assert.deepEqual([l.minRecords, l.maxRecords, l.concurrency, l.runningChildren], [20, 500, 2, 15]);
  assert.equal(batchLimits('scale', null, { scale: 4 }).concurrency, 4);
  assert.equal(batchLimits('scale', { concurrency: 7, maxRecords: 1000 }, { scale: 4 }).concurrency, 7);
  assert.equal(batchLimits('scale', { maxRecords: 1000 }).maxRecords, 1000);
  assertBatchCapacity(l, 1);
  const e = refusal(() => assertBatchCapacity(l, 2));
  assert.equal(e.code, 'concurrency_limit_reached');
  assert.equal(e.status, 429);
  assert.match(e.message, /2 batches running at once/);
});

test('how a batch ends', () => {
  assert.equal(finalBatchStatus({ total: 3, succeeded: 2, failed: 1 }, false), 'COMPLETED');
  assert.equal(finalBatchStatus({ total: 3, succeeded: 0, failed: 3 }, false), 'FAILED');
  assert.equal(finalBatchStatus({ total: 3, succeeded: 3, failed: 0 }, true), 'FAILED');
  assert.equal(pendingCount({ total: 5, succeeded: 2, failed: 1 }), 2);
});

test("a record's refusal: line in the message, 400, lineNumber only for dialogue edits", () => {
  const a = recordError(new AppError('asset_not_found', { status: 422, field: 'input[0].assetId' }), 7);
  assert.equal(a.status, 400);
  assert.match(a.message, /^Line 7: /);
  assert.equal(a.extras.field, 'payload.input[0].assetId');
  assert.equal(a.extras.lineNumber, undefined);
  const d = recordError(new AppError('dialogue_edit_not_found', { status: 422 }), 3);
  assert.equal(d.extras.lineNumber, 3);
  assert.equal(recordError(new AppError('generation_infra_service_unavailable'), 2).status, 503);
});
