// startedNow: the producer starts at once (its first item is asked for before anyone reads), a reader
// gets every item in order, a failure before reading reaches the reader and is never unhandled, and
// close() stops a producer nobody read (its finally runs) but leaves one that is being read alone.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { startedNow } from '../../src/media/started-now.js';

function recorded(items: number[], failAt?: number) {
  const log: string[] = [];
  async function* source(): AsyncGenerator<number> {
    log.push('started');
    try {
      for (const [i, v] of items.entries()) {
        if (i === failAt) throw new Error(`failed at ${i}`);
        log.push(`made ${v}`);
        yield v;
      }
    } finally {
      log.push('finally');
    }
  }
  return { log, source: source() };
}

async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const v of it) out.push(v);
  return out;
}

describe('startedNow', () => {
  it('asks for the first item at once and then gives every item in order', async () => {
    const { log, source } = recorded([1, 2, 3]);
    const started = startedNow(source);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(log, ['started', 'made 1'], 'the producer ran before anyone read');
    assert.deepEqual(await collect(started), [1, 2, 3]);
    assert.deepEqual(log, ['started', 'made 1', 'made 2', 'made 3', 'finally']);
    await started.close(); // read already: nothing to do
    assert.throws(() => started[Symbol.asyncIterator](), /read once/);
  });

  it('close() stops a producer that nobody read', async () => {
    const { log, source } = recorded([1, 2, 3]);
    const started = startedNow(source);
    await started.close();
    await started.close();
    assert.deepEqual(log, ['started', 'made 1', 'finally']);
  });

  it('a failure before reading reaches the reader, and close() swallows it', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (e: unknown) => unhandled.push(e);
    process.on('unhandledRejection', onUnhandled);
    try {
      const read = startedNow(recorded([1, 2], 0).source);
      await new Promise((r) => setTimeout(r, 10));
      await assert.rejects(collect(read), /failed at 0/);
      const closed = startedNow(recorded([1, 2], 0).source);
      await new Promise((r) => setTimeout(r, 10));
      await closed.close();
      await new Promise((r) => setTimeout(r, 10));
      assert.deepEqual(unhandled, []);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });

  it('a reader that stops early returns the source', async () => {
    const { log, source } = recorded([1, 2, 3]);
    for await (const v of startedNow(source)) if (v === 2) break;
    assert.deepEqual(log, ['started', 'made 1', 'made 2', 'finally']);
  });
});
