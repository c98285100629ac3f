// Bounded read-ahead over an async iterable: keeps up to `depth` items requested ahead of the
// consumer, so the producer (a decoder, or the engine itself) works while the consumer waits on I/O.
// Memory stays bounded by `depth` items. Stopping early returns the source (so a decoder is killed).

export async function* prefetch<T>(source: AsyncIterable<T>, depth: number): AsyncGenerator<T> {
  const it = source[Symbol.asyncIterator]();
  const queue: Promise<IteratorResult<T>>[] = [];
  let ended = false;
  const fill = (): void => {
    while (!ended && queue.length < Math.max(1, depth)) {
      const next = it.next();
      // Marks the end (or a failure) early so no more is requested; also handles rejections of
      // requests the consumer never awaits.
      next.then(
        (r) => {
          if (r.done) ended = true;
        },
        () => {
          ended = true;
        },
      );
      queue.push(next);
    }
  };
  let finished = false;
  try {
    fill();
    while (queue.length > 0) {
      const r = await (queue.shift() as Promise<IteratorResult<T>>);
      if (r.done) {
        finished = true;
        return;
      }
      fill();
      yield r.value;
    }
    finished = true;
  } catch (err) {
    finished = true;
    throw err;
  } finally {
    if (!finished) await it.return?.();
  }
}
