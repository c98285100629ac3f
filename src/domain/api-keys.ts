// Rules for API keys: format, roles and who may see or manage which key. Pure; no I/O.
import { hash, randomBytes, timingSafeEqual } from 'node:crypto';

export const KEY_PREFIX = 'sk_lipsync_';
export const ROLES = ['owner', 'admin', 'member'] as const;
export type Role = (typeof ROLES)[number];

export function isRole(value: string): value is Role {
  return (ROLES as readonly string[]).includes(value);
}

/** 32 random bytes (256 bits) in base64url behind a recognisable prefix. */
export function generateApiKey(): string {
  return KEY_PREFIX + randomBytes(32).toString('base64url');
}

export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

export function hashesEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a, 'hex');
  const bb = Buffer.from(b, 'hex');
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

/** What a list shows instead of the secret: the prefix plus the first characters. */
export function displayPrefix(key: string): string {
  return key.slice(0, KEY_PREFIX.length + 6);
}

export function normaliseKeyName(name: string | undefined | null): string {
  const trimmed = (name ?? '').trim();
  return trimmed === '' ? 'API key' : trimmed.slice(0, 200);
}

export function looksLikeApiKey(value: string): boolean {
  return value.startsWith(KEY_PREFIX) && value.length >= KEY_PREFIX.length + 43 && value.length <= 200;
}

/** Who acts: an API key, or a signed-in user (keyId null) with the role of their membership. */
export interface KeyActor {
  readonly keyId: string | null;
  readonly userId?: string | null;
  readonly role: Role;
}

export interface KeySubject {
  readonly id: string;
  readonly createdByKeyId: string | null;
  readonly createdByUserId?: string | null;
  readonly role: Role;
}

/** Spec rule 5 for keys and sessions alike: a member's own keys are those it created. */
function createdBy(actor: KeyActor, subject: KeySubject): boolean {
  if (actor.keyId !== null && subject.createdByKeyId === actor.keyId) return true;
  return !!actor.userId && subject.createdByUserId === actor.userId;
}

/** Members see and manage only keys they created; admins and owners every key of the organization. */
export function canManageKey(actor: KeyActor, subject: KeySubject): boolean {
  if (actor.role === 'owner' || actor.role === 'admin') {
    // An admin may not act on an owner key: that would let an admin lock the owner out.
    return !(actor.role === 'admin' && subject.role === 'owner');
  }
  return createdBy(actor, subject);
}

export function canSeeKey(actor: KeyActor, subject: KeySubject): boolean {
  if (actor.role === 'owner' || actor.role === 'admin') return true;
  // A member always sees its own key, whoever created it.
  return createdBy(actor, subject) || subject.id === actor.keyId;
}

/** A key may only create keys of its own role or lower. */
export function canGrantRole(actor: Role, wanted: Role): boolean {
  const rank: Record<Role, number> = { owner: 3, admin: 2, member: 1 };
  return rank[wanted] <= rank[actor];
}

export function isKeyUsable(k: { revokedAt: string | null; expiresAt: string | null }, now: Date): boolean {
  if (k.revokedAt) return false;
  if (k.expiresAt && new Date(k.expiresAt).getTime() <= now.getTime()) return false;
  return true;
}
