// Cost estimates: per-model price per second (or per frame) from configuration. Pure.
import { AppError } from './errors.js';

export interface ModelPrice {
  /** Dollars per second of output; used when perFrame is absent. */
  perSecond?: number;
  /** Dollars per output frame. */
  perFrame?: number;
  /** Credits per second for credit-billed organizations. */
  creditsPerSecond?: number;
}

export type PriceTable = Readonly<Record<string, ModelPrice>>;

export const DEFAULT_PRICES: PriceTable = {
  'lipsync-2': { perSecond: 0.05, creditsPerSecond: 5 },
  'lipsync-2-pro': { perSecond: 0.0833, creditsPerSecond: 8.33 },
  'lipsync-1.9.0-beta': { perSecond: 0.04, creditsPerSecond: 4 },
  'lipsync-1.8.0': { perSecond: 0.04, creditsPerSecond: 4 },
  'lipsync-1.7.1': { perSecond: 0.04, creditsPerSecond: 4 },
  'lipsync-1.6.0': { perSecond: 0.04, creditsPerSecond: 4 },
  'sync-3': { perSecond: 0.1, creditsPerSecond: 10 },
};

export interface Estimate {
  model: string;
  duration: number;
  fps: number;
  estimatedFrameCount: number;
  estimatedGenerationCost: number;
  estimatedCredits: number | null;
}

export const MAX_ESTIMATE_SECONDS = 4 * 3600;
export const MAX_ESTIMATE_FPS = 120;

/**
 * The price of a model: only an own key of the table counts, never one inherited from Object.prototype
 * (`constructor`, `toString`, `__proto__` are not models).
 */
export function priceOf(prices: PriceTable, model: string): ModelPrice | null {
  if (!Object.hasOwn(prices, model)) return null;
  const price: unknown = prices[model];
  return typeof price === 'object' && price !== null ? (price as ModelPrice) : null;
}

export function estimateCost(
  prices: PriceTable,
  input: { model: string; duration: number; fps?: number },
  billing: 'usd' | 'credits',
): Estimate {
  const price = priceOf(prices, input.model);
  if (!price)
    throw new AppError('unsupported_model', {
      field: 'model',
      message: `Model ${JSON.stringify(input.model)} is not supported.`,
    });
  const fps = input.fps ?? 30;
  if (input.duration > MAX_ESTIMATE_SECONDS || fps > MAX_ESTIMATE_FPS) {
    throw new AppError('cost_estimate_unavailable', {
      message: `Billing accepts durations up to ${MAX_ESTIMATE_SECONDS} s and frame rates up to ${MAX_ESTIMATE_FPS} fps.`,
    });
  }
  const frames = Math.ceil(input.duration * fps - 1e-9);
  const dollars =
    price.perFrame !== undefined ? frames * price.perFrame : input.duration * (price.perSecond ?? 0);
  const credits =
    billing === 'credits' ? Math.ceil(input.duration * (price.creditsPerSecond ?? 0) * 100) / 100 : null;
  return {
    model: input.model,
    duration: input.duration,
    fps,
    estimatedFrameCount: frames,
    estimatedGenerationCost: Math.round(dollars * 10000) / 10000,
    estimatedCredits: credits,
  };
}
