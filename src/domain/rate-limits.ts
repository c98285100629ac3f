// Request-rate rules from the spec's Limits section, plus our documented default for the others.
import { AppError } from './errors.js';

export interface RateRule {
  /** Counter name; endpoints counted together share one. */
  readonly bucket: string;
  readonly max: number;
  readonly windowMs: number;
}

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

/** One row of the spec's table, one counter: sign-in, sign-up and one-time codes together. */
const AUTH_SIGN_IN: RateRule = { bucket: 'auth_sign_in', max: 10, windowMs: MINUTE };

export const TABLED_RATE_RULES: Readonly<Record<string, RateRule>> = {
  'POST /v2/tts': { bucket: 'tts', max: 60, windowMs: MINUTE },
  'POST /v2/tts/jobs': { bucket: 'tts_jobs', max: 60, windowMs: MINUTE },
  'POST /v2/voices': { bucket: 'voices_create', max: 10, windowMs: HOUR },
  'POST /v2/assets/upload': { bucket: 'assets_upload', max: 120, windowMs: MINUTE },
  // better-auth's code paths under /email-otp/ count with the spec's /otp/ ones.
  'POST /api/auth/sign-in/*': AUTH_SIGN_IN,
  'POST /api/auth/sign-up/*': AUTH_SIGN_IN,
  'POST /api/auth/otp/*': AUTH_SIGN_IN,
  'POST /api/auth/email-otp/*': AUTH_SIGN_IN,
  'GET /api/auth/session': { bucket: 'auth_session', max: 60, windowMs: MINUTE },
};

/** Sign-in, sign-up and code requests naming one email address, from any IP. */
export const ACCOUNT_RATE_RULE: RateRule = { bucket: 'auth_account', max: 10, windowMs: MINUTE };

export function ruleFor(method: string, routeUrl: string, defaultPerMinute: number): RateRule {
  return (
    TABLED_RATE_RULES[`${method} ${routeUrl}`] ?? {
      bucket: 'default',
      max: defaultPerMinute,
      windowMs: MINUTE,
    }
  );
}

/** Fixed windows aligned to the epoch: every process computes the same window for the same instant. */
export function windowStart(nowMs: number, windowMs: number): number {
  return Math.floor(nowMs / windowMs) * windowMs;
}

export interface RateDecision {
  readonly allowed: boolean;
  readonly limit: number;
  readonly remaining: number;
  /** When the current window ends (epoch ms). */
  readonly resetAtMs: number;
  /** Whole seconds until the window ends, at least 1. */
  readonly retryAfterSeconds: number;
}

export function decide(count: number, rule: RateRule, nowMs: number): RateDecision {
  const resetAtMs = windowStart(nowMs, rule.windowMs) + rule.windowMs;
  return {
    allowed: count <= rule.max,
    limit: rule.max,
    remaining: Math.max(0, rule.max - count),
    resetAtMs,
    retryAfterSeconds: Math.max(1, Math.ceil((resetAtMs - nowMs) / 1000)),
  };
}

/** The spec's 429 body: rate_limit_exceeded with retryAfter, resetTime and a Retry-After header. */
export function rateLimitedError(d: RateDecision, rule: RateRule): AppError {
  return new AppError('rate_limit_exceeded', {
    message: `Rate limit of ${d.limit} requests per ${Math.round(rule.windowMs / 1000)} s exceeded.`,
    retryAfter: d.retryAfterSeconds,
    headers: { 'Retry-After': String(d.retryAfterSeconds) },
    details: { error: 'Too Many Requests', resetTime: new Date(d.resetAtMs).toISOString() },
  });
}
