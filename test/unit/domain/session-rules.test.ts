// Rules that web sessions share with API keys (spec rule 5) and the one they do not (rule 6: a
// dialogue edit's window).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { canManageKey, canSeeKey } from '../../../src/domain/api-keys.js';
import { normaliseDialogueEditRequest } from '../../../src/domain/dialogue-edits.js';
import { AppError } from '../../../src/domain/errors.js';
import { SECTION_EXPANSION_FLAG, SEGMENT_LIPSYNC_FLAG } from '../../../src/domain/feature-flags.js';

test('a signed-in member sees and manages only keys that user created', () => {
  const member = { keyId: null, userId: 'u-member', role: 'member' as const };
  const own = { id: 'k1', createdByKeyId: null, createdByUserId: 'u-member', role: 'member' as const };
  const admins = { id: 'k2', createdByKeyId: null, createdByUserId: 'u-admin', role: 'admin' as const };
  const byKey = { id: 'k3', createdByKeyId: 'k-owner', role: 'owner' as const };
  assert.ok(canSeeKey(member, own) && canManageKey(member, own));
  assert.ok(!canSeeKey(member, admins) && !canManageKey(member, admins));
  assert.ok(!canSeeKey(member, byKey));
  // A key made by nobody (the CLI) is nobody's own: a session's null key id matches no null.
  assert.ok(!canSeeKey(member, { id: 'k4', createdByKeyId: null, role: 'member' }));
  const admin = { keyId: null, userId: 'u-admin', role: 'admin' as const };
  assert.ok(canSeeKey(admin, own) && canManageKey(admin, own));
  assert.ok(canSeeKey(admin, byKey) && !canManageKey(admin, byKey), 'an admin may not act on an owner key');
});

test('a dialogue edit window: refused for API keys, checked for sessions', () => {
  const org = { flags: [SEGMENT_LIPSYNC_FLAG, SECTION_EXPANSION_FLAG], flagsReadable: true };
  const body = {
    sourceVideoUrl: 'https://example.com/v.mp4',
    transcript: { segments: [{ words: [{ id: 'w1', text: 'hi', startMs: 0, endMs: 300 }] }] },
    edits: [],
  };
  const code = (fn: () => unknown) => {
    try {
      fn();
    } catch (err) {
      assert.ok(err instanceof AppError);
      return `${err.code}:${err.extras.field}`;
    }
    return 'ok';
  };
  assert.equal(
    code(() => normaliseDialogueEditRequest({ ...body, startMs: 100 }, org)),
    'dialogue_edit_unsupported:startMs',
  );
  assert.equal(
    code(() => normaliseDialogueEditRequest({ ...body, endMs: 900 }, org)),
    'dialogue_edit_unsupported:endMs',
  );
  const r = normaliseDialogueEditRequest({ ...body, startMs: 100, endMs: 900 }, org, true);
  assert.deepEqual([r.startMs, r.endMs], [100, 900]);
  const whole = normaliseDialogueEditRequest(body, org, true);
  assert.deepEqual([whole.startMs, whole.endMs], [0, null]);
  assert.equal(
    code(() => normaliseDialogueEditRequest({ ...body, startMs: 900, endMs: 100 }, org, true)),
    'invalid_request:endMs',
  );
  assert.equal(
    code(() => normaliseDialogueEditRequest({ ...body, startMs: -1 }, org, true)),
    'invalid_request:startMs',
  );
  assert.equal(
    code(() => normaliseDialogueEditRequest({ ...body, startMs: 1.5 }, org, true)),
    'invalid_request:startMs',
  );
  // The rollout flags still apply to sessions.
  assert.equal(
    code(() =>
      normaliseDialogueEditRequest({ ...body, startMs: 0 }, { flags: [], flagsReadable: true }, true),
    ),
    'dialogue_edit_retime_required:undefined',
  );
});
