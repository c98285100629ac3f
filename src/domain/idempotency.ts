// Idempotency-Key rules (spec: Idempotent creation). Pure.
import { createHash } from 'node:crypto';
import { AppError } from './errors.js';

export const IDEMPOTENCY_KEY_RE = /^[A-Za-z0-9._~-]{1,128}$/;
export const IDEMPOTENCY_RETENTION_MS = 7 * 24 * 3600 * 1000;
/** A claim still 'pending' after this long belongs to a request that died mid-way. */
export const IDEMPOTENCY_STALE_MS = 60_000;
/**
 * A dead request's claim expires after this long: a request with the same key then starts afresh
 * (unless the resource turned out to exist, which is replayed). Before that, an uncertain claim
 * answers IDEMPOTENCY_OUTCOME_UNKNOWN.
 */
export const IDEMPOTENCY_PENDING_EXPIRY_MS = 10 * 60_000;

/** The header value, or null when absent; 400 when repeated or malformed. */
export function parseIdempotencyKey(header: string | string[] | undefined): string | null {
  if (header === undefined) return null;
  if (Array.isArray(header)) {
    throw new AppError('invalid_request', {
      field: 'Idempotency-Key',
      message: 'Send exactly one Idempotency-Key header.',
    });
  }
  // Node joins repeated headers with ", "; a comma cannot appear in a valid key.
  if (!IDEMPOTENCY_KEY_RE.test(header)) {
    throw new AppError('invalid_request', {
      field: 'Idempotency-Key',
      message: 'Idempotency-Key must be 1 to 128 characters of A-Z a-z 0-9 . _ ~ - (exactly one header).',
    });
  }
  return header;
}

/** JSON with object keys sorted at every level, so key order never changes a fingerprint. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value))
    return `[${value.map((v) => canonicalJson(v === undefined ? null : v)).join(',')}]`;
  const entries = Object.entries(value as Record<string, unknown>)
    .filter(([, v]) => v !== undefined)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
}

export function fingerprint(payload: unknown): string {
  return createHash('sha256').update(canonicalJson(payload)).digest('hex');
}

export type IdempotencyState = 'pending' | 'done';

export interface IdempotencyRecord {
  organizationId: string;
  scope: string;
  key: string;
  fingerprint: string;
  state: IdempotencyState;
  resourceId: string | null;
  createdAt: string;
  expiresAt: string;
}

export type ReplayDecision =
  | { kind: 'conflict' }
  | { kind: 'in_progress' }
  | { kind: 'outcome_unknown'; resourceId: string | null }
  | { kind: 'expired'; resourceId: string | null }
  | { kind: 'replay'; resourceId: string };

/** What to answer when a key is already bound. */
export function decideReplay(
  existing: IdempotencyRecord,
  incomingFingerprint: string,
  nowMs: number,
): ReplayDecision {
  if (existing.fingerprint !== incomingFingerprint) return { kind: 'conflict' };
  if (existing.state === 'done' && existing.resourceId)
    return { kind: 'replay', resourceId: existing.resourceId };
  const age = nowMs - Date.parse(existing.createdAt);
  if (age < IDEMPOTENCY_STALE_MS) return { kind: 'in_progress' };
  if (age < IDEMPOTENCY_PENDING_EXPIRY_MS)
    return { kind: 'outcome_unknown', resourceId: existing.resourceId };
  return { kind: 'expired', resourceId: existing.resourceId };
}
