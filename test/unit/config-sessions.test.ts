// The web-session variables: origins, the SMTP URL (a password never repeated in a message), defaults.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ConfigError, loadConfig } from '../../src/config.js';

const base = { LIPSYNC_DATA_DIR: '/tmp/lipsync-config-sessions' };

test('session defaults follow the public URL', () => {
  const c = loadConfig({ ...base, LIPSYNC_PUBLIC_URL: 'https://lip.example.com/' }).sessions;
  assert.deepEqual(c.trustedOrigins, ['https://lip.example.com']);
  assert.equal(c.smtpUrl, null);
  assert.equal(c.smtpFrom, 'lipsync@lip.example.com');
  assert.equal(c.ttlMs, 7 * 24 * 3600 * 1000);
  assert.equal(c.signUp, true);
});

test('trusted origins and SMTP are read and checked', () => {
  const c = loadConfig({
    ...base,
    LIPSYNC_TRUSTED_ORIGINS: 'https://studio.example.com, http://localhost:5173',
    LIPSYNC_SMTP_URL: 'smtps://user:secret@mail.example.com:465',
    LIPSYNC_SMTP_FROM: 'Studio <studio@example.com>',
    LIPSYNC_SESSION_TTL_HOURS: '12',
    LIPSYNC_SIGN_UP: 'false',
  }).sessions;
  assert.deepEqual(c.trustedOrigins, [
    'http://localhost:8080',
    'https://studio.example.com',
    'http://localhost:5173',
  ]);
  assert.equal(c.smtpUrl, 'smtps://user:secret@mail.example.com:465');
  assert.equal(c.ttlMs, 12 * 3600 * 1000);
  assert.equal(c.signUp, false);

  assert.throws(
    () =>
      loadConfig({
        ...base,
        LIPSYNC_TRUSTED_ORIGINS: 'https://studio.example.com/path',
        LIPSYNC_SMTP_URL: 'http://user:hunter2@mail.example.com',
        LIPSYNC_SMTP_FROM: 'not an address',
      }),
    (err: unknown) => {
      assert.ok(err instanceof ConfigError);
      const text = err.problems.join('\n');
      assert.match(text, /LIPSYNC_TRUSTED_ORIGINS/);
      assert.match(text, /LIPSYNC_SMTP_URL/);
      assert.match(text, /LIPSYNC_SMTP_FROM/);
      assert.doesNotMatch(text, /hunter2/);
      return true;
    },
  );
});
