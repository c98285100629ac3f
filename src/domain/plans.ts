// Plans and their limits. The spec gives concurrency; file size, duration and watermark values are
// ours (documented in docs/plans.md) because the spec leaves them "not shown".

export const PLANS = ['free', 'hobbyist', 'creator', 'growth', 'scale', 'enterprise'] as const;
export type Plan = (typeof PLANS)[number];

export const BILLING_MODES = ['usd', 'credits'] as const;
export type BillingMode = (typeof BILLING_MODES)[number];

export interface PlanLimits {
  readonly concurrency: number;
  readonly maxFileBytes: number;
  readonly maxDurationSeconds: number;
  readonly watermark: boolean;
  readonly batch: boolean;
}

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

export const PLAN_LIMITS: Readonly<Record<Plan, PlanLimits>> = {
  free: { concurrency: 1, maxFileBytes: 100 * MiB, maxDurationSeconds: 60, watermark: true, batch: false },
  hobbyist: {
    concurrency: 1,
    maxFileBytes: 500 * MiB,
    maxDurationSeconds: 300,
    watermark: false,
    batch: false,
  },
  creator: { concurrency: 3, maxFileBytes: 1 * GiB, maxDurationSeconds: 600, watermark: false, batch: false },
  growth: { concurrency: 6, maxFileBytes: 2 * GiB, maxDurationSeconds: 1800, watermark: false, batch: false },
  scale: { concurrency: 15, maxFileBytes: 5 * GiB, maxDurationSeconds: 3600, watermark: false, batch: true },
  enterprise: {
    concurrency: 15,
    maxFileBytes: 5 * GiB,
    maxDurationSeconds: 7200,
    watermark: false,
    batch: true,
  },
};

export function isPlan(value: string): value is Plan {
  return (PLANS as readonly string[]).includes(value);
}

/** Concurrent PENDING+PROCESSING generations allowed; enterprise contracts override the default. */
export function concurrencyLimit(plan: Plan, contracted: number | null): number {
  if (plan === 'enterprise' && contracted !== null && contracted > 0) return contracted;
  return PLAN_LIMITS[plan].concurrency;
}
