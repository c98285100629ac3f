// Who may invite, re-role or remove the members of an organization (web-session users). Pure; no I/O.
// The same rules apply to a signed-in user and to an API key with that role.
import { AppError } from './errors.js';
import { canGrantRole, type Role } from './api-keys.js';

/** Members manage nobody; admins and owners invite up to their own role (canGrantRole). */
export function checkCanInvite(actor: Role, role: Role): void {
  if (actor === 'member') throw forbidden('a member cannot invite people');
  if (!canGrantRole(actor, role)) throw forbidden(`an ${actor} cannot invite an ${role}`);
}

/**
 * Whether an invitation still stands when claimed: its inviter (null: the operator) must still be a
 * member (`inviterRole` null: not any more) whose role may invite this role today.
 */
export function invitationStands(inviter: string | null, inviterRole: Role | null, role: Role): boolean {
  if (inviter === null) return true;
  return inviterRole !== null && inviterRole !== 'member' && canGrantRole(inviterRole, role);
}

/**
 * Changing a member's role: an admin may not touch an owner nor make one (it could lock the owners
 * out); nobody demotes the last owner (the organization would have no one to manage it).
 */
export function checkCanChangeRole(
  actor: Role,
  target: { role: Role },
  next: Role,
  ownerCount: number,
): void {
  if (actor === 'member') throw forbidden('a member cannot change roles');
  if (actor === 'admin' && (target.role === 'owner' || next === 'owner'))
    throw forbidden('only an owner can make or change an owner');
  if (target.role === 'owner' && next !== 'owner' && ownerCount <= 1) throw new AppError('last_owner');
}

/** Removing a member: the same rules as a demotion to nothing. */
export function checkCanRemove(actor: Role, target: { role: Role }, ownerCount: number): void {
  if (actor === 'member') throw forbidden('a member cannot remove people');
  if (actor === 'admin' && target.role === 'owner') throw forbidden('only an owner can remove an owner');
  if (target.role === 'owner' && ownerCount <= 1) throw new AppError('last_owner');
}

/** Organization-wide settings (the webhook secret) are for admins and owners. */
export function checkCanManageOrganization(actor: Role, what: string): void {
  if (actor === 'member') throw forbidden(`a member cannot ${what}`);
}

/**
 * The keys a user answers for: those the user created, and those created by such a key, however
 * deep (a key made with a key would otherwise outlive its maker's removal). Revoked keys included,
 * since a key made before its parent was revoked still descends from the user.
 */
export function keysOfUser<
  K extends { id: string; createdByKeyId: string | null; createdByUserId: string | null },
>(keys: K[], userId: string): K[] {
  const theirs = new Set(keys.filter((k) => k.createdByUserId === userId).map((k) => k.id));
  for (let grew = true; grew;) {
    grew = false;
    for (const k of keys)
      if (!theirs.has(k.id) && k.createdByKeyId !== null && theirs.has(k.createdByKeyId)) {
        theirs.add(k.id);
        grew = true;
      }
  }
  return keys.filter((k) => theirs.has(k.id));
}

/** Keys a user created that outrank the user's new role (none when removed: every key they made). */
export function keysToRevoke<K extends { role: Role }>(created: K[], newRole: Role | null): K[] {
  const rank: Record<Role, number> = { owner: 3, admin: 2, member: 1 };
  return created.filter((k) => newRole === null || rank[k.role] > rank[newRole]);
}

const forbidden = (message: string) =>
  new AppError('forbidden', {
    message: `Your role does not allow this: ${message}.`,
    suggestion: 'Ask an owner or admin of the organization.',
  });
