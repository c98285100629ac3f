// A unique index that refuses a row is recognised by the database's error code (SQLite's extended
// result code, PostgreSQL's SQLSTATE 23505), not by the error's text: a clone's name taken is a false
// from the voice store, any other failure is thrown.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { createOrgWithKey, createTestServices, type TestOrg, type TestServices } from '../helpers/index.js';
import { isUniqueViolation } from '../../src/store/errors.js';
import type { VoiceRecord } from '../../src/store/voices.js';

describe(`unique violations by code (${process.env.TEST_DATABASE ?? 'sqlite'})`, () => {
  let t: TestServices;
  let org: TestOrg;
  before(async () => {
    t = await createTestServices();
    org = await createOrgWithKey(t.services);
  });
  after(() => t.cleanup());

  const voice = (name: string, id: string = randomUUID()): VoiceRecord => {
    const now = new Date().toISOString();
    return {
      id,
      organizationId: org.organization.id,
      name,
      provider: 'local',
      providerVoiceId: null,
      baseVoice: null,
      profile: null,
      sampleAssetId: null,
      sampleSeconds: null,
      verifiedAt: now,
      createdByKeyId: null,
      createdAt: now,
      updatedAt: now,
    };
  };

  test('a second voice of the same name (any case) is refused with false', async () => {
    assert.equal(await t.services.store.voices.insert(voice('Narrator')), true);
    assert.equal(await t.services.store.voices.insert(voice(' narrator ')), false);
  });

  test("the database's own error carries the code isUniqueViolation reads", async () => {
    const v = voice('Host');
    assert.equal(await t.services.store.voices.insert(v), true);
    // Same id, another name: the primary key refuses it, and no voice of that name exists: thrown.
    await assert.rejects(t.services.store.voices.insert(voice('Guest', v.id)), (err: unknown) => {
      assert.equal(isUniqueViolation(err), true);
      return true;
    });
  });

  test('other errors are not unique violations', () => {
    assert.equal(isUniqueViolation(new Error('UNIQUE constraint failed: voices.name_key')), false);
    assert.equal(isUniqueViolation({ code: 'SQLITE_CONSTRAINT_NOTNULL' }), false);
    assert.equal(isUniqueViolation({ code: '23503' }), false);
    assert.equal(isUniqueViolation(null), false);
  });
});
