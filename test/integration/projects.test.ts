// /v2/projects: create, read, list (newest first, pageable), rename, delete, scoped to the organization.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createOrgWithKey, createTestServices, type TestOrg, type TestServices } from '../helpers/index.js';

describe(`projects (${process.env.TEST_DATABASE ?? 'sqlite'})`, () => {
  let t: TestServices;
  let org: TestOrg;
  let other: TestOrg;

  before(async () => {
    t = await createTestServices();
    org = await createOrgWithKey(t.services);
    other = await createOrgWithKey(t.services);
  });
  after(() => t.cleanup());

  const call = (who: TestOrg, method: string, url: string, payload?: unknown) =>
    t.app.inject({ method: method as 'GET', url, headers: who.owner.headers, payload: payload as object });

  function assertNotFound(res: { statusCode: number; json(): any }) {
    assert.equal(res.statusCode, 404);
    const b = res.json();
    assert.equal(b.statusCode, 404);
    assert.equal(b.errorCode, 'project_not_found');
    assert.equal(b.field, 'projectId');
    assert.ok(b.message && b.suggestion);
  }

  test('create, read, rename, delete', async () => {
    const created = await call(org, 'POST', '/v2/projects', { name: '  Launch video  ' });
    assert.equal(created.statusCode, 201, created.body);
    const p = created.json();
    assert.match(p.id, /^[0-9a-f-]{36}$/);
    assert.equal(p.name, 'Launch video');
    assert.equal(p.organizationId, org.organization.id);
    assert.ok(!Number.isNaN(Date.parse(p.createdAt)));
    assert.equal(p.updatedAt, p.createdAt);

    const read = await call(org, 'GET', `/v2/projects/${p.id}`);
    assert.equal(read.statusCode, 200);
    assert.deepEqual(read.json(), p);

    await new Promise((r) => setTimeout(r, 5));
    const renamed = await call(org, 'PATCH', `/v2/projects/${p.id}`, { name: 'Launch v2' });
    assert.equal(renamed.statusCode, 200);
    assert.equal(renamed.json().name, 'Launch v2');
    assert.ok(renamed.json().updatedAt > p.updatedAt);
    assert.equal(renamed.json().createdAt, p.createdAt);
    assert.equal((await call(org, 'GET', `/v2/projects/${p.id}`)).json().name, 'Launch v2');

    const put = await call(org, 'PUT', `/v2/projects/${p.id}`, { name: 'Launch v3' });
    assert.equal(put.statusCode, 200);
    assert.equal(put.json().name, 'Launch v3');

    const del = await call(org, 'DELETE', `/v2/projects/${p.id}`);
    assert.equal(del.statusCode, 200);
    assert.equal(del.json().id, p.id);
    assertNotFound(await call(org, 'GET', `/v2/projects/${p.id}`));
    assertNotFound(await call(org, 'DELETE', `/v2/projects/${p.id}`));
  });

  test('a blank name is refused', async () => {
    const res = await call(org, 'POST', '/v2/projects', { name: '   ' });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().field, 'name');
  });

  test('missing, malformed and foreign ids are all project_not_found', async () => {
    const foreign = (await call(other, 'POST', '/v2/projects', { name: 'theirs' })).json();
    for (const id of [
      randomUUID(),
      'not-a-uuid',
      foreign.id,
      `${foreign.id.slice(0, -1)}x`,
      "1' OR '1'='1",
    ]) {
      const url = `/v2/projects/${encodeURIComponent(id)}`;
      assertNotFound(await call(org, 'GET', url));
      assertNotFound(await call(org, 'PATCH', url, { name: 'mine now' }));
      assertNotFound(await call(org, 'DELETE', url));
    }
    const still = await call(other, 'GET', `/v2/projects/${foreign.id}`);
    assert.equal(still.statusCode, 200);
    assert.equal(still.json().name, 'theirs');
  });

  test("the list holds only the organization's projects, newest first, and pages with a cursor", async () => {
    const o = await createOrgWithKey(t.services, { name: 'Paging org' });
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      const r = await call(o, 'POST', '/v2/projects', { name: `p${i}` });
      ids.push(r.json().id);
      // Distinct creation times, so "newest first" has one right answer (ties are ordered by id).
      await new Promise((res) => setTimeout(res, 3));
    }
    await call(other, 'POST', '/v2/projects', { name: 'foreign' });

    const all = (await call(o, 'GET', '/v2/projects')).json();
    assert.equal(all.length, 7);
    assert.deepEqual(
      all.map((p: { name: string }) => p.name),
      ['p6', 'p5', 'p4', 'p3', 'p2', 'p1', 'p0'],
    );
    for (let i = 1; i < all.length; i++) assert.ok(all[i - 1].createdAt >= all[i].createdAt);

    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    for (;;) {
      const res = await call(o, 'GET', `/v2/projects?limit=3${cursor ? `&cursor=${cursor}` : ''}`);
      assert.equal(res.statusCode, 200);
      const page = res.json() as { id: string }[];
      assert.ok(page.length <= 3);
      if (page.length === 0) break;
      pages++;
      seen.push(...page.map((p) => p.id));
      cursor = page[page.length - 1].id;
      if (page.length < 3) break;
    }
    assert.equal(pages, 3);
    assert.deepEqual(
      seen,
      all.map((p: { id: string }) => p.id),
    );
    assert.deepEqual([...seen].sort(), [...ids].sort());
  });

  test('paging never skips or repeats projects created in the same instant', async () => {
    const o = await createOrgWithKey(t.services);
    const at = new Date().toISOString();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const id = randomUUID();
      ids.push(id);
      await t.services.store.projects.insert({
        id,
        organizationId: o.organization.id,
        name: `same ${i}`,
        createdAt: at,
        updatedAt: at,
      });
    }
    const seen: string[] = [];
    let cursor = '';
    for (let page = 0; page < 5; page++) {
      const res = await call(o, 'GET', `/v2/projects?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      const items = res.json() as { id: string }[];
      if (items.length === 0) break;
      seen.push(...items.map((p) => p.id));
      cursor = items[items.length - 1].id;
    }
    assert.equal(seen.length, 5);
    assert.deepEqual([...seen].sort(), [...ids].sort());
  });

  test('a cursor that is not a project of the organization is 400 naming cursor', async () => {
    const foreign = (await call(other, 'POST', '/v2/projects', { name: 'theirs 2' })).json();
    for (const c of [foreign.id, randomUUID(), 'garbage']) {
      const res = await call(org, 'GET', `/v2/projects?limit=2&cursor=${c}`);
      assert.equal(res.statusCode, 400);
      assert.equal(res.json().field, 'cursor');
    }
  });

  test('a deleted project no longer appears in the list', async () => {
    const o = await createOrgWithKey(t.services);
    const a = (await call(o, 'POST', '/v2/projects', { name: 'a' })).json();
    const b = (await call(o, 'POST', '/v2/projects', { name: 'b' })).json();
    await call(o, 'DELETE', `/v2/projects/${a.id}`);
    assert.deepEqual(
      (await call(o, 'GET', '/v2/projects')).json().map((p: { id: string }) => p.id),
      [b.id],
    );
  });
});
