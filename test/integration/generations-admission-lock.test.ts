// The admission transaction (count active generations, then insert) must hold its lock from its first
// statement, or two processes on one database can interleave: on SQLite another process's commit
// between the count and the insert made the insert fail with SQLITE_BUSY_SNAPSHOT (a 500 for a valid
// request while `lipsync worker` heartbeats), on PostgreSQL two admissions could both pass the count.
// Two service instances on the same database play the two processes.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { sql } from 'kysely';
import { LIFECYCLE_ENGINE_ENV } from './generations-support.js';
import { createOrgWithKey, createTestServices, type TestOrg, type TestServices } from '../helpers/index.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';

describe(`admission lock (${DB})`, () => {
  let a: TestServices;
  let b: TestServices;
  let org: TestOrg;

  before(async () => {
    a = await createTestServices({ env: { ...LIFECYCLE_ENGINE_ENV, LIPSYNC_RATE_LIMIT_ENABLED: 'false' } });
    b = await createTestServices({
      shareDatabaseWith: a,
      env: { ...LIFECYCLE_ENGINE_ENV, LIPSYNC_RATE_LIMIT_ENABLED: 'false' },
    });
    org = await createOrgWithKey(a.services, { plan: 'enterprise' });
  });
  after(async () => {
    await b?.cleanup();
    await a?.cleanup();
  });

  /** A write by the other process that must wait for the lock (fails fast here instead of waiting). */
  async function otherProcessWrite(): Promise<'committed' | 'blocked'> {
    const kb = b.services.store.db.kysely;
    try {
      if (b.database === 'sqlite') {
        await sql`pragma busy_timeout = 100`.execute(kb);
        await kb
          .insertInto('settings')
          .values({ key: `other-${Date.now()}`, value: '1', updated_at: new Date().toISOString() })
          .execute();
      } else {
        await kb.transaction().execute(async (trx) => {
          await sql`set local lock_timeout = '200ms'`.execute(trx);
          await b.services.store.organizations.lock(org.organization.id, trx);
        });
      }
      return 'committed';
    } catch (err) {
      const code = (err as { code?: string }).code ?? '';
      assert.ok(['SQLITE_BUSY', '55P03'].includes(code), `unexpected ${code}: ${String(err)}`);
      return 'blocked';
    } finally {
      if (b.database === 'sqlite') await sql`pragma busy_timeout = 5000`.execute(kb);
    }
  }

  test('while an admission transaction is open, another process cannot slip a commit in; the admission commits', async () => {
    const ka = a.services.store.db.kysely;
    const seen = await ka.transaction().execute(async (trx) => {
      await a.services.store.organizations.lock(org.organization.id, trx);
      const active = await a.services.store.generations.countActive(org.organization.id, trx);
      const other = await otherProcessWrite();
      // the write that follows the count (the generation insert in the real flow)
      await trx
        .insertInto('settings')
        .values({
          key: `admitted-${Date.now()}`,
          value: String(active),
          updated_at: new Date().toISOString(),
        })
        .execute();
      return other;
    });
    assert.equal(seen, 'blocked');
    // once the admission committed, the other process goes ahead
    assert.equal(await otherProcessWrite(), 'committed');
  });
});
