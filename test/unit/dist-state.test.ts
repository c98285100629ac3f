// End-to-end tests must run the commit's own code: a dist/ older than any source file, source folder
// or build setting counts as stale (scripts/run-tests.mjs rebuilds it, lipsyncBin() refuses it).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { distState } from '../helpers/dist-state.mjs';

/** A project folder whose every file and folder has the given time (seconds since the epoch). */
async function project(at: number): Promise<string> {
  const root = await mkdtemp(join(tmpdir(), 'dist-state-'));
  await mkdir(join(root, 'src', 'cli'), { recursive: true });
  await mkdir(join(root, 'dist', 'cli'), { recursive: true });
  await mkdir(join(root, 'studio', 'src'), { recursive: true });
  await mkdir(join(root, 'dist', 'studio'), { recursive: true });
  const files = [
    'src/cli/index.ts',
    'src/config.ts',
    'tsconfig.json',
    'dist/cli/index.js',
    'studio/src/main.tsx',
    'dist/studio/app.js',
  ];
  for (const f of files) await writeFile(join(root, f), '');
  for (const p of [...files, 'src/cli', 'src', 'studio/src', 'studio']) await utimes(join(root, p), at, at);
  return root;
}

describe('dist/ freshness', () => {
  it('a build newer than every source is fresh; none at all is stale', async () => {
    const root = await project(1_000_000);
    try {
      await utimes(join(root, 'dist/cli/index.js'), 1_000_100, 1_000_100);
      assert.deepEqual(distState(root), { fresh: true });
      await rm(join(root, 'dist'), { recursive: true });
      const state = distState(root);
      assert.equal(state.fresh, false);
      assert.match(state.fresh ? '' : state.reason, /dist\/cli\/index\.js does not exist/);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('a source file touched after the build makes it stale, and names the file', async () => {
    const root = await project(1_000_000);
    try {
      await utimes(join(root, 'src/cli/index.ts'), 1_000_001, 1_000_001);
      assert.deepEqual(distState(root), {
        fresh: false,
        reason: `${join('src', 'cli', 'index.ts')} is newer than ${join('dist', 'cli', 'index.js')}`,
      });
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('a source file removed after the build, or a changed build setting, makes it stale', async () => {
    const root = await project(1_000_000);
    try {
      await rm(join(root, 'src/config.ts'));
      const removed = distState(root);
      assert.equal(removed.fresh, false);
      assert.match(removed.fresh ? '' : removed.reason, /^src is newer/);

      await utimes(join(root, 'src'), 1_000_000, 1_000_000);
      assert.deepEqual(distState(root), { fresh: true });
      await utimes(join(root, 'tsconfig.json'), 1_000_001, 1_000_001);
      const settings = distState(root);
      assert.match(settings.fresh ? '' : settings.reason, /^tsconfig\.json is newer/);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });

  it('the studio: a studio source newer than its bundle, or no bundle, is stale', async () => {
    const root = await project(1_000_000);
    try {
      await utimes(join(root, 'studio/src/main.tsx'), 1_000_001, 1_000_001);
      assert.deepEqual(distState(root), {
        fresh: false,
        reason: `${join('studio', 'src', 'main.tsx')} is newer than ${join('dist', 'studio', 'app.js')}`,
      });
      await rm(join(root, 'dist', 'studio'), { recursive: true });
      const state = distState(root);
      assert.match(state.fresh ? '' : state.reason, /dist\/studio\/app\.js does not exist/);
    } finally {
      await rm(root, { recursive: true, force: true });
    }
  });
});
