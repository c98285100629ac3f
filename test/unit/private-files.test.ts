// Folders 0700 and files 0600 whatever the umask.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, statSync, writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ensurePrivateDir,
  ensurePrivateDirSync,
  ensurePrivateFileSync,
  tightenFile,
  tightenFileSync,
} from '../../src/private-files.js';

const mode = (p: string) => statSync(p).mode & 0o777;

describe('private files and folders', () => {
  let root: string;
  let umask: number;

  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'lipsync-private-'));
    umask = process.umask(0o000); // the most permissive umask: modes must not depend on it
  });
  after(async () => {
    process.umask(umask);
    await rm(root, { recursive: true, force: true });
  });

  test('every folder created on the way is 0700', async () => {
    const deep = join(root, 'a', 'b', 'c');
    await ensurePrivateDir(deep);
    for (const p of [join(root, 'a'), join(root, 'a', 'b'), deep]) assert.equal(mode(p), 0o700, p);
    ensurePrivateDirSync(join(root, 's', 't'));
    assert.equal(mode(join(root, 's')), 0o700);
    assert.equal(mode(join(root, 's', 't')), 0o700);
  });

  test('a strict umask does not make the folder unusable', async () => {
    const old = process.umask(0o277);
    try {
      await ensurePrivateDir(join(root, 'strict', 'inner'));
    } finally {
      process.umask(old);
    }
    assert.equal(mode(join(root, 'strict')), 0o700);
    assert.equal(mode(join(root, 'strict', 'inner')), 0o700);
  });

  test('an existing folder is left alone unless asked to tighten it', async () => {
    const open = join(root, 'open');
    mkdirSync(open, { mode: 0o755 });
    await ensurePrivateDir(open);
    assert.equal(mode(open), 0o755);
    await ensurePrivateDir(open, { tighten: true });
    assert.equal(mode(open), 0o700);
    const open2 = join(root, 'open2');
    mkdirSync(open2, { mode: 0o777 });
    ensurePrivateDirSync(open2, { tighten: true });
    assert.equal(mode(open2), 0o700);
  });

  test('files are created 0600, and existing ones are tightened', async () => {
    const f = join(root, 'new', 'db.sqlite');
    ensurePrivateFileSync(f);
    assert.equal(mode(f), 0o600);
    assert.equal(mode(join(root, 'new')), 0o700);
    const old = join(root, 'old.txt');
    writeFileSync(old, 'x', { mode: 0o644 });
    ensurePrivateFileSync(old);
    assert.equal(mode(old), 0o600);
    chmodSync(old, 0o666);
    await tightenFile(old);
    assert.equal(mode(old), 0o600);
    // A file that is not there is no error.
    await tightenFile(join(root, 'missing'));
    tightenFileSync(join(root, 'missing'));
  });
});
