// The behaviour every BlobStore shares, run against each store (local disk, S3): callers rely on it
// whichever store the configuration picks.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { BlobNotFoundError, InvalidBlobKeyError, type BlobStore } from '../../src/storage/blob-store.js';

/** A clock the store under test reads (signed URL times), so validity can be tested without waiting. */
export class TestClock {
  offsetMs = 0;
  readonly now = (): number => Date.now() + this.offsetMs;
}

export interface ContractSubject {
  readonly store: BlobStore;
  /** The clock the store was built with. */
  readonly clock: TestClock;
}

export async function readAll(s: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of s) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

function body(text: string): Readable {
  return Readable.from([Buffer.from(text)]);
}

/**
 * Registers the contract's tests. `subject` is called inside each test, so it may be filled in by a
 * `before` hook. Keys live under `contract/`.
 */
export function blobStoreContract(name: string, subject: () => ContractSubject): void {
  describe(`BlobStore contract: ${name}`, () => {
    test('put streams, stat, exists, open with and without a range, delete', async () => {
      const { store } = subject();
      async function* gen() {
        for (let i = 0; i < 100; i++) yield Buffer.alloc(1000, i);
      }
      const st = await store.put('contract/one.bin', Readable.from(gen()), { contentType: 'video/mp4' });
      assert.equal(st.size, 100_000);
      assert.equal(st.contentType, 'video/mp4');
      const again = await store.stat('contract/one.bin');
      assert.deepEqual(again && { size: again.size, type: again.contentType }, {
        size: 100_000,
        type: 'video/mp4',
      });
      assert.ok(again && Math.abs(again.lastModified.getTime() - Date.now()) < 60_000);
      assert.equal(await store.exists('contract/one.bin'), true);
      const all = await readAll(await store.open('contract/one.bin'));
      assert.equal(all.length, 100_000);
      assert.equal(all[99_999], 99);
      const part = await readAll(await store.open('contract/one.bin', { start: 1999, end: 2001 }));
      assert.deepEqual([...part], [1, 2, 2]);
      const last = await readAll(await store.open('contract/one.bin', { start: 99_998, end: 99_999 }));
      assert.deepEqual([...last], [99, 99]);
      await store.delete('contract/one.bin');
      assert.equal(await store.stat('contract/one.bin'), null);
      assert.equal(await store.exists('contract/one.bin'), false);
      await store.delete('contract/one.bin'); // idempotent
      await assert.rejects(store.open('contract/one.bin'), BlobNotFoundError);
    });

    test('keys are checked before anything is stored or read', async () => {
      const { store } = subject();
      await assert.rejects(store.put('../x', body('x'), { contentType: 'a/b' }), InvalidBlobKeyError);
      await assert.rejects(store.open('a//b'), InvalidBlobKeyError);
      await assert.rejects(store.stat('/abs'), InvalidBlobKeyError);
      await assert.rejects(store.delete('.meta/x'), InvalidBlobKeyError);
      await assert.rejects(store.signedUrl('a b'), InvalidBlobKeyError);
      await assert.rejects(store.list('../'), InvalidBlobKeyError);
    });

    test('an empty blob, and a content type left empty', async () => {
      const { store } = subject();
      const st = await store.put('contract/empty', Readable.from([]), { contentType: '' });
      assert.equal(st.size, 0);
      assert.equal(st.contentType, 'application/octet-stream');
      assert.equal((await readAll(await store.open('contract/empty'))).length, 0);
    });

    test('put replaces the blob and its content type', async () => {
      const { store } = subject();
      await store.put('contract/replace.txt', body('first version'), { contentType: 'text/plain' });
      await store.put('contract/replace.txt', body('second'), { contentType: 'application/json' });
      assert.equal((await readAll(await store.open('contract/replace.txt'))).toString(), 'second');
      const st = await store.stat('contract/replace.txt');
      assert.equal(st?.size, 6);
      assert.equal(st?.contentType, 'application/json');
    });

    test('a failing source stores nothing and leaves the previous blob as it was', async () => {
      const { store } = subject();
      async function* failing() {
        yield Buffer.alloc(1000);
        throw new Error('source broke');
      }
      await assert.rejects(
        store.put('contract/broken', Readable.from(failing()), { contentType: 'a/b' }),
        /source broke/,
      );
      assert.equal(await store.exists('contract/broken'), false);
      await store.put('contract/kept.txt', body('kept'), { contentType: 'text/plain' });
      await assert.rejects(
        store.put('contract/kept.txt', Readable.from(failing()), { contentType: 'a/b' }),
        /source broke/,
      );
      assert.equal((await readAll(await store.open('contract/kept.txt'))).toString(), 'kept');
      assert.equal((await store.stat('contract/kept.txt'))?.contentType, 'text/plain');
    });

    test('putFile copies a file, or moves it with move', async () => {
      const { store } = subject();
      const dir = await mkdtemp(join(tmpdir(), 'lipsync-contract-'));
      try {
        const src = join(dir, 'upload.tmp');
        await writeFile(src, 'hello');
        const st = await store.putFile('contract/moved.txt', src, { contentType: 'text/plain', move: true });
        assert.equal(st.size, 5);
        await assert.rejects(readFile(src), { code: 'ENOENT' });
        assert.equal((await readAll(await store.open('contract/moved.txt'))).toString(), 'hello');
        await writeFile(src, 'copy');
        await store.putFile('contract/copied.txt', src, { contentType: 'text/plain' });
        assert.equal(await readFile(src, 'utf8'), 'copy');
        assert.equal((await store.stat('contract/copied.txt'))?.size, 4);
        await assert.rejects(
          store.putFile('contract/none.txt', join(dir, 'missing'), { contentType: 'text/plain' }),
          { code: 'ENOENT' },
        );
        assert.equal(await store.exists('contract/none.txt'), false);
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    test('download writes the blob to a file; a missing blob writes nothing', async () => {
      const { store } = subject();
      const dir = await mkdtemp(join(tmpdir(), 'lipsync-contract-'));
      try {
        await store.put('contract/dl.bin', body('downloaded bytes'), { contentType: 'a/b' });
        const path = join(dir, 'dl.bin');
        await store.download('contract/dl.bin', path);
        assert.equal(await readFile(path, 'utf8'), 'downloaded bytes');
        assert.equal((await stat(path)).mode & 0o077, 0, 'the copy is private to the service');
        const missing = join(dir, 'missing.bin');
        await assert.rejects(store.download('contract/nothing-here', missing), BlobNotFoundError);
        await assert.rejects(stat(missing), { code: 'ENOENT' });
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    test('list: the keys under a folder-like prefix, sorted', async () => {
      const { store } = subject();
      const keys = ['contract/list/b.txt', 'contract/list/a.txt', 'contract/list/sub/c.txt'];
      for (const k of [...keys, 'contract/listing.txt', 'contract/listx/d.txt']) {
        await store.put(k, body(k), { contentType: 'text/plain' });
      }
      const expected = [...keys].sort();
      assert.deepEqual(await store.list('contract/list/'), expected);
      assert.deepEqual(
        await store.list('contract/list'),
        expected,
        'a prefix is a folder, with or without /',
      );
      assert.deepEqual(await store.list('contract/list/sub/'), ['contract/list/sub/c.txt']);
      assert.deepEqual(await store.list('contract/nothing/'), []);
      const everything = await store.list('');
      for (const k of [...keys, 'contract/listing.txt']) assert.ok(everything.includes(k), k);
      for (const k of keys) await store.delete(k);
      assert.deepEqual(await store.list('contract/list/'), []);
    });

    test('signed URLs: our own are recognised and checked, others are foreign', async () => {
      const { store, clock } = subject();
      await store.put('contract/signed.txt', body('signed'), { contentType: 'text/plain' });
      const plain = await store.signedUrl('contract/signed.txt');
      assert.match(plain, /^https?:\/\//);
      assert.deepEqual(store.keyFromUrl(plain), { status: 'valid', key: 'contract/signed.txt' });
      const named = await store.signedUrl('contract/signed.txt', { fileName: 'Résumé "final".txt' });
      assert.deepEqual(store.keyFromUrl(named), { status: 'valid', key: 'contract/signed.txt' });

      // Any change to the key, the validity, the download name or the signature breaks it.
      const otherKey = plain.replace('contract/signed.txt', 'contract/signex.txt');
      assert.deepEqual(store.keyFromUrl(otherKey), { status: 'invalid', key: 'contract/signex.txt' });
      const u = new URL(named);
      for (const [param, value] of [...u.searchParams]) {
        const changed = new URL(named);
        changed.searchParams.set(param, /^\d+$/.test(value) ? String(Number(value) + 1) : `${value}x`);
        assert.equal(store.keyFromUrl(changed.toString()).status, 'invalid', `changed ${param}`);
        const dropped = new URL(named);
        dropped.searchParams.delete(param);
        assert.equal(store.keyFromUrl(dropped.toString()).status, 'invalid', `dropped ${param}`);
      }
      assert.equal(store.keyFromUrl(`${u.origin}${u.pathname}`).status, 'invalid', 'unsigned');

      for (const foreign of [
        'https://example.com/contract/signed.txt',
        'https://example.com/v2/files/contract/signed.txt?expires=1&sig=00',
        'not a url',
        '',
      ]) {
        assert.deepEqual(store.keyFromUrl(foreign), { status: 'foreign' }, foreign);
      }

      // Validity: 'expired' once past it, for a genuine URL only.
      const short = await store.signedUrl('contract/signed.txt', { expiresInSeconds: 60 });
      try {
        clock.offsetMs = 50_000;
        assert.equal(store.keyFromUrl(short).status, 'valid');
        clock.offsetMs = 61_000;
        assert.deepEqual(store.keyFromUrl(short), { status: 'expired', key: 'contract/signed.txt' });
        assert.equal(store.keyFromUrl(short.replace(/.$/, (c) => (c === '0' ? '1' : '0'))).status, 'invalid');
        clock.offsetMs = -3600_000; // signed an hour ago with a minute's validity
        const old = await store.signedUrl('contract/signed.txt', { expiresInSeconds: 60 });
        clock.offsetMs = 0;
        assert.equal(store.keyFromUrl(old).status, 'expired');
      } finally {
        clock.offsetMs = 0;
      }
      await assert.rejects(store.signedUrl('contract/signed.txt', { expiresInSeconds: 0 }));
      await assert.rejects(store.signedUrl('contract/signed.txt', { expiresInSeconds: -5 }));
    });
  });
}
