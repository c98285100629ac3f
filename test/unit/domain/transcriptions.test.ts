// The span a transcription processes (domain/transcriptions.ts): the requested window, clamped to the
// source, and never longer than MAX_WINDOW_MS whether or not endMs was given.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_WINDOW_MS, transcriptionWindowEnd } from '../../../src/domain/transcriptions.js';

test('the processed span: the requested end, clamped to the source and to the longest window', () => {
  const hour = 60 * 60 * 1000;
  assert.equal(MAX_WINDOW_MS, hour);
  // endMs given: used, or clamped to the source.
  assert.equal(transcriptionWindowEnd(1000, 5000, 10_000), 5000);
  assert.equal(transcriptionWindowEnd(1000, 600_000, 10_000), 10_000);
  // No endMs: the source's end, but never more than an hour after the start.
  assert.equal(transcriptionWindowEnd(0, null, 10_000), 10_000);
  assert.equal(transcriptionWindowEnd(0, null, 5 * hour), hour);
  assert.equal(transcriptionWindowEnd(30_000, null, 5 * hour), 30_000 + hour);
  assert.equal(transcriptionWindowEnd(0, null, hour + 1), hour);
});
