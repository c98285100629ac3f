import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { UrlSigner, cleanFileName, resolveSigningSecret } from '../../../src/storage/url-signer.js';

const SECRET = 'unit-test-secret-0123456789abcdef0123';

function query(url: string): { key: string; expires?: string; sig?: string; name?: string } {
  const u = new URL(url);
  const get = (k: string) => u.searchParams.get(k) ?? undefined;
  return {
    key: u.pathname.replace(/^\/v2\/files\//, ''),
    expires: get('expires'),
    sig: get('sig'),
    name: get('name'),
  };
}

test('a signed URL checks as valid until it expires, then as expired', () => {
  let now = 1_700_000_000_000;
  const s = new UrlSigner(SECRET, 'https://api.example.com', () => now);
  const url = s.sign('assets/o/a.mp4', { expiresInSeconds: 60 });
  assert.match(
    url,
    /^https:\/\/api\.example\.com\/v2\/files\/assets\/o\/a\.mp4\?expires=1700000060&sig=[0-9a-f]{64}$/,
  );
  const q = query(url);
  assert.equal(s.check(q.key, q), 'valid');
  now += 60_000;
  assert.equal(s.check(q.key, q), 'expired');
});

test('the default validity is seven days', () => {
  const now = 1_700_000_000_000;
  const s = new UrlSigner(SECRET, 'http://x', () => now);
  assert.equal(query(s.sign('k')).expires, String(now / 1000 + 7 * 24 * 3600));
});

test('any change to key, expiry, name or signature, or another secret, is invalid', () => {
  const s = new UrlSigner(SECRET, 'http://x');
  const q = query(s.sign('a/b.wav', { fileName: 'talk.wav' }));
  assert.equal(s.check('a/b.wav', q), 'valid');
  assert.equal(s.check('a/c.wav', q), 'invalid');
  assert.equal(s.check('a/b.wav', { ...q, expires: String(Number(q.expires) + 1) }), 'invalid');
  assert.equal(s.check('a/b.wav', { ...q, name: 'other.wav' }), 'invalid');
  assert.equal(s.check('a/b.wav', { ...q, name: undefined }), 'invalid');
  const flipped = (q.sig![0] === 'a' ? 'b' : 'a') + q.sig!.slice(1);
  assert.equal(s.check('a/b.wav', { ...q, sig: flipped }), 'invalid');
  assert.equal(s.check('a/b.wav', { ...q, sig: q.sig!.slice(2) }), 'invalid');
  assert.equal(s.check('a/b.wav', { ...q, sig: undefined }), 'invalid');
  assert.equal(s.check('a/b.wav', { ...q, expires: 'soon' }), 'invalid');
  assert.equal(new UrlSigner(SECRET + 'x', 'http://x').check('a/b.wav', q), 'invalid');
});

test('an expired URL with a wrong signature is invalid, not expired', () => {
  const s = new UrlSigner(SECRET, 'http://x', () => 2_000_000_000_000);
  assert.equal(s.check('k', { expires: '1', sig: '0'.repeat(64) }), 'invalid');
});

test('file names lose path separators and control characters', () => {
  assert.equal(cleanFileName('../../etc/passwd'), '.._.._etc_passwd');
  assert.equal(cleanFileName('a\nb\u0000c.mp4'), 'abc.mp4');
  assert.equal(cleanFileName('   '), 'file');
  assert.equal(cleanFileName('é 東京.mp4'), 'é 東京.mp4');
});

test('without a configured secret one is created once (0600) and reused', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'lipsync-secret-'));
  try {
    const [a, b] = await Promise.all([resolveSigningSecret(null, dir), resolveSigningSecret(null, dir)]);
    assert.match(a, /^[0-9a-f]{64}$/);
    assert.equal(a, b);
    assert.equal(await resolveSigningSecret(null, dir), a);
    assert.equal((await stat(join(dir, 'signing-secret'))).mode & 0o777, 0o600);
    assert.equal((await readFile(join(dir, 'signing-secret'), 'utf8')).trim(), a);
    assert.equal(
      await resolveSigningSecret('configured-secret-of-32-characters!!', dir),
      'configured-secret-of-32-characters!!',
    );
    await writeFile(join(dir, 'signing-secret'), 'short');
    await assert.rejects(resolveSigningSecret(null, dir), /no usable secret/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
