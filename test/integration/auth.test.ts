// Authentication: the x-api-key header only; missing, misspelled, revoked and expired keys get 401;
// a draft organization gets 422 organization_draft.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createKey,
  createOrgWithKey,
  createTestServices,
  type TestOrg,
  type TestServices,
} from '../helpers/index.js';

describe(`authentication (${process.env.TEST_DATABASE ?? 'sqlite'})`, () => {
  let t: TestServices;
  let org: TestOrg;

  before(async () => {
    t = await createTestServices();
    org = await createOrgWithKey(t.services);
  });
  after(() => t.cleanup());

  const get = (headers: Record<string, string> = {}) =>
    t.app.inject({ method: 'GET', url: '/v2/projects', headers });

  function assert401(res: { statusCode: number; json(): any }) {
    assert.equal(res.statusCode, 401);
    const body = res.json();
    assert.equal(body.statusCode, 401);
    assert.equal(body.errorCode, 'unauthorized');
    assert.equal(typeof body.message, 'string');
    assert.equal(typeof body.suggestion, 'string');
  }

  test('a valid key in x-api-key is accepted', async () => {
    const res = await get(org.owner.headers);
    assert.equal(res.statusCode, 200);
    assert.deepEqual(res.json(), []);
  });

  test('surrounding whitespace in the header is tolerated', async () => {
    assert.equal((await get({ 'x-api-key': `  ${org.owner.key} ` })).statusCode, 200);
  });

  test('a missing key gives 401', async () => {
    assert401(await get());
  });

  test('an empty key gives 401', async () => {
    assert401(await get({ 'x-api-key': '' }));
  });

  test('a misspelled key gives 401', async () => {
    const k = org.owner.key;
    const last = k.at(-1) === 'A' ? 'B' : 'A';
    assert401(await get({ 'x-api-key': k.slice(0, -1) + last }));
    assert401(await get({ 'x-api-key': k.slice(0, -1) }));
    assert401(await get({ 'x-api-key': k + 'x' }));
    assert401(await get({ 'x-api-key': 'not-a-key' }));
  });

  test('the Authorization header is not used', async () => {
    assert401(await get({ authorization: `Bearer ${org.owner.key}` }));
    assert401(await get({ authorization: org.owner.key }));
  });

  test('a revoked key gives 401 at once', async () => {
    const k = await createKey(t.services, org.organization.id, { name: 'soon revoked' });
    assert.equal((await get(k.headers)).statusCode, 200);
    const del = await t.app.inject({
      method: 'DELETE',
      url: `/v2/api-keys/${k.record.id}`,
      headers: org.owner.headers,
    });
    assert.equal(del.statusCode, 200);
    assert401(await get(k.headers));
  });

  test('a key revoked with itself stops working on the next request', async () => {
    const k = await createKey(t.services, org.organization.id, { role: 'admin' });
    const del = await t.app.inject({
      method: 'DELETE',
      url: `/v2/api-keys/${k.record.id}`,
      headers: k.headers,
    });
    assert.equal(del.statusCode, 200);
    assert401(await get(k.headers));
  });

  test('an expired key gives 401; one expiring later works', async () => {
    // Keys cannot be created already expired: make one that expires in a moment and let it pass.
    const expired = await createKey(t.services, org.organization.id, {
      expiresAt: new Date(Date.now() + 300).toISOString(),
    });
    await new Promise((r) => setTimeout(r, 400));
    assert401(await get(expired.headers));
    const later = await createKey(t.services, org.organization.id, {
      expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
    });
    assert.equal((await get(later.headers)).statusCode, 200);
  });

  test('a key expires while in use', async (ctx) => {
    // The clock is moved past the expiry, not waited for: the first use is within it however slow
    // this machine is.
    const expiresAt = Date.now() + 3_600_000;
    const k = await createKey(t.services, org.organization.id, {
      expiresAt: new Date(expiresAt).toISOString(),
    });
    assert.equal((await get(k.headers)).statusCode, 200);
    ctx.mock.timers.enable({ apis: ['Date'], now: expiresAt + 1000 });
    try {
      assert401(await get(k.headers));
    } finally {
      ctx.mock.timers.reset();
    }
  });

  test('a key of a draft organization gives 422 organization_draft', async () => {
    const draft = await createOrgWithKey(t.services, { draft: true });
    const res = await get(draft.owner.headers);
    assert.equal(res.statusCode, 422);
    const body = res.json();
    assert.equal(body.statusCode, 422);
    assert.equal(body.errorCode, 'organization_draft');
    assert.ok(body.message && body.suggestion);

    await t.services.organizations.update(draft.organization.id, { draft: false });
    assert.equal((await get(draft.owner.headers)).statusCode, 200);
  });

  test('routes without authentication still answer without a key', async () => {
    assert.equal((await t.app.inject({ method: 'GET', url: '/v2/errors' })).statusCode, 200);
    assert.equal((await t.app.inject({ method: 'GET', url: '/health' })).statusCode, 200);
  });

  test('a bad key on an open route is ignored, not refused', async () => {
    assert.equal(
      (await t.app.inject({ method: 'GET', url: '/v2/errors', headers: { 'x-api-key': 'nope' } })).statusCode,
      200,
    );
  });
});
