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

const PRICE_FIELDS = ['perSecond', 'perFrame', 'creditsPerSecond'] as const;

/**
 * The price table of the models served: a pricing file's entries (parsed JSON) laid over the built-in
 * ones field by field, so that an entry naming only perFrame keeps the model's credits. Every served
 * model must end up with a dollar price (perSecond or perFrame) and creditsPerSecond, each a finite
 * number ≥ 0: a model without one would be billed 0 without anybody having said so. Returns the table,
 * or the problems found.
 */
export function buildPriceTable(
  overrides: unknown,
  servedModels: readonly string[],
): { prices: PriceTable; problems: string[] } {
  const problems: string[] = [];
  const table: Record<string, ModelPrice> = {};
  for (const [model, price] of Object.entries(DEFAULT_PRICES)) table[model] = { ...price };
  if (typeof overrides !== 'object' || overrides === null || Array.isArray(overrides)) {
    problems.push('the pricing file must hold a JSON object of model → price');
    return { prices: table, problems };
  }
  for (const [model, entry] of Object.entries(overrides)) {
    if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) {
      problems.push(`the price of ${JSON.stringify(model)} must be an object`);
      continue;
    }
    const price: ModelPrice = { ...(Object.hasOwn(table, model) ? table[model] : {}) };
    for (const [field, value] of Object.entries(entry)) {
      if (!(PRICE_FIELDS as readonly string[]).includes(field)) {
        problems.push(`the price of ${JSON.stringify(model)} has an unknown field ${JSON.stringify(field)}`);
      } else if (typeof value !== 'number' || !Number.isFinite(value) || value < 0) {
        problems.push(`${JSON.stringify(model)}.${field} must be a number ≥ 0`);
      } else {
        price[field as (typeof PRICE_FIELDS)[number]] = value;
      }
    }
    table[model] = price;
  }
  for (const model of servedModels) {
    const price = priceOf(table, model);
    if (!price) problems.push(`model ${JSON.stringify(model)} is served but has no price`);
    else if (price.perSecond === undefined && price.perFrame === undefined)
      problems.push(`model ${JSON.stringify(model)} has no perSecond or perFrame price`);
    else if (price.creditsPerSecond === undefined)
      problems.push(`model ${JSON.stringify(model)} has no creditsPerSecond price`);
  }
  return { prices: table, problems };
}

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
  // buildPriceTable refused the start for a served model without these; never bill 0 for a missing one.
  const perSecond = price.perSecond;
  if (price.perFrame === undefined && perSecond === undefined)
    throw new Error(`model ${input.model} has no perSecond or perFrame price`);
  const dollars = price.perFrame !== undefined ? frames * price.perFrame : input.duration * perSecond!;
  let credits: number | null = null;
  if (billing === 'credits') {
    if (price.creditsPerSecond === undefined)
      throw new Error(`model ${input.model} has no creditsPerSecond price`);
    credits = Math.ceil(input.duration * price.creditsPerSecond * 100) / 100;
  }
  return {
    model: input.model,
    duration: input.duration,
    fps,
    estimatedFrameCount: frames,
    estimatedGenerationCost: Math.round(dollars * 10000) / 10000,
    estimatedCredits: credits,
  };
}
