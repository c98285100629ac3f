// Use cases for the members of an organization (web-session users): list, invite by email, change a
// role, remove. Role rules live in domain/members.ts; they apply to sessions and API keys alike.
import type { Transaction } from 'kysely';
import type { Store } from '../store/index.js';
import type { Database } from '../store/schema.js';
import type { MemberView } from '../store/members.js';
import type { Organization } from '../store/organizations.js';
import type { AuthContext } from './api-keys.js';
import type { WebSessionService } from './web-sessions.js';
import { isRole, type Role } from '../domain/api-keys.js';
import { AppError } from '../domain/errors.js';
import {
  checkCanChangeRole,
  checkCanInvite,
  checkCanRemove,
  keysOfUser,
  keysToRevoke,
} from '../domain/members.js';

export interface Invitation {
  readonly email: string;
  readonly role: Role;
  readonly expiresAt: string;
  /** `email` when mailed over SMTP; `log` when written to the server log for the operator to pass on. */
  readonly delivery: 'email' | 'log';
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export class MemberService {
  constructor(private readonly deps: { store: Store; webSessions: WebSessionService }) {}

  /** Every member for admins and owners; a member sees only itself (spec rule 5's spirit). */
  async list(auth: AuthContext): Promise<MemberView[]> {
    const all = await this.deps.store.members.listOf(auth.organization.id);
    if (auth.role !== 'member') return all;
    return all.filter((m) => m.userId === auth.session?.userId);
  }

  async invite(auth: AuthContext, input: { email: string; role: string }): Promise<Invitation> {
    const role = roleOf(input.role);
    checkCanInvite(auth.role, role);
    const email = input.email.trim().toLowerCase();
    if (!EMAIL.test(email))
      throw new AppError('invalid_request', { field: 'email', message: 'email must be an email address' });
    if (await this.deps.store.members.findMemberByEmail(auth.organization.id, email))
      throw new AppError('member_exists');
    // The inviter answers for the invitation: a key stands for the user behind it (null: the operator's).
    const inviter = auth.session?.userId ?? auth.key?.createdByUserId ?? null;
    const sent = await this.deps.webSessions.mailInvitation(auth.organization, email, role, inviter);
    return { email, role, ...sent };
  }

  async changeRole(auth: AuthContext, userId: string, next: string): Promise<MemberView> {
    const role = roleOf(next);
    const org = auth.organization;
    return this.deps.store.organizations.exclusive(org.id, async (trx) => {
      const target = await this.find(org, userId, trx);
      // The actor's role and the owners are read under the organization's lock: of two owners
      // demoting each other at once, the second sees the first's demotion and is refused.
      const actor = await this.actorRole(auth, trx);
      checkCanChangeRole(actor, target, role, await this.deps.store.members.countOwners(org.id, trx));
      await this.deps.store.members.setRole(org.id, userId, role, trx);
      if (target.role !== role) await this.revokeKeysOf(org.id, userId, role, trx);
      return { ...target, role };
    });
  }

  async remove(auth: AuthContext, userId: string): Promise<MemberView> {
    const org = auth.organization;
    const member = await this.deps.store.organizations.exclusive(org.id, async (trx) => {
      const target = await this.find(org, userId, trx);
      const actor = await this.actorRole(auth, trx);
      checkCanRemove(actor, target, await this.deps.store.members.countOwners(org.id, trx));
      await this.deps.store.members.remove(org.id, userId, trx);
      await this.revokeKeysOf(org.id, userId, null, trx);
      return target;
    });
    await this.deps.webSessions.userLeft(userId);
    return member;
  }

  private async find(org: Organization, userId: string, trx: Transaction<Database>): Promise<MemberView> {
    const m = await this.deps.store.members.findMember(org.id, userId, trx);
    if (!m) throw new AppError('member_not_found');
    return m;
  }

  /**
   * A signed-in user's role as it is now (the request's was read before the lock, and may have been
   * lowered or removed since); an API key acts with its own role.
   */
  private async actorRole(auth: AuthContext, trx: Transaction<Database>): Promise<Role> {
    if (!auth.session) return auth.role;
    const me = await this.deps.store.members.findMember(auth.organization.id, auth.session.userId, trx);
    if (!me) throw new AppError('forbidden', { message: 'You are no longer a member of this organization.' });
    return me.role;
  }

  /**
   * A removed user's keys, and a demoted user's keys above the new role, are revoked in the same
   * transaction: a key must not keep powers its creator lost, keys made by those keys included.
   */
  private async revokeKeysOf(
    organizationId: string,
    userId: string,
    role: Role | null,
    trx: Transaction<Database>,
  ): Promise<void> {
    const keys = await this.deps.store.apiKeys.listByOrganization(organizationId, trx);
    const live = keysOfUser(keys, userId).filter((k) => !k.revokedAt);
    const at = new Date().toISOString();
    for (const k of keysToRevoke(live, role)) await this.deps.store.apiKeys.revoke(k.id, at, trx);
  }
}

function roleOf(value: string): Role {
  if (!isRole(value))
    throw new AppError('invalid_request', { field: 'role', message: 'role must be owner, admin or member' });
  return value;
}
