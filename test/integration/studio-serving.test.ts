// test-database: none
// The studio's page and files come from the API server itself: `/` with a strict content policy and
// no caching, the bundle under /studio/ with caching, and no API route shadowed by them.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { createTestServices, type TestServices } from '../helpers/index.js';
import { studioDir } from '../../src/http/studio.js';

describe('the studio served by the API server', () => {
  let t: TestServices;
  before(async () => {
    // run-tests.mjs builds dist/ (studio included) before integration tests that need it.
    assert.ok(existsSync(join(studioDir(), 'index.html')), 'the studio is not built: npm run build');
    t = await createTestServices();
  });
  after(async () => {
    await t?.cleanup();
  });

  test('GET / is the studio page, public, uncached, under a content policy', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/' });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /^text\/html/);
    assert.match(res.body, /<script type="module" src="\/studio\/app\.js">/);
    assert.equal(res.headers['cache-control'], 'no-store');
    const csp = String(res.headers['content-security-policy']);
    assert.match(csp, /default-src 'self'/);
    assert.match(csp, /frame-ancestors 'none'/);
    assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  });

  test('the bundle and its styles are served with caching; a missing file is the API’s 404', async () => {
    const js = await t.app.inject({ method: 'GET', url: '/studio/app.js' });
    assert.equal(js.statusCode, 200);
    assert.match(String(js.headers['content-type']), /javascript/);
    assert.match(String(js.headers['cache-control']), /max-age=3600/);
    assert.ok(js.body.length < 200_000, `the bundle is ${js.body.length} bytes`);
    const css = await t.app.inject({ method: 'GET', url: '/studio/app.css' });
    assert.equal(css.statusCode, 200);
    const missing = await t.app.inject({ method: 'GET', url: '/studio/nothing.js' });
    assert.equal(missing.statusCode, 404);
    assert.equal(missing.json().errorCode, 'route_not_found');
    const escape = await t.app.inject({ method: 'GET', url: '/studio/..%2f..%2fpackage.json' });
    assert.equal(escape.statusCode, 404);
  });

  test('API routes are unchanged: /v2 still needs a key', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/v2/projects' });
    assert.equal(res.statusCode, 401);
  });
});
