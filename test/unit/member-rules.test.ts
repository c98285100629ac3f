// The pure rules behind the members API: who invites, re-roles and removes whom; which keys a
// demotion revokes; the masked secret; usage months.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  checkCanChangeRole,
  checkCanInvite,
  checkCanRemove,
  invitationStands,
  keysOfUser,
  keysToRevoke,
} from '../../src/domain/members.js';
import { maskSecret } from '../../src/domain/webhooks.js';
import { monthStart } from '../../src/domain/usage.js';
import { AppError } from '../../src/domain/errors.js';

const code = (fn: () => void) => {
  try {
    fn();
    return 'ok';
  } catch (e) {
    assert.ok(e instanceof AppError);
    return e.code;
  }
};

test('invitations: members none, admins up to admin, owners any role', () => {
  assert.equal(
    code(() => checkCanInvite('member', 'member')),
    'forbidden',
  );
  assert.equal(
    code(() => checkCanInvite('admin', 'admin')),
    'ok',
  );
  assert.equal(
    code(() => checkCanInvite('admin', 'owner')),
    'forbidden',
  );
  assert.equal(
    code(() => checkCanInvite('owner', 'owner')),
    'ok',
  );
});

test('role changes and removal keep an owner and keep admins off owners', () => {
  assert.equal(
    code(() => checkCanChangeRole('admin', { role: 'member' }, 'admin', 1)),
    'ok',
  );
  assert.equal(
    code(() => checkCanChangeRole('admin', { role: 'member' }, 'owner', 1)),
    'forbidden',
  );
  assert.equal(
    code(() => checkCanChangeRole('admin', { role: 'owner' }, 'member', 2)),
    'forbidden',
  );
  assert.equal(
    code(() => checkCanChangeRole('member', { role: 'member' }, 'member', 1)),
    'forbidden',
  );
  assert.equal(
    code(() => checkCanChangeRole('owner', { role: 'owner' }, 'admin', 1)),
    'last_owner',
  );
  assert.equal(
    code(() => checkCanChangeRole('owner', { role: 'owner' }, 'admin', 2)),
    'ok',
  );
  assert.equal(
    code(() => checkCanRemove('owner', { role: 'owner' }, 1)),
    'last_owner',
  );
  assert.equal(
    code(() => checkCanRemove('admin', { role: 'owner' }, 3)),
    'forbidden',
  );
  assert.equal(
    code(() => checkCanRemove('admin', { role: 'admin' }, 1)),
    'ok',
  );
});

test('a demotion revokes the keys above the new role; a removal every key', () => {
  const keys = [{ role: 'owner' as const }, { role: 'admin' as const }, { role: 'member' as const }];
  assert.deepEqual(keysToRevoke(keys, 'member'), keys.slice(0, 2));
  assert.deepEqual(keysToRevoke(keys, 'admin'), keys.slice(0, 1));
  assert.deepEqual(keysToRevoke(keys, 'owner'), []);
  assert.deepEqual(keysToRevoke(keys, null), keys);
});

test("a user's keys: those the user made and, transitively, those made by them; none of others'", () => {
  const k = (id: string, byKey: string | null, byUser: string | null) => ({
    id,
    createdByKeyId: byKey,
    createdByUserId: byUser,
  });
  // Listed children first, so that one pass over the list would miss the deepest key.
  const keys = [
    k('c', 'b', null),
    k('b', 'a', null),
    k('a', null, 'u'),
    k('x', null, 'v'),
    k('y', 'x', null),
  ];
  assert.deepEqual(
    keysOfUser(keys, 'u').map((x) => x.id),
    ['c', 'b', 'a'],
  );
  assert.deepEqual(
    keysOfUser(keys, 'v').map((x) => x.id),
    ['x', 'y'],
  );
  assert.deepEqual(keysOfUser(keys, 'w'), []);
});

test("an invitation stands while its inviter is a member who may still grant the role (the operator's always)", () => {
  assert.equal(invitationStands(null, null, 'owner'), true);
  assert.equal(invitationStands('u', 'owner', 'owner'), true);
  assert.equal(invitationStands('u', 'admin', 'admin'), true);
  assert.equal(invitationStands('u', null, 'member'), false, 'no longer a member');
  assert.equal(invitationStands('u', 'member', 'member'), false, 'members invite nobody');
  assert.equal(invitationStands('u', 'admin', 'owner'), false);
});

test('the masked secret keeps its kind and last four characters only', () => {
  const secret = 'whsec_' + 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8s9T0uvW';
  const masked = maskSecret(secret);
  assert.ok(masked.startsWith('whsec_'));
  assert.ok(masked.endsWith(secret.slice(-4)));
  assert.ok(masked.length < 20);
});

test('usage months start on the first day of the UTC month', () => {
  assert.equal(monthStart(new Date('2026-03-31T23:59:59.999Z')).toISOString(), '2026-03-01T00:00:00.000Z');
  assert.equal(monthStart(new Date('2026-01-01T00:00:00.000Z')).toISOString(), '2026-01-01T00:00:00.000Z');
});
