import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canManageKey, canSeeKey } from '../../../src/domain/api-keys.js';
import { loadConfig } from '../../../src/config.js';

test('a member sees its own key even when someone else created it, but may not manage it', () => {
  const actor = { keyId: 'k-member', role: 'member' as const };
  const own = { id: 'k-member', createdByKeyId: 'k-owner', role: 'member' as const };
  const other = { id: 'k-other', createdByKeyId: 'k-owner', role: 'member' as const };
  assert.equal(canSeeKey(actor, own), true);
  assert.equal(canSeeKey(actor, other), false);
  assert.equal(canManageKey(actor, own), false);
});

test('X-Forwarded-For is not trusted unless LIPSYNC_TRUST_PROXY is set', () => {
  assert.equal(loadConfig({}).trustProxy, false);
  assert.equal(loadConfig({ LIPSYNC_TRUST_PROXY: '1' }).trustProxy, true);
  assert.throws(() => loadConfig({ LIPSYNC_TRUST_PROXY: 'maybe' }), /LIPSYNC_TRUST_PROXY/);
});
