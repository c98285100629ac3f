// Web sessions (/api/auth/*) through the app: sign-up with a code mailed over SMTP (a local SMTP
// server, the real nodemailer adapter), sign-in by password or code, sign-out everywhere, the session
// cookie on /v2 calls with its Origin check, rate limits, expiry, roles, no account enumeration, and
// the single-use first-start link.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import {
  assertRateLimited,
  createKey,
  createTestServices,
  startFakeSmtp,
  waitForFreshWindow,
  type FakeSmtp,
  type TestServices,
} from '../helpers/index.js';
import { bootstrapFirstOrganization } from '../../src/services/bootstrap.js';
import type { Role } from '../../src/domain/api-keys.js';

const PASSWORD = 'correct horse battery';

describe(`web sessions (${process.env.TEST_DATABASE ?? 'sqlite'})`, () => {
  let t: TestServices;
  let smtp: FakeSmtp;
  let origin: string;
  let ipCounter = 0;
  /** Every test its own client address: the per-IP counters of one test do not reach another. */
  const freshIp = () => `198.51.100.${++ipCounter}`;
  let firstOrg: { id: string; ownerLink: string; key: string };

  before(async () => {
    smtp = await startFakeSmtp();
    t = await createTestServices({
      env: { LIPSYNC_SMTP_URL: smtp.url, LIPSYNC_SMTP_FROM: 'studio@example.com' },
    });
    origin = t.services.config.publicUrl;
    const first = await bootstrapFirstOrganization(t.services);
    assert.ok(first);
    firstOrg = { id: first.organization.id, ownerLink: first.ownerLink, key: first.key };
  });
  after(async () => {
    await t.cleanup();
    await smtp.close();
  });

  const post = (url: string, payload: unknown, o: { ip?: string; cookie?: string; origin?: string } = {}) =>
    t.app.inject({
      method: 'POST',
      url,
      payload: payload as object,
      remoteAddress: o.ip ?? '192.0.2.1',
      headers: {
        ...(o.cookie ? { cookie: o.cookie } : {}),
        ...(o.origin ? { origin: o.origin } : {}),
      },
    });
  const get = (url: string, cookie?: string, ip = '192.0.2.1') =>
    t.app.inject({ method: 'GET', url, remoteAddress: ip, headers: cookie ? { cookie } : {} });

  function sessionCookie(res: { headers: Record<string, unknown> }): string {
    const set = ([] as string[]).concat((res.headers['set-cookie'] as string | string[] | undefined) ?? []);
    const c = set.find((s) => s.startsWith('lipsync.session_token='));
    assert.ok(c, `no session cookie in ${JSON.stringify(set)}`);
    return c.split(';')[0]!;
  }

  async function signIn(email: string, password = PASSWORD, ip = freshIp()): Promise<string> {
    const res = await post('/api/auth/sign-in/email', { email, password }, { ip });
    assert.equal(res.statusCode, 200, res.body);
    return sessionCookie(res);
  }

  /** An account of the first organization with this role, through an account link. */
  async function member(role: Role): Promise<{ email: string; cookie: string }> {
    const link = await t.services.webSessions.createAccountLink(firstOrg.id, role);
    const email = `${role}-${Math.random().toString(36).slice(2, 8)}@example.com`;
    const res = await post('/api/auth/account-link', {
      token: new URL(link).hash.slice(1),
      email,
      password: PASSWORD,
    });
    assert.equal(res.statusCode, 201, res.body);
    return { email, cookie: await signIn(email) };
  }

  test('sign-up mails a code over SMTP; the confirmed account signs in; its draft organization gets 422', async () => {
    const email = 'new.user@example.com';
    const ip = freshIp();
    const res = await post('/api/auth/sign-up/email', { email, password: PASSWORD, name: 'New' }, { ip });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().token, undefined, 'no session token in a body');
    const mail = await smtp.nextMailTo(email);
    assert.match(mail.raw, /^From: studio@example\.com/m);
    const otp = /: (\d{6})/.exec(mail.raw)?.[1];
    assert.ok(otp);

    // Not confirmed yet: the right password is not enough.
    const early = await post('/api/auth/sign-in/email', { email, password: PASSWORD }, { ip });
    assert.equal(early.statusCode, 403);
    assert.equal(early.json().errorCode, 'email_not_verified');

    assert.equal((await post('/api/auth/otp/verify-email', { email, otp }, { ip })).statusCode, 200);
    const signedIn = await post('/api/auth/sign-in/email', { email, password: PASSWORD }, { ip });
    assert.equal(signedIn.statusCode, 200, signedIn.body);
    assert.equal(signedIn.json().token, undefined);
    const setCookie = String(signedIn.headers['set-cookie']);
    assert.match(setCookie, /HttpOnly/);
    assert.match(setCookie, /SameSite=Lax/);
    // Served over http here: a Secure cookie would never come back (https gets one: see below).
    assert.doesNotMatch(setCookie, /Secure/);
    const cookie = sessionCookie(signedIn);
    // Session fixation: a cookie the browser held before signing in is replaced, never adopted.
    const planted = 'lipsync.session_token=planted-by-someone-else';
    const fresh = await post(
      '/api/auth/sign-in/email',
      { email, password: PASSWORD },
      { ip, cookie: planted, origin },
    );
    assert.equal(fresh.statusCode, 200, fresh.body);
    const renewed = sessionCookie(fresh);
    assert.notEqual(renewed, planted);
    assert.notEqual(renewed, cookie);
    assert.equal((await get('/api/auth/session', planted)).json(), null);

    const session = await get('/api/auth/session', cookie);
    assert.equal(session.statusCode, 200);
    const s = session.json();
    assert.equal(s.user.email, email);
    assert.equal(s.role, 'owner');
    assert.equal(s.organization.draft, true);
    assert.equal(s.session.token, undefined, 'the token stays in the http-only cookie');

    const draft = await get('/v2/projects', cookie);
    assert.equal(draft.statusCode, 422);
    assert.equal(draft.json().errorCode, 'organization_draft');

    // The operator activates the organization: the same session works.
    await t.services.organizations.update(s.organization.id, { draft: false });
    assert.equal((await get('/v2/projects', cookie)).statusCode, 200);
  });

  test('the first-start link makes the owner account once; it signs in to the first organization', async () => {
    const link = new URL(firstOrg.ownerLink);
    assert.equal(link.pathname, '/setup');
    const page = await get('/setup');
    assert.equal(page.statusCode, 200);
    assert.match(String(page.headers['content-type']), /text\/html/);
    assert.match(page.body, /\/api\/auth\/account-link/);

    const token = link.hash.slice(1);
    const body = { token, email: 'owner@example.com', password: PASSWORD, name: 'Owner' };
    const made = await post('/api/auth/account-link', body, { origin });
    assert.equal(made.statusCode, 201, made.body);
    assert.deepEqual(made.json(), { organizationId: firstOrg.id, email: 'owner@example.com', role: 'owner' });

    const again = await post('/api/auth/account-link', { ...body, email: 'someone.else@example.com' });
    assert.equal(again.statusCode, 410);
    assert.equal(again.json().errorCode, 'account_link_invalid');

    const cookie = await signIn('owner@example.com');
    const session = (await get('/api/auth/session', cookie)).json();
    assert.equal(session.organization.id, firstOrg.id);
    assert.equal(session.role, 'owner');
    assert.equal((await get('/v2/projects', cookie)).statusCode, 200);
  });

  test('an expired account link is refused', async () => {
    const link = await t.services.webSessions.createAccountLink(firstOrg.id, 'member');
    await sql`update account_links set expires_at = ${new Date(Date.now() - 1000).toISOString()} where used_at is null`.execute(
      t.services.db.kysely,
    );
    const res = await post('/api/auth/account-link', {
      token: new URL(link).hash.slice(1),
      email: 'late@example.com',
      password: PASSWORD,
    });
    assert.equal(res.statusCode, 410);
    assert.equal(res.json().errorCode, 'account_link_invalid');
  });

  test('a session authenticates /v2 calls; state changes need a trusted Origin; API keys are unchanged', async () => {
    const { cookie } = await member('admin');
    const ok = await post('/v2/projects', { name: 'From the studio' }, { cookie, origin });
    assert.equal(ok.statusCode, 201, ok.body);

    for (const bad of [{ origin: 'https://evil.example' }, {}]) {
      const res = await post('/v2/projects', { name: 'Forged' }, { cookie, ...bad });
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(res.json().errorCode, 'cross_site_request');
    }
    // A Referer of the studio's own pages stands in for a missing Origin.
    const referred = await t.app.inject({
      method: 'POST',
      url: '/v2/projects',
      payload: { name: 'Referred' },
      headers: { cookie, referer: `${origin}/studio` },
    });
    assert.equal(referred.statusCode, 201, referred.body);
    // Reads need no Origin.
    assert.equal((await get('/v2/projects', cookie)).statusCode, 200);

    // Sign-in from another site's page is refused too (login CSRF).
    const forged = await post(
      '/api/auth/sign-in/email',
      { email: 'owner@example.com', password: PASSWORD },
      { origin: 'https://evil.example', ip: freshIp() },
    );
    assert.equal(forged.statusCode, 403);
    assert.equal(forged.json().errorCode, 'cross_site_request');

    // An API key decides alone: no Origin check, and a cookie beside it changes nothing.
    const key = await t.app.inject({
      method: 'POST',
      url: '/v2/projects',
      payload: { name: 'By key' },
      headers: { 'x-api-key': firstOrg.key, origin: 'https://evil.example', cookie },
    });
    assert.equal(key.statusCode, 201, key.body);
    const badKey = await t.app.inject({
      method: 'GET',
      url: '/v2/projects',
      headers: { 'x-api-key': 'sk_lipsync_wrong', cookie },
    });
    assert.equal(badKey.statusCode, 401);
  });

  test('unknown email, wrong password and wrong code get the same answer; duplicate sign-up looks new', async () => {
    const { email } = await member('member');
    const ip = freshIp();
    const unknown = await post(
      '/api/auth/sign-in/email',
      { email: 'nobody@example.com', password: PASSWORD },
      { ip },
    );
    const wrong = await post('/api/auth/sign-in/email', { email, password: 'not the password' }, { ip });
    assert.equal(unknown.statusCode, 401);
    assert.equal(wrong.statusCode, wrong.statusCode);
    assert.deepEqual(unknown.json(), wrong.json());
    assert.equal(unknown.json().errorCode, 'sign_in_failed');

    const badCode = await post('/api/auth/sign-in/email-otp', { email, otp: '000000' }, { ip });
    assert.equal(badCode.statusCode, 401);
    assert.deepEqual(badCode.json(), unknown.json());

    const dup = await post(
      '/api/auth/sign-up/email',
      { email, password: 'another password', name: 'X' },
      { ip },
    );
    const fresh = await post(
      '/api/auth/sign-up/email',
      { email: 'brand.new@example.com', password: 'another password', name: 'X' },
      { ip },
    );
    assert.equal(dup.statusCode, fresh.statusCode);
    assert.deepEqual(Object.keys(dup.json().user).sort(), Object.keys(fresh.json().user).sort());
    // The existing account's password is unchanged.
    await signIn(email);
  });

  test('sign-in by a mailed code; wrong codes spend the code after three tries', async () => {
    const { email } = await member('member');
    const ip = freshIp();
    const sent = await post('/api/auth/otp/send', { email, type: 'sign-in' }, { ip });
    assert.equal(sent.statusCode, 200, sent.body);
    const otp = await smtp.nextCode(email);
    const res = await post('/api/auth/sign-in/email-otp', { email, otp }, { ip });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal((await get('/v2/projects', sessionCookie(res))).statusCode, 200);

    assert.equal((await post('/api/auth/otp/send', { email, type: 'sign-in' }, { ip })).statusCode, 200);
    const code = await smtp.nextCode(email);
    const wrongCode = code === '123456' ? '654321' : '123456';
    for (let i = 0; i < 3; i++) {
      const w = await post('/api/auth/sign-in/email-otp', { email, otp: wrongCode }, { ip });
      assert.equal(w.statusCode, 401);
      assert.equal(w.json().errorCode, 'sign_in_failed');
    }
    const late = await post('/api/auth/sign-in/email-otp', { email, otp: code }, { ip });
    assert.equal(late.statusCode, 401, 'the right code no longer works after three wrong ones');
  });

  test('sign-in, sign-up and code requests: 10 a minute per IP, and per account from any IP', async () => {
    await waitForFreshWindow();
    const ip = freshIp();
    for (let i = 0; i < 10; i++) {
      const res = await post(
        '/api/auth/sign-in/email',
        { email: `x${i}@example.com`, password: 'p' },
        { ip },
      );
      assert.equal(res.statusCode, 401);
    }
    assertRateLimited(
      await post('/api/auth/sign-up/email', { email: 'y@example.com', password: PASSWORD }, { ip }),
    );
    assertRateLimited(await post('/api/auth/otp/send', { email: 'y@example.com', type: 'sign-in' }, { ip }));

    // One account guessed from many addresses (member() signed in once: the first of the ten).
    const { email } = await member('member');
    for (let i = 1; i < 10; i++) {
      const res = await post('/api/auth/sign-in/email', { email, password: `guess ${i}` }, { ip: freshIp() });
      assert.equal(res.statusCode, 401);
    }
    const blocked = await post('/api/auth/sign-in/email', { email, password: PASSWORD }, { ip: freshIp() });
    assertRateLimited(blocked);
  });

  test('GET /api/auth/session: 60 a minute', async () => {
    await waitForFreshWindow();
    const ip = freshIp();
    for (let i = 0; i < 60; i++)
      assert.equal((await get('/api/auth/session', undefined, ip)).statusCode, 200);
    assertRateLimited(await get('/api/auth/session', undefined, ip));
  });

  test('an expired session is refused', async () => {
    const { cookie } = await member('member');
    assert.equal((await get('/v2/projects', cookie)).statusCode, 200);
    const token = decodeURIComponent(cookie.split('=')[1]!).split('.')[0]!;
    await sql`update auth_sessions set expires_at = ${
      t.database === 'postgres' ? new Date(Date.now() - 1000) : new Date(Date.now() - 1000).toISOString()
    } where token = ${token}`.execute(t.services.db.kysely);
    const res = await get('/v2/projects', cookie);
    assert.equal(res.statusCode, 401);
    assert.equal(res.json().statusCode, 401);
    assert.equal((await get('/api/auth/session', cookie)).json(), null);
  });

  test('signing out ends every session of the user', async () => {
    const { email, cookie: first } = await member('member');
    const second = await signIn(email);
    assert.notEqual(first, second);
    const out = await post('/api/auth/sign-out', {}, { cookie: first, origin });
    assert.equal(out.statusCode, 200, out.body);
    for (const c of [first, second]) assert.equal((await get('/v2/projects', c)).statusCode, 401);
    assert.equal((await get('/api/auth/session', second)).json(), null);
  });

  test('roles: a member sees only keys it created; admins see every key', async () => {
    const admin = await member('admin');
    const m = await member('member');
    const create = (cookie: string, body: object) => post('/v2/api-keys', body, { cookie, origin });

    const adminKey = await create(admin.cookie, { name: 'Admin CI', role: 'admin' });
    assert.equal(adminKey.statusCode, 201, adminKey.body);
    const mine = await create(m.cookie, { name: 'Mine' });
    assert.equal(mine.statusCode, 201, mine.body);
    const memberId = (await get('/api/auth/session', m.cookie)).json().user.id;
    assert.equal(mine.json().createdByUserId, memberId);
    assert.equal(mine.json().createdByKeyId, null);
    assert.equal((await create(m.cookie, { role: 'admin' })).statusCode, 403);

    const listed = async (cookie: string) =>
      (await get('/v2/api-keys', cookie)).json().map((k: { id: string }) => k.id) as string[];
    assert.deepEqual(await listed(m.cookie), [mine.json().id]);
    const seenByAdmin = await listed(admin.cookie);
    assert.ok(seenByAdmin.includes(adminKey.json().id) && seenByAdmin.includes(mine.json().id));

    const revoke = await t.app.inject({
      method: 'DELETE',
      url: `/v2/api-keys/${adminKey.json().id}`,
      headers: { cookie: m.cookie, origin },
    });
    assert.equal(revoke.statusCode, 404);
    assert.equal(revoke.json().errorCode, 'api_key_not_found');

    // An owner's API key created by nobody in particular is not the member's either.
    const ownerKey = await createKey(t.services, firstOrg.id, { role: 'owner' });
    assert.ok(!(await listed(m.cookie)).includes(ownerKey.record.id));
  });

  test('a dialogue edit may select a window with a session, not with an API key', async () => {
    const { cookie } = await member('member');
    const body = {
      sourceVideoUrl: 'https://example.com/v.mp4',
      transcript: {},
      edits: [],
      startMs: 0,
      endMs: 1000,
    };
    const byKey = await t.app.inject({
      method: 'POST',
      url: '/v2/dialogue-edits',
      payload: body,
      headers: { 'x-api-key': firstOrg.key },
    });
    assert.equal(byKey.statusCode, 422);
    assert.equal(byKey.json().errorCode, 'dialogue_edit_unsupported');
    const bySession = await post('/v2/dialogue-edits', body, { cookie, origin });
    // Past the window rule, the request is checked further (here: its empty transcript).
    assert.equal(bySession.statusCode, 400, bySession.body);
    assert.notEqual(bySession.json().errorCode, 'dialogue_edit_unsupported');
    const backwards = await post('/v2/dialogue-edits', { ...body, startMs: 2000 }, { cookie, origin });
    assert.equal(backwards.statusCode, 400);
    assert.equal(backwards.json().field, 'endMs');
  });
});

describe('web sessions without SMTP, over https', () => {
  test('the code goes to the server log, never a password or session token; the cookie is Secure', async () => {
    const lines: string[] = [];
    const { Writable } = await import('node:stream');
    const dest = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    const t = await createTestServices({
      env: { LOG_LEVEL: 'info', LIPSYNC_PUBLIC_URL: 'https://studio.example.com' },
      logDestination: dest,
    });
    try {
      const origin = 'https://studio.example.com';
      const email = 'console@example.com';
      const up = await t.app.inject({
        method: 'POST',
        url: '/api/auth/sign-up/email',
        payload: { email, password: PASSWORD, name: 'C' },
        headers: { origin },
      });
      assert.equal(up.statusCode, 200, up.body);
      const line = lines.find((l) => l.includes('one-time code') && l.includes(email));
      assert.ok(line, 'a log line with the code');
      const otp = /: (\d{6}) /.exec(line)?.[1];
      assert.ok(otp);
      const verified = await t.app.inject({
        method: 'POST',
        url: '/api/auth/otp/verify-email',
        payload: { email, otp },
        headers: { origin },
      });
      assert.equal(verified.statusCode, 200, verified.body);
      const signedIn = await t.app.inject({
        method: 'POST',
        url: '/api/auth/sign-in/email',
        payload: { email, password: PASSWORD },
        headers: { origin },
      });
      assert.equal(signedIn.statusCode, 200, signedIn.body);
      const setCookie = String(signedIn.headers['set-cookie']);
      assert.match(setCookie, /^__Secure-lipsync\.session_token=/);
      assert.match(setCookie, /; Secure/);
      const token = decodeURIComponent(setCookie.split(';')[0]!.split('=')[1]!).split('.')[0]!;
      const session = await t.app.inject({
        method: 'GET',
        url: '/api/auth/session',
        headers: { cookie: setCookie.split(';')[0]! },
      });
      assert.equal(session.json().user.email, email);
      const log = lines.join('');
      assert.ok(!log.includes(PASSWORD), 'no password in the log');
      assert.ok(!log.includes(token), 'no session token in the log');
    } finally {
      await t.cleanup();
    }
  });
});

describe('web sessions with sign-up turned off', () => {
  test('sign-up is refused, and a code for an unknown address is neither sent nor told apart', async () => {
    const smtp = await startFakeSmtp();
    const t = await createTestServices({ env: { LIPSYNC_SIGN_UP: '0', LIPSYNC_SMTP_URL: smtp.url } });
    try {
      const up = await t.app.inject({
        method: 'POST',
        url: '/api/auth/sign-up/email',
        payload: { email: 'nobody@example.com', password: PASSWORD, name: 'N' },
      });
      assert.equal(up.statusCode, 403, up.body);
      assert.equal(up.json().errorCode, 'sign_up_disabled');
      const send = await t.app.inject({
        method: 'POST',
        url: '/api/auth/otp/send',
        payload: { email: 'nobody@example.com', type: 'sign-in' },
      });
      assert.equal(send.statusCode, 200, send.body);
      assert.deepEqual(send.json(), { success: true });
      assert.equal(smtp.mails.length, 0);
    } finally {
      await t.cleanup();
      await smtp.close();
    }
  });
});

describe('web sessions with an SMTP server that does not answer', () => {
  test('the failed delivery is logged for the operator, without the code', async () => {
    const lines: string[] = [];
    const { Writable } = await import('node:stream');
    const dest = new Writable({
      write(chunk, _enc, cb) {
        lines.push(String(chunk));
        cb();
      },
    });
    // Port 9 (discard) on this machine: nothing listens there.
    const t = await createTestServices({
      env: { LOG_LEVEL: 'error', LIPSYNC_SMTP_URL: 'smtp://127.0.0.1:9' },
      logDestination: dest,
    });
    try {
      const send = await t.app.inject({
        method: 'POST',
        url: '/api/auth/otp/send',
        payload: { email: 'lost@example.com', type: 'sign-in' },
      });
      assert.equal(send.statusCode, 200, send.body);
      const deadline = Date.now() + 10_000;
      let line: string | undefined;
      while (
        !(line = lines.find((l) => l.includes('sending a one-time code failed'))) &&
        Date.now() < deadline
      )
        await new Promise((r) => setTimeout(r, 100));
      assert.ok(line, 'an error line for the operator');
      assert.match(line, /lost@example\.com/);
      assert.doesNotMatch(line, /\b\d{6}\b/, 'no code in it');
    } finally {
      await t.cleanup();
    }
  });
});
