// Rollout flags (domain/feature-flags.ts): an update replaces the set, or adds and removes flags and
// keeps the others; mixing the two is refused, as are malformed names.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../../src/domain/errors.js';
import { changedFlags, ROLLOUT_FLAGS, TTS_ASYNC_FLAG } from '../../../src/domain/feature-flags.js';

test('adding keeps the current flags, in order, without duplicates', () => {
  assert.deepEqual(changedFlags(['a', 'b'], { add: ['c', 'a'] }), ['a', 'b', 'c']);
  assert.deepEqual(changedFlags([], { add: ['tts_async'] }), ['tts_async']);
});

test('removing keeps the others; removing an absent flag is no change', () => {
  assert.deepEqual(changedFlags(['a', 'b', 'c'], { remove: ['b', 'zz'] }), ['a', 'c']);
  assert.deepEqual(changedFlags(['a', 'b'], { add: ['c'], remove: ['a'] }), ['b', 'c']);
});

test('a set replaces the whole list; no change keeps it', () => {
  assert.deepEqual(changedFlags(['a', 'b'], { set: ['x', 'x'] }), ['x']);
  assert.deepEqual(changedFlags(['a', 'b'], { set: [] }), []);
  assert.deepEqual(changedFlags(['a', 'b'], {}), ['a', 'b']);
});

test('a set with additions or removals, a flag both added and removed, a bad name: invalid_request', () => {
  for (const change of [
    { set: ['a'], add: ['b'] },
    { set: ['a'], remove: ['b'] },
    { add: ['a'], remove: ['a'] },
    { add: ['has space'] },
    { remove: [''] },
    { set: ['x'.repeat(65)] },
  ]) {
    assert.throws(
      () => changedFlags(['a'], change),
      (e: unknown) => e instanceof AppError && e.code === 'invalid_request',
      JSON.stringify(change),
    );
  }
});

test('the list of rollout flags names every flag a feature checks', () => {
  assert.ok(ROLLOUT_FLAGS.includes(TTS_ASYNC_FLAG));
  assert.ok(ROLLOUT_FLAGS.includes('segment_lipsync') && ROLLOUT_FLAGS.includes('section_expansion'));
});
