// The error paths every route shares: the public catalogue, schema failures, unknown routes,
// unexpected failures and bodies the JSON parser refuses. All leave in the spec's error body.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ERRORS } from '../../src/domain/errors.js';
import { createOrgWithKey, createTestServices, type TestOrg, type TestServices } from '../helpers/index.js';

function assertErrorBody(body: any, status: number, errorCode: string) {
  assert.equal(body.statusCode, status);
  assert.equal(body.errorCode, errorCode);
  assert.equal(typeof body.message, 'string');
  assert.ok(body.message.length > 0);
  assert.equal(typeof body.suggestion, 'string');
}

describe(`HTTP error handling (${process.env.TEST_DATABASE ?? 'sqlite'})`, () => {
  let t: TestServices;
  let org: TestOrg;
  let failures = 0;

  before(async () => {
    t = await createTestServices({
      configureApp: (app) => {
        // A route that fails the way a bug would: a plain Error, nothing the catalogue knows.
        app.get('/v2/test-only/explode', async () => {
          failures++;
          throw new Error('simulated bug: secret detail /etc/passwd');
        });
      },
    });
    org = await createOrgWithKey(t.services);
  });
  after(() => t.cleanup());

  test('GET /v2/errors needs no key and serves every catalogue entry', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v2/errors' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /application\/json/);
    const list = res.json() as { code: string; message: string; suggestion: string }[];
    assert.ok(Array.isArray(list));
    assert.deepEqual(list.map((e) => e.code).sort(), Object.keys(ERRORS).sort());
    for (const e of list) {
      const src = ERRORS[e.code as keyof typeof ERRORS];
      assert.equal(e.message, src.message);
      assert.equal(e.suggestion, src.suggestion);
    }
  });

  test('a schema failure is 400 naming the field', async () => {
    const missing = await t.app.inject({
      method: 'POST',
      url: '/v2/projects',
      headers: org.owner.headers,
      payload: {},
    });
    assert.equal(missing.statusCode, 400);
    assertErrorBody(missing.json(), 400, 'invalid_request');
    assert.equal(missing.json().field, 'name');

    const empty = await t.app.inject({
      method: 'POST',
      url: '/v2/projects',
      headers: org.owner.headers,
      payload: { name: '' },
    });
    assert.equal(empty.statusCode, 400);
    assert.equal(empty.json().field, 'name');

    const query = await t.app.inject({
      method: 'GET',
      url: '/v2/projects?limit=0',
      headers: org.owner.headers,
    });
    assert.equal(query.statusCode, 400);
    assertErrorBody(query.json(), 400, 'invalid_request');
    assert.equal(query.json().field, 'limit');

    const tooMany = await t.app.inject({
      method: 'GET',
      url: '/v2/projects?limit=101',
      headers: org.owner.headers,
    });
    assert.equal(tooMany.statusCode, 400);
    assert.equal(tooMany.json().field, 'limit');
  });

  test('an unknown route is a spec-shaped 404 route_not_found, with or without a key', async () => {
    for (const headers of [{}, org.owner.headers]) {
      const res = await t.app.inject({ method: 'GET', url: '/v2/no-such-thing?x=1', headers });
      assert.equal(res.statusCode, 404);
      assertErrorBody(res.json(), 404, 'route_not_found');
      assert.match(res.json().message, /GET \/v2\/no-such-thing/);
      assert.doesNotMatch(res.json().message, /x=1/);
    }
    const wrongMethod = await t.app.inject({ method: 'PUT', url: '/v2/errors' });
    assert.equal(wrongMethod.statusCode, 404);
    assert.equal(wrongMethod.json().errorCode, 'route_not_found');
  });

  test('an unexpected failure is 500 internal_error with the request id and no internals', async () => {
    const before = failures;
    const res = await t.app.inject({
      method: 'GET',
      url: '/v2/test-only/explode',
      headers: org.owner.headers,
    });
    assert.equal(failures, before + 1, 'the failing route did not run');
    assert.equal(res.statusCode, 500);
    const body = res.json();
    assertErrorBody(body, 500, 'internal_error');
    const rid = res.headers['x-request-id'];
    assert.equal(typeof rid, 'string');
    assert.ok(String(rid).length > 0);
    assert.equal(body.requestId, rid);
    assert.doesNotMatch(res.body, /simulated bug|passwd/);
  });

  test('a client-given x-request-id is kept and used in the 500 body', async () => {
    const res = await t.app.inject({
      method: 'GET',
      url: '/v2/test-only/explode',
      headers: { ...org.owner.headers, 'x-request-id': 'trace-42.abc' },
    });
    assert.equal(res.statusCode, 500);
    assert.equal(res.headers['x-request-id'], 'trace-42.abc');
    assert.equal(res.json().requestId, 'trace-42.abc');

    const bad = await t.app.inject({
      method: 'GET',
      url: '/v2/test-only/explode',
      headers: { ...org.owner.headers, 'x-request-id': 'has spaces & <html>' },
    });
    assert.notEqual(bad.headers['x-request-id'], 'has spaces & <html>');
    assert.equal(bad.json().requestId, bad.headers['x-request-id']);
  });

  test('every response carries an x-request-id, distinct per request', async () => {
    const a = await t.app.inject({ method: 'GET', url: '/v2/errors' });
    const b = await t.app.inject({ method: 'GET', url: '/v2/errors' });
    assert.ok(a.headers['x-request-id']);
    assert.notEqual(a.headers['x-request-id'], b.headers['x-request-id']);
  });

  test("the router's refusals (a path parameter too long, a malformed URL) are catalogue errors", async () => {
    const long = await t.app.inject({
      method: 'GET',
      url: `/v2/generations/${'a'.repeat(300)}`,
      headers: org.owner.headers,
    });
    assert.equal(long.statusCode, 414, long.body);
    assertErrorBody(long.json(), 414, 'uri_too_long');
    assert.doesNotMatch(long.body, /FST_|aaaaaaaaaa/);
    assert.ok(long.headers['x-request-id']);

    const bad = await t.app.inject({
      method: 'GET',
      url: '/v2/generations/%E0%A4%A',
      headers: org.owner.headers,
    });
    assert.equal(bad.statusCode, 400, bad.body);
    assertErrorBody(bad.json(), 400, 'invalid_request');
    assert.doesNotMatch(bad.body, /FST_/);
  });

  test('a malformed JSON body is 400 invalid_request', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v2/projects',
      headers: { ...org.owner.headers, 'content-type': 'application/json' },
      payload: '{"name": "unterminated',
    });
    assert.equal(res.statusCode, 400);
    assertErrorBody(res.json(), 400, 'invalid_request');
  });

  test('an empty JSON body is 400 invalid_request', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v2/projects',
      headers: { ...org.owner.headers, 'content-type': 'application/json' },
      payload: '',
    });
    assert.equal(res.statusCode, 400);
    assertErrorBody(res.json(), 400, 'invalid_request');
  });

  test('an unsupported content type is 415 unsupported_media_type', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v2/projects',
      headers: { ...org.owner.headers, 'content-type': 'application/xml' },
      payload: '<name>x</name>',
    });
    assert.equal(res.statusCode, 415);
    assertErrorBody(res.json(), 415, 'unsupported_media_type');
  });

  test('authentication comes before body parsing', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v2/projects',
      headers: { 'content-type': 'application/json' },
      payload: '{bad',
    });
    assert.equal(res.statusCode, 401);
  });
});
