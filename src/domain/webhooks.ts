// Webhook signing and retry schedule. Pure.
import { createHmac, timingSafeEqual } from 'node:crypto';

/** The events of the job kinds that notify (webhook_deliveries.event): each kind names its own. */
export const GENERATION_WEBHOOK_EVENT = 'generation.status';
export const BATCH_WEBHOOK_EVENT = 'batch.status';

/** `Webhook-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">` */
export function signWebhook(secret: string, body: string, unixSeconds: number): string {
  const v1 = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${v1}`;
}

/** For receivers (and our tests): checks the signature and that t is within the tolerance. */
export function verifyWebhook(
  secret: string,
  body: string,
  header: string,
  nowSeconds: number,
  toleranceSeconds = 300,
): boolean {
  const parts = Object.fromEntries(header.split(',').map((p) => p.split('=', 2) as [string, string]));
  const t = Number(parts.t);
  if (!Number.isInteger(t) || !parts.v1 || Math.abs(nowSeconds - t) > toleranceSeconds) return false;
  const expected = Buffer.from(signWebhook(secret, body, t).split('v1=')[1], 'hex');
  const got = Buffer.from(parts.v1, 'hex');
  return expected.length === got.length && timingSafeEqual(expected, got);
}

/** Exponential backoff with full jitter: 2^n seconds (capped at 1 h) times a random factor in [0.5, 1]. */
export function nextRetryDelayMs(attempt: number, random: () => number = Math.random): number {
  const base = Math.min(3600_000, 1000 * 2 ** Math.max(0, attempt));
  return Math.round(base * (0.5 + random() * 0.5));
}

export function isDeliverySuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

/** 4xx other than 408/409/425/429 means the receiver refuses the message itself: retrying will not help. */
export function isPermanentFailure(status: number): boolean {
  return status >= 400 && status < 500 && ![408, 409, 425, 429].includes(status);
}

const MASK = '***';

/**
 * A webhook URL as API responses show it: credentials in its user info, the path after its first
 * segment (Slack's /services/T…/B…/<secret>, Discord's /api/webhooks/<id>/<token>) and the values of
 * its query (where receivers put tokens) masked, so that every key of the organization can see where
 * notifications go without learning the receiver's secrets. Deliveries use the stored URL.
 */
export function redactedWebhookUrl(url: string): string {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return MASK;
  }
  if (u.username) u.username = MASK;
  if (u.password) u.password = MASK;
  const [first = '', ...rest] = u.pathname.slice(1).split('/');
  if (rest.some((segment) => segment !== '')) u.pathname = `/${first}/${MASK}`;
  const query = u.search
    .slice(1)
    .split('&')
    .filter((p) => p !== '')
    .map((p) => (p.includes('=') ? `${p.slice(0, p.indexOf('='))}=${MASK}` : MASK));
  u.search = query.length ? `?${query.join('&')}` : '';
  if (u.hash) u.hash = MASK;
  return u.href;
}

/** A display-only form of a secret: its kind prefix and last four characters. */
export function maskSecret(secret: string): string {
  const cut = secret.indexOf('_') + 1;
  return `${secret.slice(0, cut)}${'•'.repeat(8)}${secret.slice(-4)}`;
}
