import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { LocalBlobStore } from '../../../src/storage/local-blob-store.js';
import { BlobNotFoundError, InvalidBlobKeyError, isValidBlobKey } from '../../../src/storage/blob-store.js';
import { UrlSigner } from '../../../src/storage/url-signer.js';

let dir: string;
let store: LocalBlobStore;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lipsync-blobs-'));
  store = new LocalBlobStore(dir, new UrlSigner('unit-test-secret-0123456789abcdef0123', 'http://h:1'));
  await store.init();
});
after(() => rm(dir, { recursive: true, force: true }));

async function read(s: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of s) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

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

test('put streams, stat, exists, open with and without a range, delete', async () => {
  async function* gen() {
    for (let i = 0; i < 100; i++) yield Buffer.alloc(1000, i);
  }
  const st = await store.put('t/one.bin', Readable.from(gen()), { contentType: 'video/mp4' });
  assert.equal(st.size, 100_000);
  assert.deepEqual(await store.stat('t/one.bin').then((s) => s && { size: s.size, type: s.contentType }), {
    size: 100_000,
    type: 'video/mp4',
  });
  assert.equal(await store.exists('t/one.bin'), true);
  const all = await read(await store.open('t/one.bin'));
  assert.equal(all.length, 100_000);
  const part = await read(await store.open('t/one.bin', { start: 1999, end: 2001 }));
  assert.deepEqual([...part], [1, 2, 2]);
  assert.equal(await store.localPath('t/one.bin'), join(dir, 'blobs', 't', 'one.bin'));
  await store.delete('t/one.bin');
  assert.equal(await store.stat('t/one.bin'), null);
  await store.delete('t/one.bin'); // idempotent
  await assert.rejects(store.open('t/one.bin'), BlobNotFoundError);
  await assert.rejects(
    store.put('../x', Readable.from([Buffer.from('x')]), { contentType: 'a/b' }),
    InvalidBlobKeyError,
  );
});

test('a failing source leaves neither a blob nor a temp file', async () => {
  async function* failing() {
    yield Buffer.alloc(1000);
    throw new Error('source broke');
  }
  await assert.rejects(
    store.put('t/broken', Readable.from(failing()), { contentType: 'a/b' }),
    /source broke/,
  );
  assert.equal(await store.exists('t/broken'), false);
  assert.deepEqual(await readdir(join(dir, 'blobs', '.tmp')), []);
});

test('putFile moves a file into place', async () => {
  const src = join(dir, 'upload.tmp');
  await writeFile(src, 'hello');
  await store.putFile('t/moved.txt', src, { contentType: 'text/plain', move: true });
  await assert.rejects(readFile(src), { code: 'ENOENT' });
  assert.equal((await read(await store.open('t/moved.txt'))).toString(), 'hello');
  await writeFile(src, 'copy');
  await store.putFile('t/copied.txt', src, { contentType: 'text/plain' });
  assert.equal(await readFile(src, 'utf8'), 'copy');
  assert.equal((await store.stat('t/copied.txt'))?.size, 4);
});

test('signedUrl is an absolute URL under /v2/files/', async () => {
  const url = await store.signedUrl('t/moved.txt', { fileName: 'Hello world.txt' });
  assert.match(
    url,
    /^http:\/\/h:1\/v2\/files\/t\/moved\.txt\?expires=\d+&sig=[0-9a-f]{64}&name=Hello\+world\.txt$/,
  );
});
