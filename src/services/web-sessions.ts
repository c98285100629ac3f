// Web sessions (/api/auth/*): better-auth answers the sign-up, sign-in, one-time code, sign-out and
// session endpoints; this service passes requests to it under the spec's paths, turns its refusals
// into catalogue errors (one answer for an unknown email and a wrong password or code), ends every
// session of a user at sign-out, resolves a session cookie into the AuthContext of /v2 calls, and
// makes accounts from single-use account links (the first-start link makes the first owner's).
import { AsyncLocalStorage } from 'node:async_hooks';
import { createHmac, hash, randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../config.js';
import type { Db } from '../store/database.js';
import type { Store } from '../store/index.js';
import type { Role } from '../domain/api-keys.js';
import type { AuthContext } from './api-keys.js';
import type { OrganizationService } from './organizations.js';
import type { RateLimiter } from './rate-limiter.js';
import { AppError } from '../domain/errors.js';
import { invitationStands } from '../domain/members.js';
import { ACCOUNT_RATE_RULE, rateLimitedError } from '../domain/rate-limits.js';
import { createBetterAuth, type BetterAuth } from '../auth/better-auth.js';
import { createMailer, type Mailer } from '../auth/mailer.js';

/** How long an account link (the first-start link among them) works. */
export const ACCOUNT_LINK_HOURS = 24;

/** The spec's paths where better-auth's differ. */
const ALIASES: Readonly<Record<string, string>> = {
  '/api/auth/session': '/api/auth/get-session',
  '/api/auth/otp/send': '/api/auth/email-otp/send-verification-otp',
  '/api/auth/otp/verify-email': '/api/auth/email-otp/verify-email',
  '/api/auth/otp/check': '/api/auth/email-otp/check-verification-otp',
};

/** better-auth's codes for a failed sign-in: all answered alike (no account enumeration). */
const SIGN_IN_FAILURES = new Set([
  'INVALID_EMAIL_OR_PASSWORD',
  'INVALID_PASSWORD',
  'INVALID_EMAIL',
  'USER_NOT_FOUND',
  'CREDENTIAL_ACCOUNT_NOT_FOUND',
  'INVALID_OTP',
  'OTP_EXPIRED',
  'TOO_MANY_ATTEMPTS',
]);

/** better-auth's own CSRF refusals (a browser request without a trusted Origin). */
const CROSS_SITE = new Set([
  'INVALID_ORIGIN',
  'MISSING_OR_NULL_ORIGIN',
  'CROSS_SITE_NAVIGATION_LOGIN_BLOCKED',
]);

export interface AuthRequest {
  readonly method: string;
  /** Path and query, as received. */
  readonly url: string;
  readonly headers: Readonly<Record<string, string | string[] | undefined>>;
  readonly body: unknown;
  readonly ip: string;
}

export interface AuthAnswer {
  readonly status: number;
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly body: unknown;
}

const accountLinkHash = (token: string): string => hash('sha256', token, 'hex');

function emailOf(body: unknown): string | null {
  const e = (body as { email?: unknown } | null)?.email;
  return typeof e === 'string' && e.trim() !== '' ? e.trim().toLowerCase() : null;
}

export class WebSessionService {
  readonly auth: BetterAuth;
  private readonly mailer: Mailer;
  /** Set while the first-start link creates its user: the membership that user gets. */
  private readonly joining = new AsyncLocalStorage<{ organizationId: string; role: Role }>();

  constructor(
    private readonly deps: {
      config: Config;
      db: Db;
      store: Store;
      organizations: OrganizationService;
      rateLimiter: RateLimiter;
      logger: Logger;
      signingSecret: string;
    },
  ) {
    const { config, logger } = deps;
    this.mailer = createMailer(config.sessions, logger.child({ component: 'mail' }));
    this.auth = createBetterAuth({
      kysely: deps.db.kysely,
      dialect: deps.db.dialect,
      publicUrl: config.publicUrl,
      config: config.sessions,
      // Its own key, so that no cookie or token of better-auth is signed with the URL signing key.
      secret: createHmac('sha256', deps.signingSecret).update('lipsync web sessions').digest('base64url'),
      mailer: this.mailer,
      logger: logger.child({ component: 'auth' }),
      onUserCreated: (u) => this.userCreated(u),
    });
  }

  /** Every new user is a member: of the link's organization, else the owner of a new draft one. */
  private async userCreated(user: { id: string; email: string }): Promise<void> {
    const now = new Date().toISOString();
    const joining = this.joining.getStore();
    if (joining) {
      await this.deps.store.members.add({ ...joining, userId: user.id, createdAt: now });
      return;
    }
    const org = await this.deps.organizations.create({
      name: `${user.email}'s organization`,
      plan: 'free',
      draft: true,
    });
    await this.deps.store.members.add({
      organizationId: org.id,
      userId: user.id,
      role: 'owner',
      createdAt: now,
    });
    this.deps.logger.info(
      { organizationId: org.id, userId: user.id },
      'new account: its organization is a draft until the operator activates it (lipsync org update ID --no-draft)',
    );
  }

  /** An /api/auth/* request, answered by better-auth. */
  async handle(req: AuthRequest): Promise<AuthAnswer> {
    const [path, query] = splitUrl(req.url);
    const target = ALIASES[path] ?? path;
    const email = req.method === 'POST' ? emailOf(req.body) : null;
    // Per account as well as per IP: changing IP does not buy more password or code guesses.
    if (email && /^\/api\/auth\/(sign-in|sign-up|email-otp)\//.test(target)) {
      const d = await this.deps.rateLimiter.hit(ACCOUNT_RATE_RULE, `account:${email}`);
      if (!d.allowed) throw rateLimitedError(d, ACCOUNT_RATE_RULE);
    }
    const signingOut = target === '/api/auth/sign-out' ? await this.sessionOf(req.headers) : null;

    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) {
      if (value === undefined || name === 'content-length' || name === 'x-forwarded-for') continue;
      headers.set(name, Array.isArray(value) ? value.join(', ') : value);
    }
    // better-auth records the client address of a session from this header.
    headers.set('x-forwarded-for', req.ip);
    const hasBody = req.method !== 'GET' && req.method !== 'HEAD';
    if (hasBody) headers.set('content-type', 'application/json');
    const res = await this.auth.handler(
      new Request(`${this.deps.config.publicUrl}${target}${query}`, {
        method: req.method,
        headers,
        body: hasBody ? JSON.stringify(req.body ?? {}) : undefined,
      }),
    );

    const text = await res.text();
    let body: unknown = null;
    if (text !== '') {
      try {
        body = JSON.parse(text);
      } catch {
        body = null;
      }
    }
    if (res.status >= 400) throw this.refusal(res.status, body);
    if (signingOut) await this.endAllSessions(signingOut.userId);
    const out: [string, string][] = [];
    res.headers.forEach((value, name) => {
      if (name === 'set-cookie' || name === 'content-length' || name === 'content-type') return;
      out.push([name, value]);
    });
    for (const c of res.headers.getSetCookie()) out.push(['set-cookie', c]);
    if (target === '/api/auth/get-session') body = await this.sessionView(body);
    return { status: res.status, headers: out, body: withoutTokens(body) };
  }

  private refusal(status: number, body: unknown): AppError {
    const code = (body as { code?: unknown } | null)?.code;
    const message = (body as { message?: unknown } | null)?.message;
    if (typeof code === 'string' && SIGN_IN_FAILURES.has(code)) return new AppError('sign_in_failed');
    if (code === 'EMAIL_NOT_VERIFIED') return new AppError('email_not_verified');
    if (code === 'EMAIL_PASSWORD_SIGN_UP_DISABLED') return new AppError('sign_up_disabled');
    if (typeof code === 'string' && CROSS_SITE.has(code)) return new AppError('cross_site_request');
    if (status === 401) return new AppError('sign_in_failed');
    if (status === 404) return new AppError('route_not_found');
    if (status >= 500) return new AppError('internal_error', { cause: body });
    return new AppError('invalid_request', {
      status: status >= 400 && status < 500 ? status : 400,
      ...(typeof message === 'string' && message.length < 300 ? { message } : {}),
    });
  }

  /** GET /api/auth/session: the session and user, with the organization and role they act with. */
  private async sessionView(body: unknown): Promise<unknown> {
    const user = (body as { user?: { id?: unknown } } | null)?.user;
    if (!user || typeof user.id !== 'string') return null;
    const m = await this.deps.store.members.firstOf(user.id);
    return {
      ...(body as object),
      organization: m
        ? { id: m.organization.id, name: m.organization.name, draft: m.organization.draft }
        : null,
      role: m?.role ?? null,
    };
  }

  private async sessionOf(headers: AuthRequest['headers']): Promise<{ id: string; userId: string } | null> {
    const cookie = headers.cookie;
    if (typeof cookie !== 'string' || !cookie.includes('lipsync.session_token=')) return null;
    const h = new Headers({ cookie });
    const s = await this.auth.api.getSession({ headers: h });
    return s ? { id: s.session.id, userId: s.user.id } : null;
  }

  /** Signing out anywhere ends every session of the user (every browser, every device). */
  private async endAllSessions(userId: string): Promise<void> {
    const ctx = await this.auth.$context;
    await ctx.internalAdapter.deleteUserSessions(userId);
  }

  /**
   * The AuthContext of a request that carries a session cookie; null without a live session or for
   * a user who is a member of no organization.
   */
  async authenticate(headers: AuthRequest['headers']): Promise<AuthContext | null> {
    const cookie = headers.cookie;
    if (typeof cookie !== 'string' || !cookie.includes('lipsync.session_token=')) return null;
    const s = await this.auth.api.getSession({ headers: new Headers({ cookie }) });
    if (!s) return null;
    const m = await this.deps.store.members.firstOf(s.user.id);
    if (!m) return null;
    return {
      organization: m.organization,
      key: null,
      session: {
        id: s.session.id,
        userId: s.user.id,
        email: s.user.email,
        name: s.user.name,
        expiresAt: new Date(s.session.expiresAt).toISOString(),
      },
      role: m.role,
    };
  }

  /**
   * A single-use link (24 hours) that makes an account with this role in the organization; shown once.
   * With `email` (an invitation) only an account with that address can use it; with `invitedBy`, only
   * while that user may still grant the role.
   */
  async createAccountLink(
    organizationId: string,
    role: Role = 'owner',
    email?: string,
    invitedBy: string | null = null,
  ): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    const now = Date.now();
    await this.deps.store.members.insertAccountLink({
      tokenHash: accountLinkHash(token),
      organizationId,
      role,
      createdAt: new Date(now).toISOString(),
      expiresAt: new Date(now + ACCOUNT_LINK_HOURS * 3600_000).toISOString(),
      email: email?.trim().toLowerCase() ?? null,
      createdByUserId: invitedBy,
    });
    // In the fragment: browsers never send it, so it reaches no request log or proxy.
    return `${this.deps.config.publicUrl}/setup#${token}`;
  }

  /**
   * Mails an account link for this role to `email` (SMTP, or the server log without it); the link
   * itself is never returned, so that only the address's owner (or the operator) can use it.
   */
  async mailInvitation(
    organization: { id: string; name: string },
    email: string,
    role: Role,
    invitedBy: string | null,
  ): Promise<{ expiresAt: string; delivery: 'email' | 'log' }> {
    const ctx = await this.auth.$context;
    // The link could not make this account (claimAccountLink refuses a taken address): say so now.
    if (await ctx.internalAdapter.findUserByEmail(email))
      throw new AppError('invalid_request', {
        field: 'email',
        message: 'an account with this email exists already; invite another address',
      });
    const link = await this.createAccountLink(organization.id, role, email, invitedBy);
    const expiresAt = new Date(Date.now() + ACCOUNT_LINK_HOURS * 3600_000).toISOString();
    try {
      await this.mailer.sendInvitation({
        to: email,
        link,
        organizationName: organization.name,
        role,
        expiresInHours: ACCOUNT_LINK_HOURS,
      });
    } catch (err) {
      throw new AppError('invitation_not_sent', { cause: err });
    }
    return { expiresAt, delivery: this.mailer.delivery };
  }

  /**
   * After a user left an organization: their sessions end at once, and a user who is a member of
   * nothing any more is deleted (their address can then be invited again).
   */
  async userLeft(userId: string): Promise<void> {
    const ctx = await this.auth.$context;
    await ctx.internalAdapter.deleteUserSessions(userId);
    if (!(await this.deps.store.members.firstOf(userId))) await ctx.internalAdapter.deleteUser(userId);
  }

  /** POST /api/auth/account-link: the link's token, and the new account's email, password and name. */
  async claimAccountLink(input: {
    token: string;
    email: string;
    password: string;
    name?: string;
  }): Promise<{ organizationId: string; email: string; role: Role }> {
    const tokenHash = accountLinkHash(input.token);
    const now = new Date().toISOString();
    const link = await this.deps.store.members.findAccountLink(tokenHash, now);
    if (!link) throw new AppError('account_link_invalid');
    const { organizationId, role } = link;
    // An invitation lasts only as long as its sender's right to make it (removed or demoted: refused).
    const inviter = link.createdByUserId
      ? await this.deps.store.members.findMember(organizationId, link.createdByUserId)
      : null;
    if (!invitationStands(link.createdByUserId, inviter?.role ?? null, role))
      throw new AppError('account_link_invalid');
    const email = input.email.trim().toLowerCase();
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(email))
      throw new AppError('invalid_request', { field: 'email', message: 'email must be an email address' });
    // An invitation went to one address: the mail proves that address, and only that one.
    if (link.email !== null && link.email !== email)
      throw new AppError('invalid_request', {
        field: 'email',
        message: 'this invitation is for another email address; use the address the invitation was sent to',
      });
    const ctx = await this.auth.$context;
    const { minPasswordLength, maxPasswordLength } = ctx.password.config;
    if (input.password.length < minPasswordLength || input.password.length > maxPasswordLength)
      throw new AppError('invalid_request', {
        field: 'password',
        message: `password must be ${minPasswordLength} to ${maxPasswordLength} characters`,
      });
    if (await ctx.internalAdapter.findUserByEmail(email))
      throw new AppError('invalid_request', {
        field: 'email',
        message: 'an account with this email exists already; use another address',
      });
    // Used before the account exists: of two requests with the same link, one wins.
    if (!(await this.deps.store.members.useAccountLink(tokenHash, now)))
      throw new AppError('account_link_invalid');
    const passwordHash = await ctx.password.hash(input.password);
    await this.joining.run({ organizationId, role }, async () => {
      // The link came from the operator (the server's console or the CLI): the address needs no code.
      const user = await ctx.internalAdapter.createUser(
        {
          email,
          name: input.name?.trim() || email,
          emailVerified: true,
        },
        { method: 'admin' },
      );
      await ctx.internalAdapter.linkAccount({
        userId: user.id,
        providerId: 'credential',
        accountId: user.id,
        password: passwordHash,
      });
    });
    return { organizationId, email, role };
  }

  async close(): Promise<void> {
    await this.mailer.close();
  }
}

function splitUrl(url: string): [string, string] {
  const q = url.indexOf('?');
  return q < 0 ? [url, ''] : [url.slice(0, q), url.slice(q)];
}

/** The session token travels only in the http-only cookie, never in a body page scripts can read. */
function withoutTokens(body: unknown): unknown {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return body;
  const { token: _token, ...rest } = body as Record<string, unknown>;
  const session = rest.session as Record<string, unknown> | undefined;
  if (session && typeof session === 'object') {
    const { token: _t, ...s } = session;
    rest.session = s;
  }
  return rest;
}
