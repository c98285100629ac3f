import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { withTempDir } from '../../src/media/tempdir.js';

describe('withTempDir', () => {
  let root: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'media-tempdir-test-'));
  });
  after(async () => {
    await rm(root, { recursive: true, force: true });
  });

  it('gives a private directory and removes it with its contents', async () => {
    let seen = '';
    const result = await withTempDir(
      'job',
      async (dir) => {
        seen = dir;
        assert.equal((await stat(dir)).mode & 0o777, 0o700);
        await writeFile(join(dir, 'a.bin'), 'x');
        return 42;
      },
      { root },
    );
    assert.equal(result, 42);
    assert.match(seen, /\/job-[A-Za-z0-9]{6}$/);
    assert.deepEqual(await readdir(root), []);
  });

  it('removes the directory when the work fails or is aborted', async () => {
    await assert.rejects(
      withTempDir(
        'fails',
        async (dir) => {
          await writeFile(join(dir, 'partial'), 'x');
          throw new Error('boom');
        },
        { root },
      ),
      /boom/,
    );
    const ctl = new AbortController();
    await assert.rejects(
      withTempDir(
        'aborts',
        async (dir) => {
          await writeFile(join(dir, 'partial'), 'x');
          ctl.abort();
          ctl.signal.throwIfAborted();
        },
        { root, signal: ctl.signal },
      ),
      { name: 'AbortError' },
    );
    assert.deepEqual(await readdir(root), []);
  });

  it('does not start when already aborted and refuses path-like prefixes', async () => {
    let ran = false;
    await assert.rejects(
      withTempDir('x', async () => (ran = true), { root, signal: AbortSignal.abort() }),
      { name: 'AbortError' },
    );
    assert.equal(ran, false);
    await assert.rejects(
      withTempDir('../escape', async () => 1, { root }),
      /prefix/,
    );
    assert.deepEqual(await readdir(root), []);
  });
});
