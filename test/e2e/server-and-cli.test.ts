// The real server process and the real `lipsync` command on one database: first start, keys and
// organizations managed from the CLI while the server runs, bad configuration, the API document.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createDeployment,
  firstStartKey,
  runCli,
  runCliJson,
  startServer,
  type TestDeployment,
  type TestServer,
} from '../helpers/index.js';

describe(`server and CLI (${process.env.TEST_DATABASE ?? 'sqlite'})`, { timeout: 180_000 }, () => {
  let dep: TestDeployment;
  let server: TestServer;
  let ownerKey: string;

  before(async () => {
    dep = await createDeployment();
    server = await startServer({ env: { ...dep.env } });
  });
  after(async () => {
    if (server) await server.stop();
    if (dep) await dep.cleanup();
  });

  const api = (path: string, key: string | null, init: RequestInit = {}) =>
    fetch(`${server.url}${path}`, {
      ...init,
      headers: {
        ...(key ? { 'x-api-key': key } : {}),
        ...(init.body ? { 'content-type': 'application/json' } : {}),
      },
    });
  const cli = <T = Record<string, any>>(...args: string[]) => runCliJson<T>(args, { env: { ...dep.env } });

  test('the first start prints an owner key and a curl line that uses it', () => {
    const out = server.stdout();
    const key = firstStartKey(out);
    assert.ok(key, `no key line in:\n${out}`);
    ownerKey = key;
    assert.match(out, /shown only once/);
    const curl = out.split('\n').find((l) => l.includes('curl '));
    assert.ok(curl, 'no curl line');
    assert.ok(curl.includes(`x-api-key: ${ownerKey}`));
    assert.ok(curl.includes(`${server.url}/v2/projects`), curl);
    // Local development: where webhooks to localhost are allowed.
    assert.match(out, /LIPSYNC_ALLOW_PRIVATE_URLS=true/);
    // And how to save it for the lipsync command.
    const login = out.split('\n').find((l) => l.includes('lipsync login '));
    assert.ok(login?.includes(`--server ${server.url} --key ${ownerKey}`), login);
  });

  test('the printed account link opens a page, makes the owner account once, and signs in', async () => {
    const line = server
      .stdout()
      .split('\n')
      .find((l) => l.includes(`${server.url}/setup#`));
    assert.ok(line, `no account link in:\n${server.stdout()}`);
    const link = new URL(line.trim());
    const page = await fetch(link);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /Create your account/);
    const body = { token: link.hash.slice(1), email: 'owner@example.com', password: 'owner password 1' };
    const post = (path: string, b: unknown) =>
      fetch(`${server.url}${path}`, {
        method: 'POST',
        // As a browser page of the server sends it (fetch also sends Sec-Fetch-Mode).
        headers: { 'content-type': 'application/json', origin: server.url },
        body: JSON.stringify(b),
      });
    assert.equal((await post('/api/auth/account-link', body)).status, 201);
    const again = await post('/api/auth/account-link', { ...body, email: 'other@example.com' });
    assert.equal(again.status, 410);
    assert.equal(((await again.json()) as { errorCode: string }).errorCode, 'account_link_invalid');
    const signedIn = await post('/api/auth/sign-in/email', { email: body.email, password: body.password });
    assert.equal(signedIn.status, 200);
    const cookie = signedIn.headers.getSetCookie()[0]!.split(';')[0]!;
    const list = await fetch(`${server.url}/v2/projects`, { headers: { cookie } });
    assert.equal(list.status, 200);

    // The operator makes a link for a member of the same organization.
    const session = (await (
      await fetch(`${server.url}/api/auth/session`, { headers: { cookie } })
    ).json()) as {
      organization: { id: string };
    };
    const made = await cli('org', 'account-link', session.organization.id, '--role', 'member');
    assert.equal(made.role, 'member');
    const memberLink = new URL(made.link);
    const joined = await post('/api/auth/account-link', {
      token: memberLink.hash.slice(1),
      email: 'member@example.com',
      password: 'member password 1',
    });
    assert.equal(joined.status, 201);
    assert.deepEqual(await joined.json(), {
      organizationId: session.organization.id,
      email: 'member@example.com',
      role: 'member',
    });
  });

  test('the printed key works over HTTP', async () => {
    const list = await api('/v2/projects', ownerKey);
    assert.equal(list.status, 200);
    assert.deepEqual(await list.json(), []);
    const created = await api('/v2/projects', ownerKey, {
      method: 'POST',
      body: JSON.stringify({ name: 'e2e' }),
    });
    assert.equal(created.status, 201);
    assert.equal(((await created.json()) as { name: string }).name, 'e2e');
    assert.equal((await api('/v2/projects', null)).status, 401);
  });

  test('health reports the database in use', async () => {
    const res = await api('/health', null);
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { status: 'ok', database: dep.database });
  });

  test('org create, list, update and secret print one JSON object each', async () => {
    const org = await cli('org', 'create', '--name', 'Acme', '--plan', 'creator', '--flags', 'a,b');
    assert.match(org.id, /^[0-9a-f-]{36}$/);
    assert.equal(org.name, 'Acme');
    assert.equal(org.plan, 'creator');
    assert.deepEqual(org.flags, ['a', 'b']);
    assert.equal(org.draft, false);
    assert.equal(org.webhookSecret, undefined);

    const list = await cli<{ organizations: { id: string; name: string }[] }>('org', 'list');
    assert.ok(list.organizations.some((o) => o.name === 'Default organization'));
    assert.ok(list.organizations.some((o) => o.id === org.id));

    const upd = await cli(
      'org',
      'update',
      org.id,
      '--name',
      'Acme Inc',
      '--plan',
      'scale',
      '--concurrency',
      '7',
    );
    assert.equal(upd.name, 'Acme Inc');
    assert.equal(upd.plan, 'scale');
    assert.equal(upd.concurrency, 7);
    assert.deepEqual(upd.flags, ['a', 'b']);

    const s1 = await cli('org', 'secret', org.id);
    assert.equal(s1.organizationId, org.id);
    assert.match(s1.secret, /^whsec_/);
    assert.equal((await cli('org', 'secret', org.id)).secret, s1.secret);
    const s2 = await cli('org', 'secret', org.id, '--rotate');
    assert.match(s2.secret, /^whsec_/);
    assert.notEqual(s2.secret, s1.secret);
    assert.equal((await cli('org', 'secret', org.id)).secret, s2.secret);
  });

  test('org update adds and removes flags without replacing the set, and prints the result', async () => {
    const list = await cli<{ organizations: { name: string; flags: string[] }[] }>('org', 'list');
    const first = list.organizations.find((o) => o.name === 'Default organization')!;
    assert.deepEqual([...first.flags].sort(), ['section_expansion', 'segment_lipsync', 'tts_async']);

    const org = await cli('org', 'create', '--name', 'Flags Co', '--flags', 'a,b');
    assert.deepEqual((await cli('org', 'update', org.id, '--add-flags', 'tts_async,a')).flags, [
      'a',
      'b',
      'tts_async',
    ]);
    assert.deepEqual((await cli('org', 'update', org.id, '--remove-flags', 'a')).flags, ['b', 'tts_async']);
    const text = await runCli(['org', 'update', org.id, '--add-flags', 'c'], { env: { ...dep.env } });
    assert.equal(text.code, 0, text.stderr);
    assert.match(text.stdout, /flags=b,tts_async,c/);
    const both = await runCli(['org', 'update', org.id, '--flags', 'x', '--add-flags', 'y'], {
      env: { ...dep.env },
    });
    assert.equal(both.code, 2, both.stdout);
    assert.match(both.stderr, /--flags/);
    assert.deepEqual((await cli('org', 'update', org.id, '--flags', 'x')).flags, ['x']);
  });

  test('a key created by the CLI works on the running server at once; a revoked one fails at once', async () => {
    const org = await cli('org', 'create', '--name', 'Keys Ltd');
    const k = await cli('key', 'create', '--org', org.id, '--name', 'deploy', '--role', 'admin');
    assert.match(k.key, /^sk_lipsync_/);
    assert.equal(k.name, 'deploy');
    assert.equal(k.role, 'admin');

    const ok = await api('/v2/projects', k.key);
    assert.equal(ok.status, 200);

    const list = await cli<{ keys: Record<string, unknown>[] }>('key', 'list', '--org', org.id);
    assert.equal(list.keys.length, 1);
    assert.equal(list.keys[0].id, k.id);
    assert.equal(list.keys[0].key, undefined);
    assert.ok(!JSON.stringify(list).includes(k.key));

    const renamed = await cli('key', 'rename', k.id, 'deploy-2');
    assert.equal(renamed.name, 'deploy-2');
    const seen = (await (await api('/v2/api-keys', k.key)).json()) as { id: string; name: string }[];
    assert.equal(seen.find((x) => x.id === k.id)?.name, 'deploy-2');

    const blank = await cli('key', 'create', '--org', org.id, '--name', ' ');
    assert.equal(blank.name, 'API key');

    const revoked = await cli('key', 'revoke', k.id);
    assert.equal(revoked.status, 'revoked');
    assert.ok(revoked.revokedAt);
    assert.equal((await api('/v2/projects', k.key)).status, 401);
    assert.equal((await api('/v2/projects', blank.key)).status, 200);
  });

  test('a draft organization is refused with 422 until it is finished', async () => {
    const org = await cli('org', 'create', '--name', 'Draft Co', '--draft');
    assert.equal(org.draft, true);
    const k = await cli('key', 'create', '--org', org.id);
    const res = await api('/v2/projects', k.key);
    assert.equal(res.status, 422);
    assert.equal(((await res.json()) as { errorCode: string }).errorCode, 'organization_draft');
    const done = await cli('org', 'update', org.id, '--no-draft');
    assert.equal(done.draft, false);
    assert.equal((await api('/v2/projects', k.key)).status, 200);
  });

  test('admission pause, status and resume', async () => {
    const p = await cli('admission', 'pause', '--reason', 'maintenance');
    assert.equal(p.paused, true);
    assert.equal(p.reason, 'maintenance');
    assert.ok(p.since);
    const s = await cli('admission', 'status');
    assert.equal(s.paused, true);
    assert.equal(s.reason, 'maintenance');
    const r = await cli('admission', 'resume');
    assert.equal(r.paused, false);
    assert.equal((await cli('admission', 'status')).paused, false);
  });

  test('CLI errors exit non-zero; with --json the one object names the error', async () => {
    const r = await runCli(['key', 'create', '--org', '00000000-0000-4000-8000-000000000000', '--json'], {
      env: { ...dep.env },
    });
    assert.notEqual(r.code, 0);
    const lines = r.stdout.split('\n').filter((l) => l.trim() !== '');
    assert.equal(lines.length, 1, r.stdout);
    assert.match(JSON.parse(lines[0]).error, /not found/);

    const bad = await runCli(['org', 'create', '--name', 'X', '--plan', 'platinum'], { env: { ...dep.env } });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /platinum/);
  });

  test('GET /v2/openapi.json is an OpenAPI 3.1 document listing /v2/projects', async () => {
    const res = await api('/v2/openapi.json', null);
    assert.equal(res.status, 200);
    const doc = (await res.json()) as { openapi: string; paths: Record<string, unknown> };
    assert.match(doc.openapi, /^3\.1\./);
    assert.ok(doc.paths['/v2/projects'], Object.keys(doc.paths).join(', '));
    assert.ok(doc.paths['/v2/errors']);
    assert.ok(doc.paths['/v2/api-keys']);
  });

  test('/docs serves HTML', async () => {
    const res = await api('/docs', null);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /text\/html/);
    assert.match(await res.text(), /<html/i);
  });

  test('the server stops cleanly and a second start prints no new key', async () => {
    assert.equal(await server.stop(), 0);
    server = await startServer({ env: { ...dep.env } });
    assert.doesNotMatch(server.stdout(), /sk_lipsync_/);
    assert.equal((await api('/v2/projects', ownerKey)).status, 200);
  });
});

describe('bad configuration', { timeout: 60_000 }, () => {
  test('PORT=abc stops the start with a non-zero exit naming the variable', async () => {
    const r = await runCli(['serve'], {
      env: { PORT: 'abc', LIPSYNC_DATA_DIR: '/nonexistent/never-created' },
    });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /PORT/);
    assert.match(r.stderr, /abc/);
    assert.doesNotMatch(r.stdout, /sk_lipsync_/);
  });

  test('every bad variable is named at once', async () => {
    const r = await runCli(['serve'], { env: { PORT: 'abc', LIPSYNC_ROLE: 'boss', REDIS_URL: 'http://x' } });
    assert.notEqual(r.code, 0);
    for (const name of ['PORT', 'LIPSYNC_ROLE', 'REDIS_URL']) assert.match(r.stderr, new RegExp(name));
  });

  test('CLI commands refuse bad configuration the same way', async () => {
    const r = await runCli(['org', 'list', '--json'], { env: { LIPSYNC_RATE_LIMIT_PER_MINUTE: 'lots' } });
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /LIPSYNC_RATE_LIMIT_PER_MINUTE/);
    const lines = r.stdout.split('\n').filter((l) => l.trim() !== '');
    assert.equal(lines.length, 1);
    assert.ok(JSON.parse(lines[0]).problems.some((p: string) => p.includes('LIPSYNC_RATE_LIMIT_PER_MINUTE')));
  });
});
