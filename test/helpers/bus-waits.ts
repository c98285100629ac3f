// How the long-poll waits on the event bus ended: woken by a change, ended by their timer, or dropped
// (their signal aborted: the caller stopped waiting). Tests check these instead of timing the request.
import type { EventBus } from '../../src/jobs/event-bus.js';

export type WaitOutcome = 'changed' | 'timeout' | 'dropped';

export interface BusWaits {
  /** One entry per waitForChange call that has ended, in the order they ended. */
  readonly outcomes: WaitOutcome[];
  /** Calls made so far that have not ended yet. */
  waiting(): number;
  restore(): void;
}

/** Records the outcome of every waitForChange on the bus until restore(). */
export function watchBusWaits(bus: EventBus): BusWaits {
  const original = bus.waitForChange;
  const outcomes: WaitOutcome[] = [];
  let waiting = 0;
  bus.waitForChange = async (subjectId, timeoutMs, signal) => {
    waiting++;
    try {
      const r = await original.call(bus, subjectId, timeoutMs, signal);
      // The bus answers 'timeout' for an aborted wait as well; the signal tells them apart.
      outcomes.push(r === 'timeout' && signal?.aborted ? 'dropped' : r);
      return r;
    } finally {
      waiting--;
    }
  };
  return {
    outcomes,
    waiting: () => waiting,
    restore: () => {
      bus.waitForChange = original;
    },
  };
}
