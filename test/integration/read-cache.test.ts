// The read cache of the authentication hot path (src/store/read-cache.ts): on SQLite, answers are
// reused while the database's change stamp is unchanged, and every committed write (this connection's
// or another's, in this process or another) ends them at once; on PostgreSQL nothing is cached.
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import SQLite from 'better-sqlite3';
import {
  completedGenerationRecord,
  createOrgWithKey,
  createTestServices,
  type TestOrg,
  type TestServices,
} from '../helpers/index.js';
import { hashApiKey } from '../../src/domain/api-keys.js';
import { changeStamp } from '../../src/store/database.js';
import { ReadCache } from '../../src/store/read-cache.js';

const sqlite = (process.env.TEST_DATABASE ?? 'sqlite') === 'sqlite';

async function nextSecond(): Promise<void> {
  const now = Math.floor(Date.now() / 1000);
  while (Math.floor(Date.now() / 1000) === now) await new Promise((r) => setTimeout(r, 20));
}

describe(`read cache (${process.env.TEST_DATABASE ?? 'sqlite'})`, () => {
  let t: TestServices;
  let org: TestOrg;

  before(async () => {
    t = await createTestServices({ env: { LIPSYNC_RATE_LIMIT_ENABLED: 'false' } });
    org = await createOrgWithKey(t.services);
  });
  after(async () => t?.cleanup());

  const findKey = () => t.services.store.apiKeys.findByHashWithOrganization(hashApiKey(org.owner.key));

  test('an unchanged database answers from the cache; a write through this process ends it', async () => {
    const first = await findKey();
    const second = await findKey();
    assert.ok(first && second);
    assert.deepEqual(second, first);
    if (!sqlite) {
      assert.notEqual(second, first, 'PostgreSQL has no exact change stamp: every read runs its query');
      return;
    }
    assert.equal(second, first, 'the same answer, not read again');
    assert.ok(Object.isFrozen(first.organization), 'shared answers are frozen');
    assert.throws(() => {
      (first.organization as { name: string }).name = 'changed';
    }, TypeError);

    await t.services.store.apiKeys.rename(org.owner.record.id, 'renamed here');
    const third = await findKey();
    assert.notEqual(third, first);
    assert.equal(third?.key.name, 'renamed here');
  });

  test('a write by another connection (another process, the CLI) ends the cache at once', async (ctx) => {
    if (!sqlite) return ctx.skip('SQLite only: the other connection is a second handle on the file');
    const before = await findKey();
    assert.equal(await findKey(), before);
    const other = new SQLite(join(t.dataDir, 'lipsync.sqlite'));
    try {
      other
        .prepare('update api_keys set revoked_at = ? where id = ?')
        .run(new Date().toISOString(), org.owner.record.id);
    } finally {
      other.close();
    }
    // A request that arrives after the commit is read in a later turn of the event loop.
    await new Promise((resolve) => setImmediate(resolve));
    const after = await findKey();
    assert.notEqual(after, before);
    assert.ok(after?.key.revokedAt, 'the revocation is read');
    const res = await t.app.inject({ url: '/v2/projects', headers: org.owner.headers });
    assert.equal(res.statusCode, 401, res.body);
    org = await createOrgWithKey(t.services); // a usable key for the tests after this one
  });

  test("the stamp reads another connection's commits once per event-loop turn, this connection's always", async (ctx) => {
    if (!sqlite) return ctx.skip('SQLite only');
    const stamp = changeStamp(t.services.db.kysely);
    assert.ok(stamp);
    const other = new SQLite(join(t.dataDir, 'lipsync.sqlite'));
    try {
      const rename = other.prepare('update api_keys set name = ? where id = ?');
      // The clock held still: the two readings fall within the reuse window (DATA_VERSION_REUSE_MS)
      // however slow this machine is, so the first reading stands for the rest of the turn.
      const at = performance.now();
      ctx.mock.method(performance, 'now', () => at);
      const first = stamp();
      assert.ok(first);
      rename.run('renamed by another connection', org.owner.record.id);
      const sameTurn = stamp();
      assert.ok(sameTurn);
      assert.deepEqual(sameTurn, first);
      // And held still into the next turn: the reading is dropped at the turn's end all the same.
      await new Promise((resolve) => setImmediate(resolve));
      const nextTurn = stamp();
      assert.ok(nextTurn);
      assert.notEqual(nextTurn[1], first[1], 'the next turn reads data_version again');
      await t.services.store.apiKeys.rename(org.owner.record.id, 'renamed in the same turn');
      const own = stamp();
      assert.ok(own);
      assert.notEqual(own[0], nextTurn[0], "this connection's commit moves the stamp at once");
    } finally {
      other.close();
    }
  });

  test('nothing is cached while a transaction holds the connection, nor from what it wrote', async (ctx) => {
    if (!sqlite) return ctx.skip('SQLite only');
    const stamp = changeStamp(t.services.db.kysely);
    assert.ok(stamp);
    assert.ok(stamp());
    const cache = new ReadCache<{ n: number }>(stamp);
    let loads = 0;
    const load = async () => ({ n: ++loads });
    await t.services.db.kysely.transaction().execute(async (trx) => {
      await trx
        .updateTable('api_keys')
        .set({ name: 'in a transaction' })
        .where('id', '=', org.owner.record.id)
        .execute();
      assert.equal(stamp(), null);
      await cache.read('k', load);
      await cache.read('k', load);
      assert.equal(loads, 2, 'read twice inside the transaction');
    });
    const a = await cache.read('k', load);
    const b = await cache.read('k', load);
    assert.equal(loads, 3);
    assert.equal(a, b);
    assert.equal((await findKey())?.key.name, 'in a transaction');
  });

  test('an answer read before a change is not kept, even when another read has moved the cache on', async (ctx) => {
    if (!sqlite) return ctx.skip('SQLite only');
    const cache = new ReadCache<{ n: number }>(changeStamp(t.services.db.kysely));
    const other = new SQLite(join(t.dataDir, 'lipsync.sqlite'));
    try {
      let loads = 0;
      await cache.read('k', async () => {
        loads++;
        // While this read waits (a turn of the event loop later): a commit by another connection,
        // then a read that moves the cache on to the new state.
        await new Promise((resolve) => setImmediate(resolve));
        other.prepare('update api_keys set name = ? where id = ?').run('moved on', org.owner.record.id);
        await cache.read('other', async () => ({ n: 0 }));
        return { n: loads };
      });
      await cache.read('k', async () => ({ n: ++loads }));
      assert.equal(loads, 2, 'the answer read before the commit was not kept');
    } finally {
      other.close();
    }
  });

  test('an unknown key is never kept', async (ctx) => {
    if (!sqlite) return ctx.skip('SQLite only');
    const cache = new ReadCache<{ n: number }>(changeStamp(t.services.db.kysely));
    let loads = 0;
    const load = async () => {
      loads++;
      return null;
    };
    await cache.read('unknown', load);
    await cache.read('unknown', load);
    assert.equal(loads, 2);
  });

  test('GET /v2/generate/{id}: the same text while nothing changes, a fresh URL each second, a change at once', async () => {
    const id = await seedCompleted(t, org);
    const get = (query = '') =>
      t.app.inject({ url: `/v2/generate/${id}${query}`, headers: org.owner.headers });
    await nextSecond();
    const a = await get();
    const b = await get();
    assert.equal(a.statusCode, 200, a.body);
    assert.equal(a.headers['content-type'], 'application/json; charset=utf-8');
    // The same text (should a second boundary fall between them, only the URL's expiry moves on).
    const strip = (s: string) => s.replace(/expires=\d+&sig=[0-9a-f]+/, '');
    assert.equal(strip(b.body), strip(a.body));
    const withProgress = await get('?include=progress');
    assert.equal(typeof withProgress.json().progress_percent, 'number');
    assert.equal((await get()).json().progress_percent, undefined);

    await nextSecond();
    const c = await get();
    assert.notEqual(c.json().outputUrl, a.json().outputUrl);
    assert.equal(strip(c.body), strip(a.body));

    await t.services.db.kysely
      .updateTable('generations')
      .set({ output_file_name: 'changed.mp4' })
      .where('id', '=', id)
      .execute();
    assert.equal((await get()).json().outputFileName, 'changed.mp4');
  });
});

/** A COMPLETED generation with an output, written as a worker leaves it. */
async function seedCompleted(t: TestServices, org: TestOrg): Promise<string> {
  const g = completedGenerationRecord(org.organization.id);
  await t.services.store.generations.insert(g);
  return g.id;
}
