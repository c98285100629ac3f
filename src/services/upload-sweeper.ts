// The housekeeping pass that removes what direct uploads leave: uploads never registered (POST
// /v2/assets) before their URL expired plus a grace period, the records of registered ones past that
// point, and blobs under the upload prefix that no waiting upload owns (a PUT to an S3 upload URL
// after its registration). Their bytes (local or S3) and records go. Several processes may sweep at
// once: removing a blob or a record twice is harmless.
import type { Logger } from 'pino';
import type { AssetService } from './assets.js';

/** How often a process sweeps; an upload outlives its grace by at most this much. */
export const UPLOAD_SWEEP_INTERVAL_MS = 10 * 60_000;

export class UploadSweeper {
  private timer: NodeJS.Timeout | null = null;
  private sweeping: Promise<void> | null = null;

  constructor(
    private readonly assets: Pick<AssetService, 'sweepAbandonedUploads'>,
    private readonly logger: Logger,
    private readonly intervalMs = UPLOAD_SWEEP_INTERVAL_MS,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
    void this.tick();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.sweeping;
  }

  /** One sweep; never throws (a failing database or store is tried again at the next tick). */
  tick(): Promise<void> {
    if (!this.sweeping) {
      this.sweeping = this.assets
        .sweepAbandonedUploads()
        .then(() => undefined)
        .catch((err: unknown) => this.logger.warn({ err }, 'upload sweep failed'))
        .finally(() => {
          this.sweeping = null;
        });
    }
    return this.sweeping;
  }
}
