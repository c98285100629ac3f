// Operator switch for accepting new generations, shared through the database by every process.
import type { Store } from '../store/index.js';

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
