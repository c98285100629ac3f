// Use cases for the members of an organization (web-session users): list, invite by email, change a
// role, remove. Role rules live in domain/members.ts; they apply to sessions and API keys alike.
import type { Transaction } from 'kysely';
import type { Store } from '../store/index.js';
import type { Database } from '../store/schema.js';
import type { MemberView } from '../store/members.js';
import type { Organization } from '../store/organizations.js';
import type { ApiKeyService, AuthContext } from './api-keys.js';
import type { WebSessionService } from './web-sessions.js';
import { isRole, type Role } from '../domain/api-keys.js';
import { AppError } from '../domain/errors.js';
import { checkCanChangeRole, checkCanInvite, checkCanRemove, keysToRevoke } from '../domain/members.js';

export interface Invitation {
  readonly email: string;
  readonly role: Role;
  readonly expiresAt: string;
  /** `email` when mailed over SMTP; `log` when written to the server log for the operator to pass on. */
  readonly delivery: 'email' | 'log';
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export class MemberService {
  constructor(
    private readonly deps: { store: Store; webSessions: WebSessionService; apiKeys: ApiKeyService },
  ) {}

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
    const sent = await this.deps.webSessions.mailInvitation(auth.organization, email, role);
    return { email, role, ...sent };
  }

  async changeRole(auth: AuthContext, userId: string, next: string): Promise<MemberView> {
    const role = roleOf(next);
    const org = auth.organization;
    const { member, revoke } = await this.deps.store.organizations.exclusive(org.id, async (trx) => {
      const target = await this.find(org, userId, trx);
      // Counted under the organization's lock: two owners demoting each other cannot both succeed.
      checkCanChangeRole(auth.role, target, role, await this.deps.store.members.countOwners(org.id, trx));
      await this.deps.store.members.setRole(org.id, userId, role, trx);
      return { member: { ...target, role }, revoke: target.role !== role };
    });
    if (revoke) await this.revokeKeysOf(org.id, userId, role);
    return member;
  }

  async remove(auth: AuthContext, userId: string): Promise<MemberView> {
    const org = auth.organization;
    const member = await this.deps.store.organizations.exclusive(org.id, async (trx) => {
      const target = await this.find(org, userId, trx);
      checkCanRemove(auth.role, target, await this.deps.store.members.countOwners(org.id, trx));
      await this.deps.store.members.remove(org.id, userId, trx);
      return target;
    });
    await this.revokeKeysOf(org.id, userId, null);
    await this.deps.webSessions.userLeft(userId);
    return member;
  }

  private async find(org: Organization, userId: string, trx: Transaction<Database>): Promise<MemberView> {
    const m = await this.deps.store.members.findMember(org.id, userId, trx);
    if (!m) throw new AppError('member_not_found');
    return m;
  }

  /**
   * A removed user's keys, and a demoted user's keys above the new role, are revoked: a key must not
   * keep powers its creator lost.
   */
  private async revokeKeysOf(organizationId: string, userId: string, role: Role | null): Promise<void> {
    const keys = await this.deps.apiKeys.list(organizationId);
    const theirs = keys.filter((k) => k.createdByUserId === userId && !k.revokedAt);
    for (const k of keysToRevoke(theirs, role)) await this.deps.apiKeys.revoke(k.id);
  }
}

function roleOf(value: string): Role {
  if (!isRole(value))
    throw new AppError('invalid_request', { field: 'role', message: 'role must be owner, admin or member' });
  return value;
}
