// What `npm pack` puts in the package that `npm install -g` installs as the `lipsync` command: the
// entry and the compiled service, nothing of the checkout's sources, tests or data. (Installing the
// tarball fetches and compiles the dependencies, minutes: docs/cli.md says how; not run here.)
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { lipsyncBin, repoRoot } from '../helpers/paths.js';

const run = promisify(execFile);

test('npm pack holds bin/lipsync.js and dist/ (migrations included), not src/, test/ or data', async () => {
  lipsyncBin(); // dist/ is built from the current source
  // --ignore-scripts: the dry run lists the files as they are, without rebuilding dist/ (prepare).
  const { stdout } = await run('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: repoRoot,
    maxBuffer: 64 * 1024 * 1024,
  });
  const [pack] = JSON.parse(stdout) as [{ files: { path: string }[] }];
  const files = pack.files.map((f) => f.path);
  for (const needed of [
    'package.json',
    'README.md',
    'bin/lipsync.js',
    'dist/cli/index.js',
    'dist/main.js',
    'models/articulation-v1.onnx', // the shipped viseme model, used with no download
  ])
    assert.ok(files.includes(needed), `${needed} is packed`);
  assert.ok(
    files.some((f) => /^dist\/store\/migrations\/0001_\w+\.js$/.test(f)),
    'the migrations are packed',
  );
  const stray = files.filter(
    (f) => !/^(dist\/|bin\/lipsync\.js$|package\.json$|README\.md$|models\/articulation-v1\.onnx$)/.test(f),
  );
  assert.deepEqual(stray, [], 'nothing else: no src/, test/, docs/, data/ or .npmrc');

  const pkg = JSON.parse(await readFile(join(repoRoot, 'package.json'), 'utf8'));
  assert.deepEqual(pkg.bin, { lipsync: 'bin/lipsync.js' });
  const entry = await readFile(join(repoRoot, 'bin', 'lipsync.js'), 'utf8');
  assert.match(entry, /^#!\/usr\/bin\/env node\n/, 'runs as a command');
});
