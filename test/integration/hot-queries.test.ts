// The hot read path of GET /v2/generate/{id}: the key, its organization and the generation in one
// query compiled once (src/store/database.ts compileOnce), run directly on SQLite outside
// transactions and as named prepared statements on PostgreSQL.
import { randomUUID } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import {
  createOrgWithKey,
  createTestServices,
  generationRecord,
  type TestOrg,
  type TestServices,
} from '../helpers/index.js';
import { hashApiKey } from '../../src/domain/api-keys.js';
import type { GenerationRecord } from '../../src/store/generations.js';

describe(`hot read queries (${process.env.TEST_DATABASE ?? 'sqlite'})`, () => {
  let t: TestServices;
  let org: TestOrg;
  let other: TestOrg;

  before(async () => {
    t = await createTestServices({ env: { LIPSYNC_RATE_LIMIT_ENABLED: 'false' } });
    org = await createOrgWithKey(t.services);
    other = await createOrgWithKey(t.services);
  });
  after(async () => t?.cleanup());

  test('the key, its organization and the generation come back from one query, each as stored', async () => {
    const g = generationRecord(org.organization.id);
    await t.services.store.generations.insert(g);
    const found = await t.services.store.apiKeys.findByHashWithGeneration(hashApiKey(org.owner.key), g.id);
    assert.ok(found);
    assert.deepEqual(found.key, org.owner.record);
    assert.deepEqual(found.organization, org.organization);
    assert.deepEqual(found.generation, await t.services.store.generations.findAny(g.id));
    assert.equal(found.generation?.error, 'for the test');

    // Another organization's generation, a deleted one and an unknown id read as null; an unknown
    // key as no row at all.
    const theirs = generationRecord(other.organization.id);
    await t.services.store.generations.insert(theirs);
    const deleted = generationRecord(org.organization.id, { deletedAt: new Date().toISOString() });
    await t.services.store.generations.insert(deleted);
    for (const id of [theirs.id, deleted.id, randomUUID()]) {
      const r = await t.services.store.apiKeys.findByHashWithGeneration(hashApiKey(org.owner.key), id);
      assert.equal(r?.generation, null, id);
    }
    assert.equal(await t.services.store.apiKeys.findByHashWithGeneration('0'.repeat(64), g.id), null);
  });

  test('GET /v2/generate/{id} answers from the preloaded row, and 404 for another organization', async () => {
    const g = generationRecord(org.organization.id);
    await t.services.store.generations.insert(g);
    const mine = await t.app.inject({ url: `/v2/generate/${g.id}`, headers: org.owner.headers });
    assert.equal(mine.statusCode, 200, mine.body);
    assert.equal(mine.json().id, g.id);
    assert.equal(mine.json().status, 'FAILED');
    const theirs = await t.app.inject({ url: `/v2/generate/${g.id}`, headers: other.owner.headers });
    assert.equal(theirs.statusCode, 404);
    assert.equal(theirs.json().errorCode, 'generation_not_found');
  });

  test('a read during another transaction never sees its uncommitted rows', async () => {
    const g = generationRecord(org.organization.id);
    let during: Promise<unknown[]> | null = null;
    await assert.rejects(
      t.services.db.kysely.transaction().execute(async (trx) => {
        await t.services.store.generations.insert(g, trx);
        // Started while the transaction holds the connection (SQLite) or has not committed.
        during = Promise.all([
          t.services.store.generations.find(g.id),
          t.services.store.apiKeys.findByHashWithGeneration(hashApiKey(org.owner.key), g.id),
        ]);
        // Let the reads run as far as they can before the transaction ends.
        await new Promise((r) => setImmediate(r));
        throw new Error('roll back');
      }),
      /roll back/,
    );
    const [found, withKey] = (await during) as unknown as [
      GenerationRecord | null,
      { generation: GenerationRecord | null } | null,
    ];
    assert.equal(found, null);
    assert.equal(withKey?.generation, null);
    assert.equal(await t.services.store.generations.findAny(g.id), null);
  });

  test('PostgreSQL parses a hot statement once per connection; later runs reuse it and read the same', async (ctx) => {
    if (!t.services.db.pgPool) return ctx.skip('PostgreSQL only: named prepared statements');
    const g = generationRecord(org.organization.id, { status: 'COMPLETED', error: null, errorCode: null });
    await t.services.store.generations.insert(g);
    const generations = t.services.store.generations;
    const first = await generations.find(g.id, org.organization.id);
    const proto = pg.Connection.prototype as unknown as { parse(...args: unknown[]): void };
    const parse = proto.parse;
    let parses = 0;
    proto.parse = function (this: unknown, ...args: unknown[]) {
      parses++;
      return parse.apply(this, args);
    };
    try {
      for (let i = 0; i < 30; i++) {
        assert.deepEqual(await generations.find(g.id, org.organization.id), first);
      }
    } finally {
      proto.parse = parse;
    }
    assert.ok(first?.status === 'COMPLETED');
    // Only a connection that had not run the statement yet parses it: at most one per pool client.
    assert.ok(parses <= t.services.db.pgPool.totalCount, `${parses} parses for 30 runs`);
    assert.ok(parses < 30);
  });
});
