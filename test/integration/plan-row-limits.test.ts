// Plan limits that count rows hold under parallel requests: they are counted in the transaction that
// inserts, after the organization's lock (services/row-limits.ts). Voice clones through a listening
// server with real parallel HTTP requests (each runs the real sample measurement), and the shared
// mechanism itself with parallel inserts (on PostgreSQL from two service instances, as two processes).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../src/domain/errors.js';
import { insertWithinLimit, type RowLimit } from '../../src/services/row-limits.js';
import { createOrgWithKey, createTestServices, fixture, type TestServices } from '../helpers/index.js';
import { uploadAssetFile } from '../helpers/multipart.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';

describe(`plan limits that count rows, under parallel requests (${DB})`, { timeout: 300_000 }, () => {
  let t: TestServices;
  let other: TestServices;
  let base = '';

  before(async () => {
    t = await createTestServices({ env: { LIPSYNC_RATE_LIMIT_ENABLED: 'false' } });
    other = await createTestServices({ shareDatabaseWith: t });
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(async () => {
    await other?.cleanup();
    await t?.cleanup();
  });

  test('six parallel clones on a one-slot plan: one created, five voice_clone_limit_reached', async () => {
    const org = await createOrgWithKey(t.services, { plan: 'free' });
    const sample = await uploadAssetFile(t.app, org.owner.headers, fixture('media/radio_speech.wav'));
    const answers = await Promise.all(
      Array.from({ length: 6 }, async (_, i) => {
        const res = await fetch(`${base}/v2/voices`, {
          method: 'POST',
          headers: { ...org.owner.headers, 'content-type': 'application/json' },
          body: JSON.stringify({ name: `clone ${i}`, assetId: sample.id }),
        });
        return { status: res.status, body: (await res.json()) as { errorCode?: string; message?: string } };
      }),
    );
    const made = answers.filter((a) => a.status === 201);
    assert.equal(made.length, 1, JSON.stringify(answers));
    for (const a of answers.filter((x) => x.status !== 201)) {
      assert.equal(a.status, 403, JSON.stringify(a));
      assert.equal(a.body.errorCode, 'voice_clone_limit_reached');
      assert.match(a.body.message ?? '', /free plan keeps at most 1 cloned voice/);
    }
    const list = await fetch(`${base}/v2/voices`, { headers: org.owner.headers });
    const clones = ((await list.json()) as { type: string }[]).filter((v) => v.type === 'cloned');
    assert.equal(clones.length, 1);
  });

  test('the shared mechanism: parallel inserts under a limit of two keep exactly two', async () => {
    const org = await createOrgWithKey(t.services, { plan: 'free' });
    const limitOf = (s: TestServices): RowLimit => ({
      count: async (db) =>
        Number(
          (
            await db
              .selectFrom('settings')
              .select((eb) => eb.fn.countAll<number | string>().as('n'))
              .where('key', 'like', `${org.organization.id}:%`)
              .executeTakeFirstOrThrow()
          ).n,
        ),
      assertRoom: (current) => {
        if (current >= 2) throw new AppError('concurrency_limit_reached', { message: `${s.database}: full` });
      },
    });
    const attempt = (s: TestServices, i: number) =>
      insertWithinLimit(s.services.store, org.organization.id, limitOf(s), async (trx) => {
        // Yield between the count and the insert, as real work in the transaction would.
        await new Promise((r) => setTimeout(r, 5));
        await trx
          .insertInto('settings')
          .values({ key: `${org.organization.id}:${i}`, value: '1', updated_at: new Date().toISOString() })
          .execute();
      }).then(
        () => 'inserted',
        (err: unknown) => {
          assert.ok(err instanceof AppError && err.code === 'concurrency_limit_reached', String(err));
          return 'refused';
        },
      );
    // On SQLite both instances would share this process's event loop, and better-sqlite3 waits for the
    // other's write lock synchronously (that wait would block the very transaction it waits for), so
    // there the requests race within one instance; separate processes are what the lock serializes.
    const second = DB === 'postgres' ? other : t;
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) => attempt(i % 2 === 0 ? t : second, i)),
    );
    assert.equal(results.filter((r) => r === 'inserted').length, 2, results.join(', '));
    assert.equal(await limitOf(t).count(t.services.store.db.kysely), 2);
  });
});
