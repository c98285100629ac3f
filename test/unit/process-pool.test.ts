// The process pool (src/processes/pool.ts): at most `size` runs at once, a FIFO queue of at most
// `maxQueue`, refusals when it is full or the wait runs out, waiting runs leave on abort.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ProcessPool, ProcessPoolBusyError } from '../../src/processes/pool.js';

function gate(): { promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((r) => (open = r));
  return { promise, open };
}

test('runs at most size at once, queues in order, refuses beyond the queue', async () => {
  const pool = new ProcessPool({ size: 2, maxQueue: 2, maxWaitMs: 600_000 });
  const gates = Array.from({ length: 4 }, gate);
  const order: number[] = [];
  const runs = gates.map((g, i) =>
    pool.run(async () => {
      order.push(i);
      await g.promise;
      return i;
    }),
  );
  await new Promise((r) => setImmediate(r));
  assert.equal(pool.running, 2);
  assert.equal(pool.queued, 2);
  await assert.rejects(
    pool.run(async () => 9),
    (e) => e instanceof ProcessPoolBusyError && e.reason === 'queue_full',
  );
  gates[1].open();
  await runs[1];
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(order, [0, 1, 2]);
  assert.equal(pool.running, 2);
  for (const g of gates) g.open();
  assert.deepEqual(await Promise.all(runs), [0, 1, 2, 3]);
  assert.deepEqual(order, [0, 1, 2, 3]);
  assert.equal(pool.peak, 2);
  assert.equal(pool.running, 0);
  assert.equal(pool.queued, 0);
});

test('a failing run frees its slot; a wait that runs out or is aborted leaves the queue', async () => {
  const pool = new ProcessPool({ size: 1, maxQueue: 5, maxWaitMs: 1 });
  await assert.rejects(
    pool.run(async () => {
      throw new Error('boom');
    }),
    /boom/,
  );
  assert.equal(pool.running, 0);
  const hold = gate();
  const first = pool.run(() => hold.promise);
  await assert.rejects(
    pool.run(async () => 1),
    (e) => e instanceof ProcessPoolBusyError && e.reason === 'wait_timeout',
  );
  pool.configure({ size: 1, maxQueue: 5, maxWaitMs: 600_000 });
  const ac = new AbortController();
  const waiting = pool.run(async () => 2, ac.signal);
  assert.equal(pool.queued, 1);
  ac.abort(new Error('gone'));
  await assert.rejects(waiting, /gone/);
  assert.equal(pool.queued, 0);
  hold.open();
  await first;
  assert.equal(await pool.run(async () => 3), 3);
  assert.equal(pool.running, 0);
});

test('a larger size starts waiting runs at once', async () => {
  const pool = new ProcessPool({ size: 1, maxQueue: 5, maxWaitMs: 600_000 });
  const hold = gate();
  const first = pool.run(() => hold.promise);
  let started = false;
  const second = pool.run(async () => {
    started = true;
  });
  assert.equal(started, false);
  pool.configure({ size: 2, maxQueue: 5, maxWaitMs: 600_000 });
  await second;
  assert.equal(started, true);
  hold.open();
  await first;
});
