// better-auth, configured for this service: email and password, one-time codes by email, sessions in
// http-only SameSite cookies, on the service's own Kysely database (tables of migration 0017, in
// snake_case). Rate limits are the gatekeeper's (the spec's table, Redis when configured), not
// better-auth's own.
import { betterAuth } from 'better-auth';
import { emailOTP } from 'better-auth/plugins';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { SessionsConfig } from '../config.js';
import type { Mailer } from './mailer.js';

/** One-time codes last this long. */
export const CODE_MINUTES = 5;
/** Wrong tries of one code before it is spent (a new code must be asked for). */
export const CODE_ATTEMPTS = 3;

const TIMES = { createdAt: 'created_at', updatedAt: 'updated_at' } as const;

export interface BetterAuthDeps {
  readonly kysely: Kysely<any>;
  readonly dialect: 'sqlite' | 'postgres';
  readonly publicUrl: string;
  readonly config: SessionsConfig;
  /** A secret of this server (derived from the signing secret): signs cookies and encrypts tokens. */
  readonly secret: string;
  readonly mailer: Mailer;
  readonly logger: Logger;
  /** Called once for every new user, inside better-auth's creation of it. */
  readonly onUserCreated: (user: { id: string; email: string }) => Promise<void>;
}

export function createBetterAuth(d: BetterAuthDeps) {
  const log = d.logger;
  return betterAuth({
    appName: 'lipsync',
    baseURL: d.publicUrl,
    basePath: '/api/auth',
    secret: d.secret,
    trustedOrigins: [...d.config.trustedOrigins],
    database: { db: d.kysely, type: d.dialect },
    telemetry: { enabled: false },
    rateLimit: { enabled: false },
    logger: {
      level: 'warn',
      log: (level, message) => {
        if (level === 'error') log.error({ component: 'auth' }, message);
        else log.warn({ component: 'auth' }, message);
      },
    },
    user: {
      modelName: 'auth_users',
      fields: { emailVerified: 'email_verified', ...TIMES },
    },
    session: {
      modelName: 'auth_sessions',
      fields: {
        expiresAt: 'expires_at',
        ipAddress: 'ip_address',
        userAgent: 'user_agent',
        userId: 'user_id',
        ...TIMES,
      },
      expiresIn: Math.round(d.config.ttlMs / 1000),
      // A session lasts the configured time from sign-in; using it does not extend it.
      disableSessionRefresh: true,
    },
    account: {
      modelName: 'auth_accounts',
      fields: {
        accountId: 'account_id',
        providerId: 'provider_id',
        userId: 'user_id',
        accessToken: 'access_token',
        refreshToken: 'refresh_token',
        idToken: 'id_token',
        accessTokenExpiresAt: 'access_token_expires_at',
        refreshTokenExpiresAt: 'refresh_token_expires_at',
        ...TIMES,
      },
    },
    verification: {
      modelName: 'auth_verifications',
      fields: { expiresAt: 'expires_at', ...TIMES },
    },
    emailAndPassword: {
      enabled: true,
      disableSignUp: !d.config.signUp,
      // The address is proved by a code before the first sign-in; and a sign-up with an address that
      // already has an account answers like any other (no account enumeration).
      requireEmailVerification: true,
      autoSignIn: false,
      minPasswordLength: 8,
      maxPasswordLength: 256,
    },
    plugins: [
      emailOTP({
        expiresIn: CODE_MINUTES * 60,
        allowedAttempts: CODE_ATTEMPTS,
        storeOTP: 'hashed',
        disableSignUp: !d.config.signUp,
        overrideDefaultEmailVerification: true,
        sendVerificationOnSignUp: true,
        sendVerificationOTP: async ({ email, otp, type }) => {
          try {
            await d.mailer.sendCode({ to: email, code: otp, purpose: type, expiresInMinutes: CODE_MINUTES });
          } catch (err) {
            // better-auth answers the request without waiting for the mail: the operator learns here.
            log.error(
              { err: { message: (err as Error).message }, to: email },
              'sending a one-time code failed',
            );
            throw err;
          }
        },
      }),
    ],
    advanced: {
      cookiePrefix: 'lipsync',
      useSecureCookies: d.publicUrl.startsWith('https:'),
      defaultCookieAttributes: { httpOnly: true, sameSite: 'lax' },
    },
    databaseHooks: {
      user: {
        create: {
          after: async (user) => {
            await d.onUserCreated({ id: user.id, email: user.email });
          },
        },
      },
    },
  });
}

export type BetterAuth = ReturnType<typeof createBetterAuth>;
