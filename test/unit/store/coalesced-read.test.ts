// CoalescedRead (src/store/coalesced-read.ts): lookups of one event-loop turn go out as one batch;
// a lookup never joins a batch already sent; equal lookups share one frozen answer.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { CoalescedRead } from '../../../src/store/coalesced-read.js';

interface Call {
  params: readonly string[];
  answer(values: readonly ({ v: string } | null)[]): void;
  fail(err: unknown): void;
}

/** A CoalescedRead whose batches wait until the test answers them. */
function controlled() {
  const calls: Call[] = [];
  const read = new CoalescedRead<string, { v: string }>(
    (params) =>
      new Promise((resolve, reject) => calls.push({ params: [...params], answer: resolve, fail: reject })),
  );
  return { read, calls };
}

test('lookups of one turn are one batch, in order; equal ones share one frozen answer', async () => {
  const { read, calls } = controlled();
  const a1 = read.read('a', 'a');
  const b = read.read('b', 'b');
  const a2 = read.read('a', 'a');
  const c = read.read('c', 'c');
  assert.equal(calls.length, 0, 'nothing is sent before the turn ends');
  await nextTurn();
  assert.equal(calls.length, 1);
  assert.deepEqual(calls[0]!.params, ['a', 'b', 'c']);
  calls[0]!.answer([{ v: 'A' }, null, { v: 'C' }]);
  const [ra1, rb, ra2, rc] = await Promise.all([a1, b, a2, c]);
  assert.deepEqual(ra1, { v: 'A' });
  assert.equal(ra1, ra2, 'equal lookups share one answer');
  assert.ok(Object.isFrozen(ra1));
  assert.equal(rb, null);
  assert.deepEqual(rc, { v: 'C' });
});

test('a lookup made while a batch is out waits for a batch of its own', async () => {
  const { read, calls } = controlled();
  const first = read.read('k', 'k');
  await nextTurn();
  assert.equal(calls.length, 1);
  // The same lookup again, after the first batch was sent: the answer must come from a later query.
  const second = read.read('k', 'k');
  await nextTurn();
  assert.equal(calls.length, 2, 'not answered by the query already under way');
  calls[0]!.answer([{ v: 'old' }]);
  calls[1]!.answer([{ v: 'new' }]);
  assert.deepEqual(await first, { v: 'old' });
  assert.deepEqual(await second, { v: 'new' });
});

test('a failed batch fails its own lookups only', async () => {
  const { read, calls } = controlled();
  const failed = read.read('x', 'x');
  await nextTurn();
  const later = read.read('y', 'y');
  await nextTurn();
  calls[0]!.fail(new Error('connection terminated'));
  calls[1]!.answer([{ v: 'Y' }]);
  await assert.rejects(failed, /connection terminated/);
  assert.deepEqual(await later, { v: 'Y' });
});

test('a batch holds at most 256 distinct lookups; more go out in further batches', async () => {
  const { read, calls } = controlled();
  const keys = Array.from({ length: 600 }, (_, i) => `k${i}`);
  const answers = keys.map((k) => read.read(k, k));
  await nextTurn();
  assert.deepEqual(
    calls.map((c) => c.params.length),
    [256, 256],
    'two full batches out; the rest waits for one of them',
  );
  for (const c of calls) c.answer(c.params.map((v) => ({ v })));
  await nextTurn();
  assert.deepEqual(
    calls.map((c) => c.params.length),
    [256, 256, 88],
  );
  calls[2]!.answer(calls[2]!.params.map((v) => ({ v })));
  assert.deepEqual(
    calls.flatMap((c) => c.params),
    keys,
    'every lookup once, in order',
  );
  const values = await Promise.all(answers);
  assert.deepEqual(
    values.map((x) => x?.v),
    keys,
  );
});

test('two queries out at most: later lookups gather into one batch until one comes back', async () => {
  const { read, calls } = controlled();
  const first = read.read('a', 'a');
  await nextTurn();
  const second = read.read('b', 'b');
  await nextTurn();
  const later = [read.read('c', 'c'), read.read('d', 'd')];
  await nextTurn();
  const evenLater = read.read('e', 'e');
  await nextTurn();
  assert.equal(calls.length, 2, 'the third batch waits');
  calls[0]!.answer([{ v: 'A' }]);
  assert.deepEqual(await first, { v: 'A' });
  await nextTurn();
  assert.equal(calls.length, 3);
  assert.deepEqual(calls[2]!.params, ['c', 'd', 'e'], 'everything that waited, in one query');
  calls[1]!.answer([{ v: 'B' }]);
  calls[2]!.answer([{ v: 'C' }, { v: 'D' }, { v: 'E' }]);
  assert.deepEqual(await second, { v: 'B' });
  assert.deepEqual(
    (await Promise.all([...later, evenLater])).map((x) => x?.v),
    ['C', 'D', 'E'],
  );
});
