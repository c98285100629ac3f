// Users' memberships of organizations (web sessions) and the single-use account links (the first-start
// link that makes the first organization's owner is one). The users themselves are better-auth's (auth_users).
import type { Kysely } from 'kysely';
import type { Database } from './schema.js';
import type { Role } from '../domain/api-keys.js';
import { toOrganization, type Organization } from './organizations.js';

export interface Membership {
  readonly organization: Organization;
  readonly userId: string;
  readonly role: Role;
}

/** A member as the organization's admins see it. */
export interface MemberView {
  readonly userId: string;
  readonly email: string;
  readonly name: string;
  readonly role: Role;
  /** When the user joined the organization. */
  readonly joinedAt: string;
}

export class MemberRepository {
  constructor(private readonly db: Kysely<Database>) {}

  async add(m: { organizationId: string; userId: string; role: Role; createdAt: string }): Promise<void> {
    await this.db
      .insertInto('organization_members')
      .values({ organization_id: m.organizationId, user_id: m.userId, role: m.role, created_at: m.createdAt })
      .execute();
  }

  /** The user's first membership (the oldest): the organization a session acts for. */
  async firstOf(userId: string): Promise<Membership | null> {
    const r = await this.db
      .selectFrom('organization_members as m')
      .innerJoin('organizations as o', 'o.id', 'm.organization_id')
      .selectAll('o')
      .select(['m.role as member_role', 'm.user_id as member_user_id'])
      .where('m.user_id', '=', userId)
      .orderBy('m.created_at')
      .orderBy('m.organization_id')
      .limit(1)
      .executeTakeFirst();
    if (!r) return null;
    return { organization: toOrganization(r), userId: r.member_user_id, role: r.member_role as Role };
  }

  /** The organization's members, oldest first. */
  async listOf(organizationId: string): Promise<MemberView[]> {
    const rows = await this.memberQuery(organizationId)
      .orderBy('m.created_at')
      .orderBy('m.user_id')
      .execute();
    return rows.map(toMemberView);
  }

  async findMember(
    organizationId: string,
    userId: string,
    trx: Kysely<Database> = this.db,
  ): Promise<MemberView | null> {
    const r = await this.memberQuery(organizationId, trx).where('m.user_id', '=', userId).executeTakeFirst();
    return r ? toMemberView(r) : null;
  }

  async findMemberByEmail(organizationId: string, email: string): Promise<MemberView | null> {
    const r = await this.memberQuery(organizationId).where('u.email', '=', email).executeTakeFirst();
    return r ? toMemberView(r) : null;
  }

  private memberQuery(organizationId: string, db: Kysely<Database> = this.db) {
    return db
      .selectFrom('organization_members as m')
      .innerJoin('auth_users as u', 'u.id', 'm.user_id')
      .select(['m.user_id', 'm.role', 'm.created_at', 'u.email', 'u.name'])
      .where('m.organization_id', '=', organizationId);
  }

  async countOwners(organizationId: string, trx: Kysely<Database> = this.db): Promise<number> {
    const r = await trx
      .selectFrom('organization_members')
      .select((eb) => eb.fn.countAll<number | string>().as('n'))
      .where('organization_id', '=', organizationId)
      .where('role', '=', 'owner')
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async setRole(organizationId: string, userId: string, role: Role, trx: Kysely<Database> = this.db) {
    await trx
      .updateTable('organization_members')
      .set({ role })
      .where('organization_id', '=', organizationId)
      .where('user_id', '=', userId)
      .execute();
  }

  async remove(organizationId: string, userId: string, trx: Kysely<Database> = this.db): Promise<void> {
    await trx
      .deleteFrom('organization_members')
      .where('organization_id', '=', organizationId)
      .where('user_id', '=', userId)
      .execute();
  }

  async countOf(organizationId: string): Promise<number> {
    const r = await this.db
      .selectFrom('organization_members')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('organization_id', '=', organizationId)
      .executeTakeFirstOrThrow();
    return Number(r.n);
  }

  async insertAccountLink(l: {
    tokenHash: string;
    organizationId: string;
    role: Role;
    createdAt: string;
    expiresAt: string;
    email?: string | null;
    createdByUserId?: string | null;
  }): Promise<void> {
    await this.db
      .insertInto('account_links')
      .values({
        token_hash: l.tokenHash,
        organization_id: l.organizationId,
        role: l.role,
        created_at: l.createdAt,
        expires_at: l.expiresAt,
        used_at: null,
        email: l.email ?? null,
        created_by_user_id: l.createdByUserId ?? null,
      })
      .execute();
  }

  /**
   * The link's organization, role, address (if bound to one) and inviter (null: the operator) while
   * it is unused and unexpired, else null.
   */
  async findAccountLink(
    tokenHash: string,
    now: string,
  ): Promise<{
    organizationId: string;
    role: Role;
    email: string | null;
    createdByUserId: string | null;
  } | null> {
    const r = await this.db
      .selectFrom('account_links')
      .select(['organization_id', 'role', 'email', 'created_by_user_id'])
      .where('token_hash', '=', tokenHash)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return r
      ? {
          organizationId: r.organization_id,
          role: r.role as Role,
          email: r.email,
          createdByUserId: r.created_by_user_id,
        }
      : null;
  }

  /** Marks the link used; false when another request used it first (or it expired meanwhile). */
  async useAccountLink(tokenHash: string, now: string): Promise<boolean> {
    const r = await this.db
      .updateTable('account_links')
      .set({ used_at: now })
      .where('token_hash', '=', tokenHash)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }
}

function toMemberView(r: { user_id: string; role: string; created_at: string; email: string; name: string }) {
  return { userId: r.user_id, email: r.email, name: r.name, role: r.role as Role, joinedAt: r.created_at };
}
