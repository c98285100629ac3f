// UrlSigner.sign keeps the URLs it signed within the current second (issue 15): every answer must be
// exactly the URL a signer without that memory gives at the same moment, and a new second (a new
// expiry) must give a new URL.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UrlSigner } from '../../../src/storage/url-signer.js';

const SECRET = 'unit-test-secret-0123456789abcdef0123';

/** A signer whose every call is its first: a new instance per URL (nothing remembered). */
const fresh = (now: number, key: string, opts?: { expiresInSeconds?: number; fileName?: string }) =>
  new UrlSigner(SECRET, 'https://api.example.com', () => now).sign(key, opts);

const expiresOf = (url: string) => new URL(url).searchParams.get('expires');

test('within one second the same URL comes back, equal to one signed anew', () => {
  let now = 1_700_000_000_100;
  const s = new UrlSigner(SECRET, 'https://api.example.com', () => now);
  const a = s.sign('generations/o/g/output.mp4', { fileName: 'out.mp4' });
  now += 800; // same second
  const b = s.sign('generations/o/g/output.mp4', { fileName: 'out.mp4' });
  assert.equal(b, a);
  assert.equal(b, fresh(now, 'generations/o/g/output.mp4', { fileName: 'out.mp4' }));
});

test('after the second has passed the URL is new: a later expiry, still valid and checked', () => {
  let now = 1_700_000_000_900;
  const s = new UrlSigner(SECRET, 'https://api.example.com', () => now);
  const first = s.sign('k/a.mp4', { expiresInSeconds: 60 });
  assert.equal(expiresOf(first), '1700000060');
  now += 200; // the next second
  const second = s.sign('k/a.mp4', { expiresInSeconds: 60 });
  assert.notEqual(second, first);
  assert.equal(expiresOf(second), '1700000061');
  assert.equal(second, fresh(now, 'k/a.mp4', { expiresInSeconds: 60 }));
  const u = new URL(second);
  const q = { expires: u.searchParams.get('expires')!, sig: u.searchParams.get('sig')! };
  assert.equal(s.check('k/a.mp4', q), 'valid');
  // The first URL expires at its own time, one second before the second one.
  now = 1_700_000_060_000;
  const u1 = new URL(first);
  assert.equal(
    s.check('k/a.mp4', { expires: u1.searchParams.get('expires')!, sig: u1.searchParams.get('sig')! }),
    'expired',
  );
  assert.equal(s.check('k/a.mp4', q), 'valid');
});

test('key, file name (none, empty, given) and validity each give their own URL', () => {
  const now = 1_700_000_000_000;
  const s = new UrlSigner(SECRET, 'https://api.example.com', () => now);
  const cases: [string, { expiresInSeconds?: number; fileName?: string } | undefined][] = [
    ['k/a.mp4', undefined],
    ['k/a.mp4', { fileName: '' }],
    ['k/a.mp4', { fileName: 'x.mp4' }],
    ['k/a.mp4', { fileName: 'x/y.mp4' }],
    ['k/a.mp4', { expiresInSeconds: 60 }],
    ['k/a.mp4', { expiresInSeconds: 60, fileName: 'x.mp4' }],
    ['k/b.mp4', undefined],
    // Would collide with a key/name separator that is not length-prefixed.
    ['k/a.mp4=x.mp4', undefined],
  ];
  const seen = new Set<string>();
  for (let round = 0; round < 2; round++) {
    for (const [key, opts] of cases) {
      const url = s.sign(key, opts);
      assert.equal(url, fresh(now, key, opts), `${key} ${JSON.stringify(opts)}`);
      if (round === 0) seen.add(url);
    }
  }
  assert.equal(seen.size, cases.length);
});

test('more distinct URLs in one second than are kept: every one is still right', () => {
  const now = 1_700_000_000_000;
  const s = new UrlSigner(SECRET, 'https://api.example.com', () => now);
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < 2500; i += 7) {
      assert.equal(s.sign(`k/${i}.mp4`), fresh(now, `k/${i}.mp4`));
    }
  }
});

test('a clock that goes back still gets the URL of its own second', () => {
  let now = 1_700_000_005_000;
  const s = new UrlSigner(SECRET, 'https://api.example.com', () => now);
  const later = s.sign('k/a.mp4');
  now -= 5_000;
  const earlier = s.sign('k/a.mp4');
  assert.notEqual(earlier, later);
  assert.equal(earlier, fresh(now, 'k/a.mp4'));
});
