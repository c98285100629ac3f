// Members, invitations, the webhook secret and usage through the app: invitations mailed over SMTP
// (a local SMTP server) and claimed, the role rules for sessions and API keys alike, the last owner
// kept, a removed user's sessions and keys ended, the secret masked or whole for admins only.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  completedGenerationRecord,
  createKey,
  createOrgWithKey,
  createTestServices,
  generationRecord,
  startFakeSmtp,
  type FakeSmtp,
  type TestServices,
} from '../helpers/index.js';
import type { Role } from '../../src/domain/api-keys.js';

const PASSWORD = 'correct horse battery';

describe(`organization members (${process.env.TEST_DATABASE ?? 'sqlite'})`, () => {
  let t: TestServices;
  let smtp: FakeSmtp;
  let origin: string;
  let ipCounter = 0;
  const freshIp = () => `198.51.100.${++ipCounter}`;

  before(async () => {
    smtp = await startFakeSmtp();
    t = await createTestServices({
      env: { LIPSYNC_SMTP_URL: smtp.url, LIPSYNC_SMTP_FROM: 'studio@example.com' },
    });
    origin = t.services.config.publicUrl;
  });
  after(async () => {
    await t?.cleanup();
    await smtp?.close();
  });

  type Who = { cookie: string } | { key: string };
  const headersOf = (who: Who) =>
    'cookie' in who ? { cookie: who.cookie, origin } : { 'x-api-key': who.key };
  const call = (method: 'GET' | 'POST' | 'PATCH' | 'DELETE', url: string, who: Who, payload?: object) =>
    t.app.inject({ method, url, payload, headers: headersOf(who), remoteAddress: freshIp() });

  async function signIn(email: string): Promise<string> {
    const res = await t.app.inject({
      method: 'POST',
      url: '/api/auth/sign-in/email',
      payload: { email, password: PASSWORD },
      remoteAddress: freshIp(),
    });
    assert.equal(res.statusCode, 200, res.body);
    const set = ([] as string[]).concat((res.headers['set-cookie'] as string | string[] | undefined) ?? []);
    const c = set.find((s) => s.startsWith('lipsync.session_token='));
    assert.ok(c);
    return c.split(';')[0]!;
  }

  async function claim(link: string, email: string) {
    return t.app.inject({
      method: 'POST',
      url: '/api/auth/account-link',
      payload: { token: new URL(link).hash.slice(1), email, password: PASSWORD, name: email.split('@')[0] },
      remoteAddress: freshIp(),
    });
  }

  /** A signed-in user of the organization with this role (through an operator's account link). */
  async function account(organizationId: string, role: Role) {
    const email = `${role}-${Math.random().toString(36).slice(2, 8)}@example.com`;
    const res = await claim(await t.services.webSessions.createAccountLink(organizationId, role), email);
    assert.equal(res.statusCode, 201, res.body);
    const cookie = await signIn(email);
    const session = await t.app.inject({ method: 'GET', url: '/api/auth/session', headers: { cookie } });
    return { email, cookie, userId: session.json().user.id as string };
  }

  async function orgWithOwner() {
    const org = await createOrgWithKey(t.services);
    return { org, id: org.organization.id, owner: await account(org.organization.id, 'owner') };
  }

  test('an invitation is mailed (never answered with its link); the invitee joins with its role', async () => {
    const { id, owner } = await orgWithOwner();
    const email = `Invited-${Date.now()}@Example.com`;
    const res = await call('POST', '/v2/organizations/invitations', owner, { email, role: 'admin' });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json();
    assert.equal(body.email, email.toLowerCase());
    assert.equal(body.role, 'admin');
    assert.equal(body.delivery, 'email');
    assert.ok(Date.parse(body.expiresAt) > Date.now() + 23 * 3600_000);
    assert.doesNotMatch(res.body, /setup#/);

    const mail = await smtp.nextMailTo(email.toLowerCase());
    const link = /(https?:\/\/\S+\/setup#[\w-]+)/.exec(mail.raw.replace(/=\r?\n/g, ''))?.[1];
    assert.ok(link, mail.raw);
    assert.match(mail.raw, /as admin/);
    // The link is for the invited address only: another one is refused and the link stays usable.
    const stranger = await claim(link, `stranger-${Date.now()}@example.com`);
    assert.equal(stranger.statusCode, 400, stranger.body);
    assert.equal(stranger.json().field, 'email');
    assert.doesNotMatch(stranger.body, new RegExp(email, 'i'), 'the invited address is not disclosed');
    assert.equal((await claim(link, email)).statusCode, 201, 'the address in any letter case');
    // single use
    assert.equal((await claim(link, `again-${Date.now()}@example.com`)).statusCode, 410);

    const list = await call('GET', '/v2/organizations/members', owner);
    assert.equal(list.statusCode, 200, list.body);
    const members = list.json() as { email: string; role: string; name: string; joinedAt: string }[];
    assert.deepEqual(
      members.map((m) => [m.email, m.role]).sort(),
      [
        [email.toLowerCase(), 'admin'],
        [owner.email, 'owner'],
      ].sort(),
    );
    assert.ok(members.every((m) => !Number.isNaN(Date.parse(m.joinedAt)) && m.name));

    // Inviting someone who is already a member: a clear 409, nothing mailed.
    const again = await call('POST', '/v2/organizations/invitations', owner, { email, role: 'member' });
    assert.equal(again.statusCode, 409);
    assert.equal(again.json().errorCode, 'member_exists');
    // Another organization's members are not listed.
    const other = await orgWithOwner();
    const theirs = (await call('GET', '/v2/organizations/members', other.owner)).json() as unknown[];
    assert.equal(theirs.length, 1);
    void id;
  });

  test('role rules: members invite nobody; admins up to admin and never touch owners', async () => {
    const { id, owner } = await orgWithOwner();
    const admin = await account(id, 'admin');
    const member = await account(id, 'member');

    // A member sees only itself and can change nothing.
    const seen = (await call('GET', '/v2/organizations/members', member)).json() as { userId: string }[];
    assert.deepEqual(
      seen.map((m) => m.userId),
      [member.userId],
    );
    for (const res of [
      await call('POST', '/v2/organizations/invitations', member, { email: 'x@example.com', role: 'member' }),
      await call('PATCH', `/v2/organizations/members/${admin.userId}`, member, { role: 'member' }),
      await call('DELETE', `/v2/organizations/members/${admin.userId}`, member),
    ]) {
      assert.equal(res.statusCode, 403, res.body);
      assert.equal(res.json().errorCode, 'forbidden');
    }

    const inviteOwner = await call('POST', '/v2/organizations/invitations', admin, {
      email: `o-${Date.now()}@example.com`,
      role: 'owner',
    });
    assert.equal(inviteOwner.statusCode, 403);
    assert.equal(
      (await call('PATCH', `/v2/organizations/members/${owner.userId}`, admin, { role: 'admin' })).statusCode,
      403,
    );
    assert.equal((await call('DELETE', `/v2/organizations/members/${owner.userId}`, admin)).statusCode, 403);
    assert.equal(
      (await call('PATCH', `/v2/organizations/members/${member.userId}`, admin, { role: 'owner' }))
        .statusCode,
      403,
    );
    const promoted = await call('PATCH', `/v2/organizations/members/${member.userId}`, admin, {
      role: 'admin',
    });
    assert.equal(promoted.statusCode, 200, promoted.body);
    assert.equal(promoted.json().role, 'admin');
    // The new role counts on the next request of the same session.
    assert.equal((await call('GET', '/v2/organizations/webhook/secret', member)).statusCode, 200);

    const unknown = await call('PATCH', '/v2/organizations/members/no-such-user', owner, { role: 'member' });
    assert.equal(unknown.statusCode, 404);
    assert.equal(unknown.json().errorCode, 'member_not_found');
    const bad = await call('PATCH', `/v2/organizations/members/${member.userId}`, owner, { role: 'boss' });
    assert.equal(bad.statusCode, 400);
  });

  test('the same rules hold for API keys with those roles', async () => {
    const { id, owner } = await orgWithOwner();
    const memberKey = await createKey(t.services, id, { role: 'member' });
    const adminKey = await createKey(t.services, id, { role: 'admin' });
    const invite = (key: string, role: Role) =>
      call(
        'POST',
        '/v2/organizations/invitations',
        { key },
        { email: `k-${Math.random()}@example.com`, role },
      );
    assert.equal((await invite(memberKey.key, 'member')).statusCode, 403);
    assert.equal((await invite(adminKey.key, 'owner')).statusCode, 403);
    assert.equal((await invite(adminKey.key, 'admin')).statusCode, 201);
    const listed = await call('GET', '/v2/organizations/members', { key: adminKey.key });
    assert.deepEqual(
      (listed.json() as { userId: string }[]).map((m) => m.userId),
      [owner.userId],
    );
    // A member key has no user: it sees no member.
    assert.deepEqual((await call('GET', '/v2/organizations/members', { key: memberKey.key })).json(), []);
  });

  test('nobody demotes or removes the last owner', async () => {
    const { id, owner } = await orgWithOwner();
    const self = await call('PATCH', `/v2/organizations/members/${owner.userId}`, owner, { role: 'admin' });
    assert.equal(self.statusCode, 409, self.body);
    assert.equal(self.json().errorCode, 'last_owner');
    assert.ok(self.json().suggestion);
    const ownerKey = await createKey(t.services, id, { role: 'owner' });
    const gone = await call('DELETE', `/v2/organizations/members/${owner.userId}`, { key: ownerKey.key });
    assert.equal(gone.statusCode, 409);

    // With a second owner, the first may step down.
    const second = await account(id, 'owner');
    assert.equal(
      (await call('PATCH', `/v2/organizations/members/${owner.userId}`, owner, { role: 'member' }))
        .statusCode,
      200,
    );
    const last = await call('DELETE', `/v2/organizations/members/${second.userId}`, second);
    assert.equal(last.statusCode, 409);
  });

  test("a removed member's sessions end, its keys are revoked, and its address can be invited again", async () => {
    const { id, owner } = await orgWithOwner();
    const admin = await account(id, 'admin');
    const made = await call('POST', '/v2/api-keys', admin, { name: 'admin script', role: 'admin' });
    assert.equal(made.statusCode, 201, made.body);
    const adminKey = made.json().key as string;
    const memberKeyRes = await call('POST', '/v2/api-keys', admin, { name: 'member script', role: 'member' });
    const memberKey = memberKeyRes.json().key as string;
    assert.equal((await call('GET', '/v2/api-keys', { key: adminKey })).statusCode, 200);

    // Demoted to member: the admin key it made is revoked, its member key stays.
    const demoted = await call('PATCH', `/v2/organizations/members/${admin.userId}`, owner, {
      role: 'member',
    });
    assert.equal(demoted.statusCode, 200);
    assert.equal((await call('GET', '/v2/api-keys', { key: adminKey })).statusCode, 401);
    assert.equal((await call('GET', '/v2/api-keys', { key: memberKey })).statusCode, 200);

    const removed = await call('DELETE', `/v2/organizations/members/${admin.userId}`, owner);
    assert.equal(removed.statusCode, 200, removed.body);
    assert.equal(removed.json().email, admin.email);
    assert.equal((await call('GET', '/v2/api-keys', admin)).statusCode, 401);
    assert.equal((await call('GET', '/v2/api-keys', { key: memberKey })).statusCode, 401);
    assert.equal((await call('GET', '/v2/organizations/members', owner)).json().length, 1);
    const back = await call('POST', '/v2/organizations/invitations', owner, { email: admin.email });
    assert.equal(back.statusCode, 201, back.body);
    assert.equal(back.json().role, 'member');
  });

  test("keys made by a removed or demoted user's keys are revoked with them, however deep", async () => {
    const { id, owner } = await orgWithOwner();
    const makeKey = async (who: Who, role: Role) => {
      const res = await call('POST', '/v2/api-keys', who, { name: `${role} key`, role });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().key as string;
    };
    const works = async (key: string) => (await call('GET', '/v2/api-keys', { key })).statusCode;

    const admin = await account(id, 'admin');
    const k1 = await makeKey(admin, 'admin');
    const k2 = await makeKey({ key: k1 }, 'admin');
    const k3 = await makeKey({ key: k2 }, 'admin');
    assert.equal(await works(k3), 200);
    assert.equal((await call('DELETE', `/v2/organizations/members/${admin.userId}`, owner)).statusCode, 200);
    assert.deepEqual([await works(k1), await works(k2), await works(k3)], [401, 401, 401]);

    // Demoted to member: the admin keys down the chain go, a member key made by one of them stays.
    const other = await account(id, 'admin');
    const a1 = await makeKey(other, 'admin');
    const a2 = await makeKey({ key: a1 }, 'admin');
    const m3 = await makeKey({ key: a2 }, 'member');
    const demoted = await call('PATCH', `/v2/organizations/members/${other.userId}`, owner, {
      role: 'member',
    });
    assert.equal(demoted.statusCode, 200, demoted.body);
    assert.deepEqual([await works(a1), await works(a2), await works(m3)], [401, 401, 200]);
  });

  test("an invitation is refused once its sender may no longer grant its role; a valid sender's works", async () => {
    const { id, owner } = await orgWithOwner();
    const invite = async (who: Who, role: Role) => {
      const email = `inv-${Math.random().toString(36).slice(2, 8)}@example.com`;
      const res = await call('POST', '/v2/organizations/invitations', who, { email, role });
      assert.equal(res.statusCode, 201, res.body);
      const mail = await smtp.nextMailTo(email);
      const link = /(https?:\/\/\S+\/setup#[\w-]+)/.exec(mail.raw.replace(/=\r?\n/g, ''))?.[1];
      assert.ok(link, mail.raw);
      return { email, link };
    };

    const removed = await account(id, 'admin');
    const fromRemoved = await invite(removed, 'admin');
    const demoted = await account(id, 'admin');
    const fromDemoted = await invite(demoted, 'admin');
    const kept = await account(id, 'admin');
    const fromKept = await invite(kept, 'member');
    const fromOwner = await invite(owner, 'owner');

    assert.equal(
      (await call('DELETE', `/v2/organizations/members/${removed.userId}`, owner)).statusCode,
      200,
    );
    assert.equal(
      (await call('PATCH', `/v2/organizations/members/${demoted.userId}`, owner, { role: 'member' }))
        .statusCode,
      200,
    );
    for (const refused of [fromRemoved, fromDemoted]) {
      const res = await claim(refused.link, refused.email);
      assert.equal(res.statusCode, 410, res.body);
      assert.equal(res.json().errorCode, 'account_link_invalid');
    }
    assert.equal((await claim(fromKept.link, fromKept.email)).statusCode, 201);
    assert.equal((await claim(fromOwner.link, fromOwner.email)).statusCode, 201);
  });

  test('two owners demoting each other at once: exactly one succeeds, one owner remains', async () => {
    const { id, owner: a } = await orgWithOwner();
    const b = await account(id, 'owner');
    const [ab, ba] = await Promise.all([
      call('PATCH', `/v2/organizations/members/${b.userId}`, a, { role: 'admin' }),
      call('PATCH', `/v2/organizations/members/${a.userId}`, b, { role: 'admin' }),
    ]);
    assert.equal([ab, ba].filter((r) => r.statusCode === 200).length, 1, `${ab.body} ${ba.body}`);
    // The loser is refused: it is an admin by the time it holds the lock.
    assert.equal([ab, ba].find((r) => r.statusCode !== 200)!.statusCode, 403);
    const owners = (
      (await call('GET', '/v2/organizations/members', ab.statusCode === 200 ? a : b)).json() as {
        role: string;
      }[]
    ).filter((m) => m.role === 'owner');
    assert.equal(owners.length, 1);
  });

  test("a request authenticated before its user's demotion or removal acts with the role the user has now", async () => {
    const { id, owner } = await orgWithOwner();
    const stale = await account(id, 'owner');
    const third = await account(id, 'owner');
    const org = await t.services.organizations.get(id);
    // What the gatekeeper read for `stale` before the owner's change below committed.
    const auth = {
      organization: org,
      key: null,
      role: 'owner' as const,
      session: { id: 's', userId: stale.userId, email: stale.email, name: 'x', expiresAt: '' },
    };
    assert.equal(
      (await call('PATCH', `/v2/organizations/members/${stale.userId}`, owner, { role: 'admin' })).statusCode,
      200,
    );
    await assert.rejects(t.services.members.changeRole(auth, third.userId, 'member'), { code: 'forbidden' });
    assert.equal((await call('DELETE', `/v2/organizations/members/${stale.userId}`, owner)).statusCode, 200);
    await assert.rejects(t.services.members.remove(auth, third.userId), { code: 'forbidden' });
    const roles = (await call('GET', '/v2/organizations/members', owner)).json() as { role: string }[];
    assert.deepEqual(
      roles.map((m) => m.role),
      ['owner', 'owner'],
    );
  });

  test('the webhook secret: whole or masked for admins and owners, 403 for members; rotation', async () => {
    const { id, owner } = await orgWithOwner();
    const member = await account(id, 'member');
    const stored = (await t.services.organizations.get(id)).webhookSecret;
    const whole = await call('GET', '/v2/organizations/webhook/secret', owner);
    assert.equal(whole.statusCode, 200);
    assert.equal(whole.json().secret, stored);
    const masked = (await call('GET', '/v2/organizations/webhook/secret?masked=true', owner)).json().secret;
    assert.match(masked, /^whsec_/);
    assert.ok(masked.endsWith(stored.slice(-4)));
    assert.ok(!masked.includes(stored.slice(6, 20)));
    const denied = await call('GET', '/v2/organizations/webhook/secret', member);
    assert.equal(denied.statusCode, 403);
    assert.equal((await call('POST', '/v2/organizations/webhook/secret/rotate', member, {})).statusCode, 403);

    const rotated = await call('POST', '/v2/organizations/webhook/secret/rotate', owner, {});
    assert.equal(rotated.statusCode, 200);
    assert.notEqual(rotated.json().secret, stored);
    assert.equal((await t.services.organizations.get(id)).webhookSecret, rotated.json().secret);
  });

  test("usage: this month's generations by status and seconds of output, with the plan's limits", async () => {
    const { org, id, owner } = await orgWithOwner();
    const done = completedGenerationRecord(id);
    const lastMonth = new Date(Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), 0, 12));
    for (const g of [
      done,
      generationRecord(id),
      generationRecord(id, { status: 'PENDING', finishedAt: null }),
      generationRecord(id, { createdAt: lastMonth.toISOString() }),
    ])
      await t.services.store.generations.insert(g);
    await t.services.store.usage.record(t.services.db.kysely, {
      organizationId: id,
      generationId: done.id,
      apiKeyId: org.owner.record.id,
      model: 'lipsync-2',
      seconds: 5.5,
      frames: 137,
      cost: 0.1,
      credits: null,
    });
    const res = await call('GET', '/v2/organizations/usage', owner);
    assert.equal(res.statusCode, 200, res.body);
    const u = res.json();
    assert.deepEqual(u.generations, { total: 3, byStatus: { COMPLETED: 1, FAILED: 1, PENDING: 1 } });
    assert.equal(u.outputSeconds, 5.5);
    assert.equal(u.plan, 'enterprise');
    assert.equal(u.limits.batch, true);
    assert.ok(u.limits.concurrency >= 1);
    assert.equal(u.periodStart.slice(8, 10), '01');
  });
});
