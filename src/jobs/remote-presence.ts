// Which remote workers this API instance hears from (lipsync_remote_workers_connected,
// docs/operations.md): a worker token counts while it made an authenticated protocol call within the
// last lease period, or while one of its claims is held open here. Keyed by worker token: every call
// presents it (heartbeats carry nothing else), so processes sharing one token count once.

export class RemotePresence {
  private readonly lastSeen = new Map<string, number>();
  private readonly openClaims = new Map<string, number>();

  constructor(
    /** How long a call counts: the job lease, which a working remote worker heartbeats within. */
    private readonly windowMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** An authenticated call of this worker token. */
  seen(tokenId: string): void {
    this.lastSeen.set(tokenId, this.now());
  }

  /** A claim of this token is held open; the returned function ends it. */
  claimOpened(tokenId: string): () => void {
    this.openClaims.set(tokenId, (this.openClaims.get(tokenId) ?? 0) + 1);
    let open = true;
    return () => {
      if (!open) return;
      open = false;
      const left = (this.openClaims.get(tokenId) ?? 1) - 1;
      if (left <= 0) this.openClaims.delete(tokenId);
      else this.openClaims.set(tokenId, left);
      this.seen(tokenId);
    };
  }

  /** Worker tokens heard from within the window or holding a claim open now. */
  connected(): number {
    const since = this.now() - this.windowMs;
    let n = this.openClaims.size;
    for (const [id, at] of this.lastSeen) {
      // Entries past the window are dropped here: the map stays as small as the fleet.
      if (at < since) this.lastSeen.delete(id);
      else if (!this.openClaims.has(id)) n++;
    }
    return n;
  }
}
