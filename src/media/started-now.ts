// Starts an async iterable's producer at once instead of at its first read: its first item is asked
// for now, so a producer that is slow to start (an ffmpeg decoder: the process, the input, the filter
// graph, the first frame) gets going while the caller finishes other work. The generation pipeline
// starts decoding this way as soon as the conform plan is known, while voice activity still runs
// (docs/benchmarks.md, "Decoding started with the conform").

export interface StartedNow<T> extends AsyncIterable<T> {
  /** Stops the producer when nothing will read it (a failure before its reader started); idempotent. */
  close(): Promise<void>;
}

/** `source`, started now. Iterate it once; call close() if it may never be iterated. */
export function startedNow<T>(source: AsyncIterable<T>): StartedNow<T> {
  const it = source[Symbol.asyncIterator]();
  let first: Promise<IteratorResult<T>> | null = it.next();
  // Observed here so that a failure before anyone reads is not unhandled; the reader still gets it.
  first.catch(() => undefined);
  let claimed = false;
  return {
    [Symbol.asyncIterator](): AsyncIterator<T> {
      if (claimed) throw new Error('a started iterable is read once');
      claimed = true;
      return {
        next: () => {
          const f = first;
          first = null;
          return f ?? it.next();
        },
        return: async (value?: unknown) => {
          first = null;
          return (await it.return?.(value as T)) ?? { done: true, value: value as T };
        },
      };
    },
    async close(): Promise<void> {
      if (claimed) return;
      claimed = true;
      // An async generator takes return() once the pending first read has settled.
      await first?.catch(() => undefined);
      first = null;
      await it.return?.(undefined as T);
    },
  };
}
