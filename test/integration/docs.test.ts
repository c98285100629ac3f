// The API document and its pages are public.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestServices, type TestServices } from '../helpers/index.js';

describe(`API documentation (${process.env.TEST_DATABASE ?? 'sqlite'})`, () => {
  let t: TestServices;
  before(async () => {
    t = await createTestServices();
  });
  after(() => t.cleanup());

  test('GET /v2/openapi.json needs no key and is OpenAPI 3.1 with the x-api-key scheme', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v2/openapi.json' });
    assert.equal(res.statusCode, 200);
    const doc = res.json();
    assert.match(doc.openapi, /^3\.1\./);
    assert.ok(doc.paths['/v2/projects']);
    assert.ok(doc.paths['/v2/projects/{id}']);
    assert.deepEqual(doc.components.securitySchemes.apiKey, {
      type: 'apiKey',
      in: 'header',
      name: 'x-api-key',
    });
    // The public catalogue is documented as needing no key.
    assert.deepEqual(doc.paths['/v2/errors'].get.security, []);
  });

  test('/docs and the document it loads need no key', async () => {
    for (const url of ['/docs', '/docs/json']) {
      const res = await t.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 200, `${url}: ${res.body.slice(0, 200)}`);
    }
    const page = await t.app.inject({ method: 'GET', url: '/docs' });
    assert.match(String(page.headers['content-type']), /text\/html/);
  });
});
