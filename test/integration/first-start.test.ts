// The first start of a self-hosted server (services/bootstrap.ts): its own organization has every
// feature (no rollout flag to turn on), the banner names the key once and the setting for local
// webhooks; operators change flags without replacing the set.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createTestServices, type TestServices } from '../helpers/index.js';
import { bootstrapFirstOrganization, firstStartBanner } from '../../src/services/bootstrap.js';
import { ROLLOUT_FLAGS } from '../../src/domain/feature-flags.js';

describe(`first start (${process.env.TEST_DATABASE ?? 'sqlite'})`, () => {
  let t: TestServices;
  let first: Awaited<ReturnType<typeof bootstrapFirstOrganization>>;

  before(async () => {
    t = await createTestServices();
    first = await bootstrapFirstOrganization(t.services);
  });
  after(() => t.cleanup());

  test('the default organization has every rollout flag, and only on the first start', async () => {
    assert.ok(first);
    assert.deepEqual([...first.organization.flags].sort(), [...ROLLOUT_FLAGS].sort());
    const stored = await t.services.store.organizations.findById(first.organization.id);
    assert.deepEqual([...stored!.flags].sort(), [...ROLLOUT_FLAGS].sort());
    assert.equal(await bootstrapFirstOrganization(t.services), null);
  });

  test('its owner key reaches the asynchronous TTS endpoint (the flag gate passes)', async () => {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v2/tts/jobs',
      headers: { 'x-api-key': first!.key, 'content-type': 'application/json' },
      payload: { script: 'Hello.', voiceId: 'no-such-voice' },
    });
    // Refused for the voice, after the flag check: not tts_async_unavailable.
    assert.equal(res.json().errorCode, 'voice_not_found', res.body);
  });

  test('flags are added and removed without replacing the others; a set with changes is refused', async () => {
    const id = first!.organization.id;
    const removed = await t.services.organizations.update(id, { removeFlags: ['tts_async'] });
    assert.deepEqual(
      removed.flags,
      ROLLOUT_FLAGS.filter((f) => f !== 'tts_async'),
    );
    const added = await t.services.organizations.update(id, { addFlags: ['tts_async', 'beta.x'] });
    assert.deepEqual([...added.flags].sort(), [...ROLLOUT_FLAGS, 'beta.x'].sort());
    assert.deepEqual(
      (await t.services.store.organizations.findById(id))!.flags.sort(),
      [...ROLLOUT_FLAGS, 'beta.x'].sort(),
    );
    await assert.rejects(
      t.services.organizations.update(id, { flags: ['a'], addFlags: ['b'] }),
      (e: { code?: string }) => e.code === 'invalid_request',
    );
    const replaced = await t.services.organizations.update(id, { flags: ['only'] });
    assert.deepEqual(replaced.flags, ['only']);
  });

  test('flags added concurrently all stay (the read and the write are one locked step)', async () => {
    const id = (await t.services.organizations.create({ name: 'Racing flags', plan: 'creator' })).id;
    const flags = ['race.a', 'race.b', 'race.c', 'race.d', 'race.e'];
    await Promise.all(flags.map((f) => t.services.organizations.update(id, { addFlags: [f] })));
    assert.deepEqual((await t.services.store.organizations.findById(id))!.flags.sort(), flags);
  });

  test('the banner shows the key once and names the setting for local webhooks', () => {
    const lines = firstStartBanner(first!, { publicUrl: 'http://localhost:8080', allowPrivateUrls: false });
    const text = lines.join('\n');
    assert.equal(text.split(first!.key).length - 1, 3, 'the key line, the curl line and the login line');
    assert.match(text, /curl -H "x-api-key: .+" http:\/\/localhost:8080\/v2\/projects/);
    assert.match(text, /LIPSYNC_ALLOW_PRIVATE_URLS=true/);
    assert.match(text, /webhook/i);
    // Beside the key: the single-use link that makes the owner's account (web sessions).
    assert.equal(text.split(first!.ownerLink).length - 1, 1);
    assert.match(first!.ownerLink, /^http:\/\/localhost:\d+\/setup#[A-Za-z0-9_-]{43}$/);
    const allowed = firstStartBanner(first!, { publicUrl: 'http://x', allowPrivateUrls: true }).join('\n');
    assert.doesNotMatch(allowed, /=true to allow/);
  });
});
