import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { LocalBlobStore } from '../../../src/storage/local-blob-store.js';
import { isValidBlobKey } from '../../../src/storage/blob-store.js';
import { UrlSigner } from '../../../src/storage/url-signer.js';
import { blobStoreContract, TestClock } from '../../helpers/blob-store-contract.js';

let dir: string;
let store: LocalBlobStore;
const clock = new TestClock();

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lipsync-blobs-'));
  store = new LocalBlobStore(
    dir,
    new UrlSigner('unit-test-secret-0123456789abcdef0123', 'http://h:1', clock.now),
  );
  await store.init();
});
after(() => rm(dir, { recursive: true, force: true }));

blobStoreContract('local', () => ({ store, clock }));

test('keys: relative paths of safe segments only', () => {
  for (const k of ['a', 'assets/o1/a-b_c.mp4', 'x/y/z.tar.gz']) assert.ok(isValidBlobKey(k), k);
  for (const k of [
    '',
    '/abs',
    'a/../b',
    '..',
    'a//b',
    'a/',
    '.tmp/x',
    'a/.meta',
    'a b',
    'a\\b',
    'é',
    'a?b',
    'x'.repeat(513),
  ]) {
    assert.ok(!isValidBlobKey(k), k);
  }
});

test('blobs are files under <data>/blobs; localPath points at them', async () => {
  await store.put('t/one.bin', Readable.from([Buffer.from('one')]), { contentType: 'video/mp4' });
  assert.equal(await store.localPath('t/one.bin'), join(dir, 'blobs', 't', 'one.bin'));
  assert.equal((await stat(join(dir, 'blobs', 't', 'one.bin'))).size, 3);
});

test('a failing source leaves no temp file behind', async () => {
  async function* failing() {
    yield Buffer.alloc(1000);
    throw new Error('source broke');
  }
  await assert.rejects(
    store.put('t/broken', Readable.from(failing()), { contentType: 'a/b' }),
    /source broke/,
  );
  assert.deepEqual(await readdir(join(dir, 'blobs', '.tmp')), []);
});

test('init removes temp files an hour old, never younger ones', async () => {
  const tmp = join(dir, 'blobs', '.tmp');
  await writeFile(join(tmp, 'old'), 'x');
  await writeFile(join(tmp, 'young'), 'x');
  const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
  await utimes(join(tmp, 'old'), twoHoursAgo, twoHoursAgo);
  await store.init();
  assert.deepEqual(await readdir(tmp), ['young']);
  await rm(join(tmp, 'young'));
});

test('signedUrl is an absolute URL under /v2/files/', async () => {
  const url = await store.signedUrl('t/moved.txt', { fileName: 'Hello world.txt' });
  assert.match(
    url,
    /^http:\/\/h:1\/v2\/files\/t\/moved\.txt\?expires=\d+&sig=[0-9a-f]{64}&name=Hello\+world\.txt$/,
  );
});
