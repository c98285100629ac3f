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
