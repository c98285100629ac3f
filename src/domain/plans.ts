// Plans and their limits. The spec gives concurrency; file size, duration and watermark values are
// ours (documented in docs/plans.md) because the spec leaves them "not shown".
import { AppError } from './errors.js';

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
  /** Largest output frame (width x height) one generation may ask for. */
  readonly maxOutputPixels: number;
  /** Most work one generation may ask for: output pixels x frames (width x height x fps x seconds). */
  readonly maxPixelFrames: number;
  /** Cloned voices an organization may keep (POST /v2/voices). */
  readonly voiceCloneSlots: number;
}

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;
const HD = 1920 * 1080;
const QHD = 2560 * 1440;
const UHD = 3840 * 2160;

export const PLAN_LIMITS: Readonly<Record<Plan, PlanLimits>> = {
  free: {
    concurrency: 1,
    maxFileBytes: 100 * MiB,
    maxDurationSeconds: 60,
    watermark: true,
    batch: false,
    maxOutputPixels: HD,
    maxPixelFrames: HD * 30 * 60,
    voiceCloneSlots: 1,
  },
  hobbyist: {
    concurrency: 1,
    maxFileBytes: 500 * MiB,
    maxDurationSeconds: 300,
    watermark: false,
    batch: false,
    maxOutputPixels: QHD,
    maxPixelFrames: HD * 30 * 300,
    voiceCloneSlots: 3,
  },
  creator: {
    concurrency: 3,
    maxFileBytes: 1 * GiB,
    maxDurationSeconds: 600,
    watermark: false,
    batch: false,
    maxOutputPixels: UHD,
    maxPixelFrames: HD * 30 * 600,
    voiceCloneSlots: 10,
  },
  growth: {
    concurrency: 6,
    maxFileBytes: 2 * GiB,
    maxDurationSeconds: 1800,
    watermark: false,
    batch: false,
    maxOutputPixels: UHD,
    maxPixelFrames: HD * 30 * 1800,
    voiceCloneSlots: 30,
  },
  scale: {
    concurrency: 15,
    maxFileBytes: 5 * GiB,
    maxDurationSeconds: 3600,
    watermark: false,
    batch: true,
    maxOutputPixels: UHD,
    maxPixelFrames: UHD * 30 * 3600,
    voiceCloneSlots: 100,
  },
  enterprise: {
    concurrency: 15,
    maxFileBytes: 5 * GiB,
    maxDurationSeconds: 7200,
    watermark: false,
    batch: true,
    maxOutputPixels: UHD,
    maxPixelFrames: UHD * 30 * 7200,
    voiceCloneSlots: 1000,
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

/** Whether the plan's outputs are watermarked (decided when the job is claimed). */
export function watermarksOutputs(plan: Plan): boolean {
  return PLAN_LIMITS[plan].watermark;
}

/**
 * The one watermark rule: which stored output a client of this plan receives. Plans with a watermark
 * get the watermarked derivative; the clean output is kept for when the organization upgrades.
 */
export function deliverableKey(
  plan: Plan,
  output: { outputKey: string | null; watermarkedKey: string | null },
): string | null {
  return watermarksOutputs(plan) ? (output.watermarkedKey ?? output.outputKey) : output.outputKey;
}

export interface RequestedWork {
  readonly width?: number;
  readonly height?: number;
  readonly fps?: number;
  readonly seconds?: number;
}

/**
 * The plan's budget for the work one generation may ask for: the output frame size, and output pixels
 * x frames in all. Checked as soon as the request says the frame size (before anything is fetched),
 * and again once the inputs are probed. Throws 422 generation_plan_work_exceeded naming the limit.
 */
export function checkWorkBudget(plan: Plan, w: RequestedWork): void {
  const limits = PLAN_LIMITS[plan];
  if (w.width === undefined || w.height === undefined) return;
  const pixels = w.width * w.height;
  if (pixels > limits.maxOutputPixels) {
    throw new AppError('generation_plan_work_exceeded', {
      field: 'options.output_resolution',
      message: `An output frame of ${w.width}x${w.height} has ${pixels} pixels; the ${plan} plan allows ${limits.maxOutputPixels} per frame.`,
      details: { limit: 'maxOutputPixels', allowed: limits.maxOutputPixels, requested: pixels },
    });
  }
  if (w.fps === undefined || w.seconds === undefined) return;
  const work = pixels * w.fps * w.seconds;
  if (work > limits.maxPixelFrames) {
    throw new AppError('generation_plan_work_exceeded', {
      message: `${w.width}x${w.height} at ${w.fps} fps for ${w.seconds.toFixed(1)} s is ${Math.round(work / 1e6)} megapixel-frames; the ${plan} plan allows ${Math.round(limits.maxPixelFrames / 1e6)} per generation.`,
      details: { limit: 'maxPixelFrames', allowed: limits.maxPixelFrames, requested: Math.round(work) },
    });
  }
}
