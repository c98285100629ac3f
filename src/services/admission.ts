// Operator switch for accepting new generations, shared through the database by every process.
import type { Store } from '../store/index.js';
import type { Organization } from '../store/organizations.js';
import { AppError } from '../domain/errors.js';
import { concurrencyLimit } from '../domain/plans.js';

const KEY = 'admission';

export interface AdmissionState {
  paused: boolean;
  reason: string | null;
  since: string | null;
}

export class AdmissionService {
  constructor(private readonly store: Store) {}

  async state(): Promise<AdmissionState> {
    const raw = await this.store.settings.get(KEY);
    if (!raw) return { paused: false, reason: null, since: null };
    return JSON.parse(raw) as AdmissionState;
  }

  /** 503 while an operator has paused admission. */
  async assertOpen(): Promise<void> {
    if ((await this.state()).paused) {
      throw new AppError('generation_admission_paused', { headers: { 'Retry-After': '60' }, retryAfter: 60 });
    }
  }

  /** 429 when the organization already has as many active generations as its plan allows. */
  assertCapacity(org: Organization, active: number): void {
    const limit = concurrencyLimit(org.plan, org.concurrencyLimit);
    if (active >= limit) {
      throw new AppError('concurrency_limit_reached', {
        message: `Your plan allows ${limit} concurrent generation${limit === 1 ? '' : 's'} (pending or processing).`,
        retryAfter: 5,
        headers: { 'Retry-After': '5' },
        details: { concurrencyLimit: limit, activeGenerations: active },
      });
    }
  }

  async pause(reason: string | null): Promise<AdmissionState> {
    const now = new Date().toISOString();
    const s: AdmissionState = { paused: true, reason, since: now };
    await this.store.settings.set(KEY, JSON.stringify(s), now);
    return s;
  }

  async resume(): Promise<AdmissionState> {
    const now = new Date().toISOString();
    const s: AdmissionState = { paused: false, reason: null, since: now };
    await this.store.settings.set(KEY, JSON.stringify(s), now);
    return s;
  }
}
