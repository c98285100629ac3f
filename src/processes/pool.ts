// A bound on child processes running at once: `run` holds a slot for the whole life of one process
// (the caller's function settles only after its child exited), waits in a bounded FIFO queue when
// every slot is taken, and refuses with ProcessPoolBusyError when the queue is full or the wait too
// long. The speech tools (festival, RHVoice, pocketsphinx, Praat) share one pool per process
// (speechProcesses()), sized at start from LIPSYNC_SPEECH_PROCESSES*.
import { availableParallelism } from 'node:os';

export interface ProcessPoolLimits {
  /** Processes running at once. */
  readonly size: number;
  /** Runs that may wait for a slot; one more is refused at once. */
  readonly maxQueue: number;
  /** Longest wait for a slot; then the run is refused. */
  readonly maxWaitMs: number;
}

/** No slot: the queue was full (`queue_full`) or the wait ran out (`wait_timeout`). */
export class ProcessPoolBusyError extends Error {
  constructor(readonly reason: 'queue_full' | 'wait_timeout') {
    super(
      reason === 'queue_full'
        ? 'every process slot is taken and the queue is full'
        : 'no process slot in time',
    );
    this.name = 'ProcessPoolBusyError';
  }
}

/**
 * Whether an error is, or was caused by (through `cause`), a run that got no slot. Inside a job that
 * is a passing overload, so the job is retried instead of degraded or failed.
 */
export function isNoProcessSlot(err: unknown): boolean {
  for (let e = err, depth = 0; e instanceof Error && depth < 8; e = e.cause, depth++) {
    if (e instanceof ProcessPoolBusyError) return true;
  }
  return false;
}

interface Waiter {
  grant(): void;
}

export class ProcessPool {
  private limits: ProcessPoolLimits;
  private active = 0;
  private highWater = 0;
  private readonly waiting: Waiter[] = [];

  constructor(limits: ProcessPoolLimits) {
    this.limits = limits;
  }

  /** New limits apply to the next runs; a larger size starts waiting runs now. */
  configure(limits: ProcessPoolLimits): void {
    this.limits = limits;
    this.drain();
  }

  get running(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiting.length;
  }

  get size(): number {
    return this.limits.size;
  }

  /** The most processes that ran at once since the last resetPeak(). */
  get peak(): number {
    return this.highWater;
  }

  resetPeak(): void {
    this.highWater = this.active;
  }

  /**
   * Runs `start` (which must settle only after its process exited) in a slot. Rejects with
   * ProcessPoolBusyError when no slot comes, or with the signal's reason when aborted while waiting.
   */
  async run<T>(start: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    await this.acquire(signal);
    try {
      return await start();
    } finally {
      this.active--;
      this.drain();
    }
  }

  private take(): void {
    this.active++;
    if (this.active > this.highWater) this.highWater = this.active;
  }

  private drain(): void {
    while (this.active < this.limits.size && this.waiting.length > 0) this.waiting.shift()!.grant();
  }

  private acquire(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    if (this.active < this.limits.size && this.waiting.length === 0) {
      this.take();
      return Promise.resolve();
    }
    if (this.waiting.length >= this.limits.maxQueue)
      return Promise.reject(new ProcessPoolBusyError('queue_full'));
    return new Promise<void>((resolve, reject) => {
      const leave = (): void => {
        const i = this.waiting.indexOf(waiter);
        if (i >= 0) this.waiting.splice(i, 1);
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      };
      const waiter: Waiter = {
        grant: () => {
          leave();
          this.take();
          resolve();
        },
      };
      const onAbort = (): void => {
        leave();
        reject(signal?.reason);
      };
      const timer = setTimeout(() => {
        leave();
        reject(new ProcessPoolBusyError('wait_timeout'));
      }, this.limits.maxWaitMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }
}

/** The default size: one process per core. */
export function defaultSpeechProcesses(): number {
  return Math.max(1, availableParallelism());
}

const speechPool = new ProcessPool({ size: defaultSpeechProcesses(), maxQueue: 32, maxWaitMs: 30_000 });

/** The one pool of this process's local speech tool runs (configured at start by the container). */
export function speechProcesses(): ProcessPool {
  return speechPool;
}
