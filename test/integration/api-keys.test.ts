// /v2/api-keys: create, list, rename and revoke with the role rules of the spec.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createKey,
  createOrgWithKey,
  createTestServices,
  type TestKey,
  type TestOrg,
  type TestServices,
} from '../helpers/index.js';

describe(`API key routes (${process.env.TEST_DATABASE ?? 'sqlite'})`, () => {
  let t: TestServices;
  let org: TestOrg;

  before(async () => {
    t = await createTestServices();
    org = await createOrgWithKey(t.services);
  });
  after(() => t.cleanup());

  const inject = (method: string, url: string, who: TestKey, payload?: unknown) =>
    t.app.inject({ method: method as 'GET', url, headers: who.headers, payload: payload as object });

  async function createVia(who: TestKey, body: Record<string, unknown>) {
    const res = await inject('POST', '/v2/api-keys', who, body);
    assert.equal(res.statusCode, 201, res.body);
    const created = res.json();
    return {
      body: created,
      key: {
        key: created.key,
        record: { ...created, keyHash: '' },
        headers: { 'x-api-key': created.key },
      } as TestKey,
    };
  }

  async function listIds(who: TestKey): Promise<string[]> {
    const res = await inject('GET', '/v2/api-keys', who);
    assert.equal(res.statusCode, 200, res.body);
    return res.json().map((k: { id: string }) => k.id);
  }

  test('creating a key shows the full key once and the new key works', async () => {
    const { body, key } = await createVia(org.owner, { name: 'CI', role: 'member' });
    assert.match(body.key, /^sk_lipsync_[A-Za-z0-9_-]{43}$/);
    assert.equal(body.name, 'CI');
    assert.equal(body.role, 'member');
    assert.equal(body.status, 'active');
    assert.equal(body.organizationId, org.organization.id);
    assert.equal(body.createdByKeyId, org.owner.record.id);
    assert.ok(body.key.startsWith(body.prefix));
    assert.equal(body.keyHash, undefined);
    assert.equal(
      (await t.app.inject({ method: 'GET', url: '/v2/projects', headers: key.headers })).statusCode,
      200,
    );

    // Later reads never show it again.
    const list = await inject('GET', '/v2/api-keys', org.owner);
    const again = list.json().find((k: { id: string }) => k.id === body.id);
    assert.ok(again);
    assert.equal(again.key, undefined);
    assert.ok(!list.body.includes(body.key));
  });

  test('a blank or missing name becomes "API key"; role defaults to member', async () => {
    assert.equal((await createVia(org.owner, { name: '   ' })).body.name, 'API key');
    assert.equal((await createVia(org.owner, { name: null })).body.name, 'API key');
    const { body } = await createVia(org.owner, {});
    assert.equal(body.name, 'API key');
    assert.equal(body.role, 'member');
  });

  test('the list never holds a secret or a hash', async () => {
    const res = await inject('GET', '/v2/api-keys', org.owner);
    assert.equal(res.statusCode, 200);
    const stored = await t.services.store.apiKeys.listByOrganization(org.organization.id);
    assert.ok(stored.length >= 2);
    for (const s of stored) {
      assert.ok(!res.body.includes(s.keyHash), 'hash leaked');
    }
    assert.ok(!res.body.includes(org.owner.key), 'secret leaked');
    for (const k of res.json()) {
      assert.deepEqual(
        Object.keys(k).filter((f) => /key$|hash|secret/i.test(f) && f !== 'createdByKeyId'),
        [],
      );
      assert.ok(k.prefix.length <= 'sk_lipsync_'.length + 6);
    }
  });

  test('an expiry in the past is refused with 400 naming expiresAt', async () => {
    const res = await inject('POST', '/v2/api-keys', org.owner, {
      name: 'old',
      expiresAt: '2001-01-01T00:00:00Z',
    });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().field, 'expiresAt');
    assert.equal(res.json().errorCode, 'invalid_request');
  });

  test('schema failures: unknown role and overlong name', async () => {
    const r1 = await inject('POST', '/v2/api-keys', org.owner, { role: 'superuser' });
    assert.equal(r1.statusCode, 400);
    assert.equal(r1.json().field, 'role');
    const r2 = await inject('POST', '/v2/api-keys', org.owner, { name: 'x'.repeat(201) });
    assert.equal(r2.statusCode, 400);
    assert.equal(r2.json().field, 'name');
  });

  test('an expiry can be set; an expired key is listed as expired', async () => {
    const at = new Date(Date.now() + 86_400_000).toISOString();
    const { body } = await createVia(org.owner, { name: 'temp', expiresAt: at });
    assert.equal(body.expiresAt, at);
    const past = await createKey(t.services, org.organization.id, {
      expiresAt: new Date(Date.now() + 300).toISOString(),
    });
    await new Promise((r) => setTimeout(r, 400));
    const list = (await inject('GET', '/v2/api-keys', org.owner)).json();
    assert.equal(list.find((k: { id: string }) => k.id === past.record.id).status, 'expired');
  });

  describe('roles', () => {
    let o: TestOrg;
    let admin: TestKey;
    let memberA: TestKey;
    let memberB: TestKey;
    let aOwn: TestKey;
    let bOwn: TestKey;

    before(async () => {
      o = await createOrgWithKey(t.services, { name: 'Roles org' });
      admin = (await createVia(o.owner, { name: 'admin', role: 'admin' })).key;
      memberA = (await createVia(o.owner, { name: 'member A', role: 'member' })).key;
      memberB = (await createVia(admin, { name: 'member B', role: 'member' })).key;
      aOwn = (await createVia(memberA, { name: 'made by A' })).key;
      bOwn = (await createVia(memberB, { name: 'made by B' })).key;
    });

    test('owners and admins see every key of the organization', async () => {
      const all = (await t.services.apiKeys.list(o.organization.id)).map((k) => k.id).sort();
      assert.equal(all.length, 6);
      assert.deepEqual((await listIds(o.owner)).sort(), all);
      assert.deepEqual((await listIds(admin)).sort(), all);
    });

    test('members see only keys they created', async () => {
      const a = await listIds(memberA);
      assert.ok(a.includes(aOwn.record.id));
      for (const other of [o.owner, admin, memberB, bOwn]) assert.ok(!a.includes(other.record.id));
      const b = await listIds(memberB);
      assert.ok(b.includes(bOwn.record.id));
      for (const other of [o.owner, admin, memberA, aOwn]) assert.ok(!b.includes(other.record.id));
    });

    test('keys of other organizations are never listed or reachable', async () => {
      const ids = await listIds(org.owner);
      assert.ok(!ids.includes(o.owner.record.id));
      const r = await inject('PATCH', `/v2/api-keys/${o.owner.record.id}`, org.owner, { name: 'x' });
      assert.equal(r.statusCode, 404);
      assert.equal(r.json().errorCode, 'api_key_not_found');
      const d = await inject('DELETE', `/v2/api-keys/${admin.record.id}`, org.owner);
      assert.equal(d.statusCode, 404);
      assert.equal(
        (await t.app.inject({ method: 'GET', url: '/v2/projects', headers: admin.headers })).statusCode,
        200,
      );
    });

    test('a member cannot rename or revoke keys it did not create; they look missing', async () => {
      for (const target of [o.owner, admin, memberB, bOwn]) {
        const r = await inject('PATCH', `/v2/api-keys/${target.record.id}`, memberA, { name: 'mine now' });
        assert.equal(r.statusCode, 404, `rename ${target.record.name}`);
        assert.equal(r.json().errorCode, 'api_key_not_found');
        const d = await inject('DELETE', `/v2/api-keys/${target.record.id}`, memberA);
        assert.equal(d.statusCode, 404, `revoke ${target.record.name}`);
      }
      const names = (await t.services.apiKeys.list(o.organization.id)).map((k) => k.name);
      assert.ok(!names.includes('mine now'));
    });

    test('a member renames its own keys; a blank name becomes "API key"', async () => {
      const r = await inject('PATCH', `/v2/api-keys/${aOwn.record.id}`, memberA, { name: '  renamed  ' });
      assert.equal(r.statusCode, 200, r.body);
      assert.equal(r.json().name, 'renamed');
      assert.equal(r.json().key, undefined);
      const blank = await inject('PATCH', `/v2/api-keys/${aOwn.record.id}`, memberA, { name: '' });
      assert.equal(blank.statusCode, 200);
      assert.equal(blank.json().name, 'API key');
      const stored = await t.services.store.apiKeys.findById(aOwn.record.id);
      assert.equal(stored?.name, 'API key');
    });

    test('a key may not create a key of a higher role', async () => {
      const r = await inject('POST', '/v2/api-keys', memberA, { role: 'admin' });
      assert.equal(r.statusCode, 403);
      assert.equal(r.json().errorCode, 'forbidden');
      const r2 = await inject('POST', '/v2/api-keys', admin, { role: 'owner' });
      assert.equal(r2.statusCode, 403);
      assert.equal((await inject('POST', '/v2/api-keys', admin, { role: 'admin' })).statusCode, 201);
    });

    test('an admin renames and revokes member keys but not owner keys', async () => {
      const rn = await inject('PATCH', `/v2/api-keys/${memberA.record.id}`, admin, {
        name: 'renamed by admin',
      });
      assert.equal(rn.statusCode, 200);
      assert.equal(rn.json().name, 'renamed by admin');

      const rOwner = await inject('PATCH', `/v2/api-keys/${o.owner.record.id}`, admin, { name: 'pwned' });
      assert.equal(rOwner.statusCode, 403);
      assert.equal(rOwner.json().errorCode, 'forbidden');
      const dOwner = await inject('DELETE', `/v2/api-keys/${o.owner.record.id}`, admin);
      assert.equal(dOwner.statusCode, 403);
      assert.equal(
        (await t.app.inject({ method: 'GET', url: '/v2/projects', headers: o.owner.headers })).statusCode,
        200,
      );

      const d = await inject('DELETE', `/v2/api-keys/${bOwn.record.id}`, admin);
      assert.equal(d.statusCode, 200);
      assert.equal(d.json().status, 'revoked');
      assert.ok(d.json().revokedAt);
      assert.equal(
        (await t.app.inject({ method: 'GET', url: '/v2/projects', headers: bOwn.headers })).statusCode,
        401,
      );
    });

    test('an owner revokes any key, an admin key included; revocation is permanent', async () => {
      const d = await inject('DELETE', `/v2/api-keys/${admin.record.id}`, o.owner);
      assert.equal(d.statusCode, 200);
      const first = d.json().revokedAt;
      assert.equal(
        (await t.app.inject({ method: 'GET', url: '/v2/projects', headers: admin.headers })).statusCode,
        401,
      );
      // Revoking again keeps the first revocation time.
      const again = await inject('DELETE', `/v2/api-keys/${admin.record.id}`, o.owner);
      assert.equal(again.statusCode, 200);
      assert.equal(again.json().revokedAt, first);
      const listed = (await inject('GET', '/v2/api-keys', o.owner))
        .json()
        .find((k: { id: string }) => k.id === admin.record.id);
      assert.equal(listed.status, 'revoked');
    });

    test('unknown ids give 404 api_key_not_found', async () => {
      for (const id of ['00000000-0000-4000-8000-000000000000', 'nope']) {
        const r = await inject('DELETE', `/v2/api-keys/${id}`, o.owner);
        assert.equal(r.statusCode, 404);
        assert.equal(r.json().errorCode, 'api_key_not_found');
      }
    });
  });
});
