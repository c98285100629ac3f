import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseRange } from '../../../src/http/range.js';

test('single ranges: a-b, a-, -n, clamped to the file', () => {
  assert.deepEqual(parseRange('bytes=0-99', 1000), { kind: 'range', range: { start: 0, end: 99 } });
  assert.deepEqual(parseRange('bytes=500-', 1000), { kind: 'range', range: { start: 500, end: 999 } });
  assert.deepEqual(parseRange('bytes=-100', 1000), { kind: 'range', range: { start: 900, end: 999 } });
  assert.deepEqual(parseRange('bytes=-5000', 1000), { kind: 'range', range: { start: 0, end: 999 } });
  assert.deepEqual(parseRange('bytes=990-5000', 1000), { kind: 'range', range: { start: 990, end: 999 } });
  assert.deepEqual(parseRange('bytes=999-999', 1000), { kind: 'range', range: { start: 999, end: 999 } });
  assert.deepEqual(parseRange(' bytes = 1 - 2 ', 1000), { kind: 'range', range: { start: 1, end: 2 } });
});

test('ranges outside the file are unsatisfiable', () => {
  assert.deepEqual(parseRange('bytes=1000-', 1000), { kind: 'unsatisfiable' });
  assert.deepEqual(parseRange('bytes=1000-2000', 1000), { kind: 'unsatisfiable' });
  assert.deepEqual(parseRange('bytes=-0', 1000), { kind: 'unsatisfiable' });
  assert.deepEqual(parseRange('bytes=0-', 0), { kind: 'unsatisfiable' });
  assert.deepEqual(parseRange('bytes=-5', 0), { kind: 'unsatisfiable' });
});

test('headers we do not serve are ignored (whole file)', () => {
  for (const h of [
    undefined,
    '',
    'bytes=',
    'bytes=-',
    'items=0-1',
    'bytes=5-1',
    'bytes=0-1,5-9',
    'bytes=a-b',
  ]) {
    assert.deepEqual(parseRange(h, 1000), { kind: 'none' }, String(h));
  }
});
