// The drain of a shutting-down API instance (docs/operations.md): from its start /readyz answers 503,
// every answer closes its connection, and every long-poll (a generation's wait, a remote worker's
// claim) answers its current state at once instead of holding its request open.

export class Drain {
  private readonly controller = new AbortController();

  /** Aborted when the drain begins. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get draining(): boolean {
    return this.controller.signal.aborted;
  }

  /** Starts the drain (once; later calls change nothing). */
  begin(): void {
    this.controller.abort();
  }

  /**
   * A signal aborted when `other` aborts or the drain begins; dispose() unhooks it from the drain (a
   * listener per open request must not outlive the request).
   */
  follow(other: AbortSignal): { signal: AbortSignal; dispose(): void } {
    const linked = new AbortController();
    const abort = () => linked.abort();
    if (this.draining || other.aborted) linked.abort();
    this.signal.addEventListener('abort', abort, { once: true });
    other.addEventListener('abort', abort, { once: true });
    return {
      signal: linked.signal,
      dispose: () => {
        this.signal.removeEventListener('abort', abort);
        other.removeEventListener('abort', abort);
      },
    };
  }
}
