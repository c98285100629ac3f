// The authentication lookups read many at once (src/store/coalesced-read.ts, ADR 14): on PostgreSQL
// the lookups of one event-loop turn are one query; every answer is the one a query of its own would
// give (unknown keys, other organizations' and deleted generations, a revoked key), on both databases.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import pg from 'pg';
import {
  completedGenerationRecord,
  createOrgWithKey,
  createTestServices,
  type TestOrg,
  type TestServices,
} from '../helpers/index.js';
import { hashApiKey } from '../../src/domain/api-keys.js';
import type { GenerationRecord } from '../../src/store/generations.js';

const database = process.env.TEST_DATABASE ?? 'sqlite';

describe(`coalesced authentication lookups (${database})`, () => {
  let t: TestServices;
  let a: TestOrg;
  let b: TestOrg;
  let ofA: GenerationRecord[];
  let ofB: GenerationRecord;
  let deleted: GenerationRecord;

  before(async () => {
    t = await createTestServices({ env: { LIPSYNC_RATE_LIMIT_ENABLED: 'false' } });
    a = await createOrgWithKey(t.services);
    b = await createOrgWithKey(t.services);
    ofA = Array.from({ length: 5 }, () => completedGenerationRecord(a.organization.id));
    ofB = completedGenerationRecord(b.organization.id);
    deleted = { ...completedGenerationRecord(a.organization.id), deletedAt: new Date().toISOString() };
    for (const g of [...ofA, ofB, deleted]) await t.services.store.generations.insert(g);
  });
  after(async () => t?.cleanup());

  /** Counts the queries sent to PostgreSQL while `run` goes on (0 on SQLite). */
  async function counted<T>(run: () => Promise<T>): Promise<{ value: T; queries: number }> {
    const pool = t.services.db.pgPool;
    if (!pool) return { value: await run(), queries: 0 };
    let queries = 0;
    const original = pool.query.bind(pool) as (...args: unknown[]) => unknown;
    (pool as { query: unknown }).query = (...args: unknown[]) => {
      queries++;
      return original(...args);
    };
    try {
      return { value: await run(), queries };
    } finally {
      delete (pool as { query?: unknown }).query;
    }
  }

  test('lookups made together: each gets its own answer, in one query on PostgreSQL', async () => {
    const keys = t.services.store.apiKeys;
    const hashA = hashApiKey(a.owner.key);
    const hashB = hashApiKey(b.owner.key);
    const unknown = hashApiKey('sk-unknown-key-that-nobody-has-0000000000000000');
    const { value, queries } = await counted(() =>
      Promise.all([
        ...ofA.map((g) => keys.findByHashWithGeneration(hashA, g.id)),
        keys.findByHashWithGeneration(hashA, ofB.id), // another organization's generation
        keys.findByHashWithGeneration(hashA, deleted.id),
        keys.findByHashWithGeneration(hashB, ofB.id),
        keys.findByHashWithGeneration(unknown, ofA[0]!.id),
        keys.findByHashWithGeneration(hashA, ofA[0]!.id), // the same lookup twice
      ]),
    );
    const [g0, g1, g2, g3, g4, foreign, gone, own, none, again] = value;
    for (const [i, found] of [g0, g1, g2, g3, g4].entries()) {
      assert.equal(found?.key.id, a.owner.record.id);
      assert.equal(found?.organization.id, a.organization.id);
      assert.equal(found?.generation?.id, ofA[i]!.id);
      assert.equal(found?.generation?.status, 'COMPLETED');
    }
    assert.equal(foreign?.key.id, a.owner.record.id, 'the key is found');
    assert.equal(foreign?.generation, null, "another organization's generation is not");
    assert.equal(gone?.generation, null, 'a deleted generation is not');
    assert.equal(own?.key.id, b.owner.record.id);
    assert.equal(own?.generation?.id, ofB.id);
    assert.equal(none, null, 'an unknown key');
    assert.deepEqual(again, g0);
    if (database === 'postgres') assert.equal(queries, 1, 'ten lookups, one query');

    const together = await counted(() =>
      Promise.all([
        keys.findByHashWithOrganization(hashA),
        keys.findByHashWithOrganization(hashB),
        keys.findByHashWithOrganization(unknown),
      ]),
    );
    assert.deepEqual(
      together.value.map((f) => f?.organization.id ?? null),
      [a.organization.id, b.organization.id, null],
    );
    if (database === 'postgres') assert.equal(together.queries, 1);
  });

  test('a key revoked while lookups wait is refused by every lookup made after the revocation', async () => {
    const c = await createOrgWithKey(t.services);
    const hash = hashApiKey(c.owner.key);
    const keys = t.services.store.apiKeys;
    const before = await keys.findByHashWithOrganization(hash);
    assert.equal(before?.key.revokedAt, null);
    // A lookup that is already waiting for its batch, then the revocation, then lookups made after it.
    const waiting = keys.findByHashWithOrganization(hash);
    await t.services.apiKeys.revoke(c.owner.record.id);
    const after = await Promise.all([
      keys.findByHashWithOrganization(hash),
      keys.findByHashWithOrganization(hash),
    ]);
    for (const found of after) assert.notEqual(found?.key.revokedAt, null, 'the revocation is seen');
    await waiting; // whichever state it read, it was made before the revocation
    assert.equal(await t.services.apiKeys.authenticate(c.owner.key), null, 'the key no longer authenticates');
  });

  test("the pool's connections terminated under it: lookups fail or answer, none hangs, later ones answer", async (ctx) => {
    const pool = t.services.db.pgPool;
    if (!pool) return ctx.skip('PostgreSQL only');
    const hash = hashApiKey(a.owner.key);
    const keys = t.services.store.apiKeys;
    // Every connection the pool holds, ended by the server (as a restart or an administrator would).
    const clients = await Promise.all(Array.from({ length: 4 }, () => pool.connect()));
    const pids = await Promise.all(
      clients.map(
        async (c) => (await c.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid,
      ),
    );
    for (const c of clients) c.release();
    // From a connection of its own, outside the pool.
    const admin = new pg.Client({ connectionString: t.services.config.databaseUrl ?? undefined });
    await admin.connect();
    try {
      await admin.query('select pg_terminate_backend(pid) from unnest($1::int[]) as pid', [pids]);
    } finally {
      await admin.end();
    }
    // Several rounds at once, each settled (answered or failed): a batch that never settles would
    // hold its slot of the two allowed out and stall every later lookup.
    for (let round = 0; round < 3; round++) {
      const settled = await Promise.allSettled(ofA.map((g) => keys.findByHashWithGeneration(hash, g.id)));
      for (const s of settled)
        if (s.status === 'rejected') assert.match(String(s.reason), /terminat|connection/i);
    }
    const answers = await Promise.all(ofA.map((g) => keys.findByHashWithGeneration(hash, g.id)));
    assert.deepEqual(
      answers.map((f) => f?.generation?.id),
      ofA.map((g) => g.id),
    );
  });
});
