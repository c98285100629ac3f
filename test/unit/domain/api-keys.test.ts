import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import {
  KEY_PREFIX,
  ROLES,
  canGrantRole,
  canManageKey,
  canSeeKey,
  displayPrefix,
  generateApiKey,
  hashApiKey,
  hashesEqual,
  isKeyUsable,
  isRole,
  looksLikeApiKey,
  normaliseKeyName,
  type KeyActor,
  type KeySubject,
  type Role,
} from '../../../src/domain/api-keys.js';

const role = fc.constantFrom<Role>(...ROLES);
const id = fc.uuid();

describe('API key format', () => {
  test('a key is the prefix plus 32 random bytes in base64url', () => {
    const key = generateApiKey();
    assert.ok(key.startsWith(KEY_PREFIX));
    const secret = key.slice(KEY_PREFIX.length);
    assert.match(secret, /^[A-Za-z0-9_-]{43}$/);
    assert.equal(Buffer.from(secret, 'base64url').length, 32);
    assert.ok(looksLikeApiKey(key));
  });

  test('keys do not repeat and every one of the 256 secret bits varies', () => {
    const keys = Array.from({ length: 300 }, generateApiKey);
    assert.equal(new Set(keys).size, keys.length);
    const ones = new Array<number>(256).fill(0);
    for (const k of keys) {
      const bytes = Buffer.from(k.slice(KEY_PREFIX.length), 'base64url');
      for (let bit = 0; bit < 256; bit++) ones[bit] += (bytes[bit >> 3] >> (bit & 7)) & 1;
    }
    // Each bit is set in roughly half of the keys; a constant or missing bit means lost entropy.
    for (let bit = 0; bit < 256; bit++) {
      assert.ok(ones[bit] > 90 && ones[bit] < 210, `bit ${bit} set in ${ones[bit]} of 300 keys`);
    }
  });

  test('looksLikeApiKey refuses other prefixes, short and overlong values', () => {
    const key = generateApiKey();
    assert.equal(looksLikeApiKey(key.replace(KEY_PREFIX, 'sk_live_')), false);
    assert.equal(looksLikeApiKey(key.slice(0, -1)), false);
    assert.equal(looksLikeApiKey(KEY_PREFIX + 'a'.repeat(200)), false);
    assert.equal(looksLikeApiKey(''), false);
  });

  test('the display prefix shows the prefix and six characters, never the secret', () => {
    const key = generateApiKey();
    const shown = displayPrefix(key);
    assert.equal(shown, key.slice(0, KEY_PREFIX.length + 6));
    assert.ok(shown.length < key.length - 30);
  });
});

describe('API key hashing', () => {
  test('the hash is the SHA-256 hex digest', () => {
    const key = generateApiKey();
    assert.equal(hashApiKey(key), createHash('sha256').update(key).digest('hex'));
    assert.match(hashApiKey(key), /^[0-9a-f]{64}$/);
  });

  test('different keys hash differently; the same key always the same', () => {
    fc.assert(
      fc.property(fc.string(), fc.string(), (a, b) => {
        assert.equal(hashApiKey(a), hashApiKey(a));
        if (a !== b) assert.notEqual(hashApiKey(a), hashApiKey(b));
      }),
    );
  });

  test('hashesEqual compares digests and refuses different lengths', () => {
    const h = hashApiKey('x');
    assert.equal(hashesEqual(h, hashApiKey('x')), true);
    assert.equal(hashesEqual(h, hashApiKey('y')), false);
    assert.equal(hashesEqual(h, h.slice(0, 62)), false);
    assert.equal(hashesEqual(h, ''), false);
  });
});

describe('key names', () => {
  test('a blank name becomes "API key"', () => {
    for (const n of [undefined, null, '', ' ', '\t\n  ']) assert.equal(normaliseKeyName(n), 'API key');
  });

  test('names are trimmed and cut at 200 characters', () => {
    assert.equal(normaliseKeyName('  CI deploy  '), 'CI deploy');
    assert.equal(normaliseKeyName('x'.repeat(500)), 'x'.repeat(200));
  });

  test('a normalised name is never empty, at most 200 characters, and keeps a short trimmed name', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 300 }), (name) => {
        const n = normaliseKeyName(name);
        assert.ok(n.length > 0 && n.length <= 200);
        const t = name.trim();
        if (t !== '' && t.length <= 200) assert.equal(n, t);
        if (t === '') assert.equal(n, 'API key');
      }),
    );
  });
});

describe('roles', () => {
  const actor = (keyId: string, r: Role): KeyActor => ({ keyId, role: r });
  const subject = (sid: string, createdBy: string | null, r: Role): KeySubject => ({
    id: sid,
    createdByKeyId: createdBy,
    role: r,
  });

  test('isRole accepts exactly owner, admin and member', () => {
    assert.deepEqual(ROLES, ['owner', 'admin', 'member']);
    for (const r of ROLES) assert.ok(isRole(r));
    for (const r of ['Owner', 'root', '', 'members']) assert.equal(isRole(r), false);
  });

  test('owners see and manage every key', () => {
    fc.assert(
      fc.property(id, id, fc.option(id, { nil: null }), role, (a, s, by, r) => {
        assert.ok(canSeeKey(actor(a, 'owner'), subject(s, by, r)));
        assert.ok(canManageKey(actor(a, 'owner'), subject(s, by, r)));
      }),
    );
  });

  test('admins see every key and manage every key except owner keys', () => {
    fc.assert(
      fc.property(id, id, fc.option(id, { nil: null }), role, (a, s, by, r) => {
        assert.ok(canSeeKey(actor(a, 'admin'), subject(s, by, r)));
        assert.equal(canManageKey(actor(a, 'admin'), subject(s, by, r)), r !== 'owner');
      }),
    );
    // Even an owner key the admin created itself is out of reach.
    assert.equal(canManageKey(actor('a', 'admin'), subject('s', 'a', 'owner')), false);
  });

  test('members see and manage only keys they created', () => {
    fc.assert(
      fc.property(id, id, fc.option(id, { nil: null }), role, (a, s, by, r) => {
        const own = by === a;
        assert.equal(canSeeKey(actor(a, 'member'), subject(s, by, r)), own);
        assert.equal(canManageKey(actor(a, 'member'), subject(s, by, r)), own);
      }),
    );
    assert.equal(canSeeKey(actor('m', 'member'), subject('x', null, 'member')), false);
  });

  test('whoever may manage a key may also see it', () => {
    fc.assert(
      fc.property(id, role, id, fc.option(id, { nil: null }), role, (a, ar, s, by, sr) => {
        if (canManageKey(actor(a, ar), subject(s, by, sr)))
          assert.ok(canSeeKey(actor(a, ar), subject(s, by, sr)));
      }),
    );
  });

  test('a key grants only its own role or a lower one', () => {
    const expected: Record<Role, Role[]> = {
      owner: ['owner', 'admin', 'member'],
      admin: ['admin', 'member'],
      member: ['member'],
    };
    for (const a of ROLES) {
      for (const w of ROLES) assert.equal(canGrantRole(a, w), expected[a].includes(w), `${a} grants ${w}`);
    }
  });
});

describe('key usability', () => {
  const now = new Date('2030-01-01T00:00:00.000Z');
  test('active, revoked and expired keys', () => {
    assert.equal(isKeyUsable({ revokedAt: null, expiresAt: null }, now), true);
    assert.equal(isKeyUsable({ revokedAt: null, expiresAt: '2030-01-01T00:00:01.000Z' }, now), true);
    assert.equal(isKeyUsable({ revokedAt: null, expiresAt: '2030-01-01T00:00:00.000Z' }, now), false);
    assert.equal(isKeyUsable({ revokedAt: null, expiresAt: '2029-12-31T23:59:59.000Z' }, now), false);
    assert.equal(isKeyUsable({ revokedAt: '2029-01-01T00:00:00.000Z', expiresAt: null }, now), false);
    assert.equal(
      isKeyUsable({ revokedAt: '2029-01-01T00:00:00.000Z', expiresAt: '2031-01-01T00:00:00.000Z' }, now),
      false,
    );
  });
});
