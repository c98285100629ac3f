// Worker tokens: created once (only the hash stored), listed without the secret, refused once revoked.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestServices, type TestServices } from '../helpers/index.js';
import { WorkerTokenService, workerTokenView } from '../../src/services/worker-tokens.js';
import { hashApiKey } from '../../src/domain/api-keys.js';

describe(`worker tokens (${process.env.TEST_DATABASE ?? 'sqlite'})`, () => {
  let t: TestServices;
  let tokens: WorkerTokenService;

  before(async () => {
    t = await createTestServices();
    tokens = new WorkerTokenService(t.services.store.db.kysely);
  });
  after(() => t.cleanup());

  test('a created token authenticates; only its hash is stored', async () => {
    const { record, token } = await tokens.create('  gpu-1  ');
    assert.match(token, /^lwt_[A-Za-z0-9_-]{43}$/);
    assert.equal(record.name, 'gpu-1');
    const row = await t.services.store.db.kysely
      .withTables<{ worker_tokens: { id: string; token_hash: string } }>()
      .selectFrom('worker_tokens')
      .selectAll()
      .where('id', '=', record.id)
      .executeTakeFirstOrThrow();
    assert.equal((row as { token_hash: string }).token_hash, hashApiKey(token));
    assert.ok(!JSON.stringify(row).includes(token.slice(4)), 'the token itself is not stored');
    assert.equal((await tokens.authenticate(token))?.id, record.id);
    assert.equal(await tokens.authenticate(token.slice(0, -1) + (token.endsWith('A') ? 'B' : 'A')), null);
    assert.equal(await tokens.authenticate(undefined), null);
    assert.equal(await tokens.authenticate('sk_lipsync_' + token.slice(4)), null);
  });

  test('list shows every token without its secret; revoke refuses it on the next call', async () => {
    const a = await tokens.create(null);
    const b = await tokens.create('other');
    assert.equal(a.record.name, 'worker');
    const listed = (await tokens.list()).map(workerTokenView);
    const ids = listed.map((x) => x.id);
    assert.ok(ids.includes(a.record.id) && ids.includes(b.record.id));
    assert.ok(!JSON.stringify(listed).includes(a.token.slice(10)), 'no secret in the list');
    const revoked = await tokens.revoke(a.record.id);
    assert.ok(revoked.revokedAt);
    assert.equal(await tokens.authenticate(a.token), null);
    assert.equal((await tokens.authenticate(b.token))?.id, b.record.id, 'other tokens unaffected');
    const again = await tokens.revoke(a.record.id);
    assert.equal(again.revokedAt, revoked.revokedAt, 'revoking twice keeps the first time');
    assert.equal(
      (await tokens.list()).map(workerTokenView).find((x) => x.id === a.record.id)?.status,
      'revoked',
    );
    await assert.rejects(tokens.revoke('no-such-id'), /not found/);
  });
});
