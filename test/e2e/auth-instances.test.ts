// Two API server processes on one database (one SQLite file, or one PostgreSQL schema): a key revoked
// on one instance, through the API or the CLI, is refused by the other on its very next request, on
// GET /v2/generate/{id} (the key and the generation read in one query) and on other routes alike; an
// organization turned draft is refused at once too. Both instances serve the key many times first,
// so a cache of authentications, if there were one, would be warm.
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createDeployment,
  runCliJson,
  startServer,
  type TestDeployment,
  type TestServer,
} from '../helpers/index.js';

describe(
  `authentication across instances (${process.env.TEST_DATABASE ?? 'sqlite'})`,
  { timeout: 180_000 },
  () => {
    let dep: TestDeployment;
    let a: TestServer;
    let b: TestServer;

    before(async () => {
      dep = await createDeployment({ env: { LOG_LEVEL: 'warn' } });
      // Instance A runs first (it migrates the database); B joins the same database.
      a = await startServer({ env: { ...dep.env, LIPSYNC_ROLE: 'api' } });
      b = await startServer({ env: { ...dep.env, LIPSYNC_ROLE: 'api' } });
    });
    after(async () => {
      await a?.stop();
      await b?.stop();
      await dep?.cleanup();
    });

    const cli = <T = Record<string, any>>(...args: string[]) => runCliJson<T>(args, { env: { ...dep.env } });
    const call = (server: TestServer, path: string, key: string, method = 'GET') =>
      fetch(`${server.url}${path}`, { method, headers: { 'x-api-key': key } });
    /** The status of GET /v2/generate/{id} for an id no generation has, and of GET /v2/projects. */
    const statuses = async (server: TestServer, key: string) => {
      const gen = await call(server, `/v2/generate/${randomUUID()}`, key);
      const projects = await call(server, '/v2/projects', key);
      return [gen.status, projects.status];
    };
    const warm = async (key: string) => {
      for (let i = 0; i < 20; i++) {
        for (const s of [a, b]) assert.deepEqual(await statuses(s, key), [404, 200]);
      }
    };

    test('a key revoked on one instance through the API is refused by the other at once', async () => {
      const org = await cli('org', 'create', '--name', 'Two instances');
      const admin = await cli('key', 'create', '--org', org.id, '--role', 'admin');
      const member = await cli('key', 'create', '--org', org.id, '--role', 'member');
      await warm(member.key);

      const revoked = await call(a, `/v2/api-keys/${member.id}`, admin.key, 'DELETE');
      assert.equal(revoked.status, 200, await revoked.text());
      assert.deepEqual(await statuses(b, member.key), [401, 401]);
      assert.deepEqual(await statuses(a, member.key), [401, 401]);
      // The other key of the organization is untouched.
      assert.deepEqual(await statuses(b, admin.key), [404, 200]);
    });

    test('a key revoked with the CLI is refused by both instances at once', async () => {
      const org = await cli('org', 'create', '--name', 'CLI revoke');
      const k = await cli('key', 'create', '--org', org.id, '--role', 'owner');
      await warm(k.key);
      const revoked = await cli('key', 'revoke', k.id);
      assert.equal(revoked.status, 'revoked');
      assert.deepEqual(await statuses(b, k.key), [401, 401]);
      assert.deepEqual(await statuses(a, k.key), [401, 401]);
    });

    test('an organization turned draft is refused by both instances at once, and served again after', async () => {
      const org = await cli('org', 'create', '--name', 'Draft later');
      const k = await cli('key', 'create', '--org', org.id);
      await warm(k.key);
      assert.equal((await cli('org', 'update', org.id, '--draft')).draft, true);
      assert.deepEqual(await statuses(b, k.key), [422, 422]);
      assert.deepEqual(await statuses(a, k.key), [422, 422]);
      assert.equal((await cli('org', 'update', org.id, '--no-draft')).draft, false);
      assert.deepEqual(await statuses(b, k.key), [404, 200]);
    });
  },
);
