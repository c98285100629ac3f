// Bundles the studio (studio/src, TypeScript + Preact) into dist/studio: one minified app.js, its CSS
// and index.html. The server serves that folder (src/http/studio.ts). Type checking is done by tsc
// (studio/tsconfig.json) before this runs: esbuild only strips types.
import { build } from 'esbuild';
import { copyFile, mkdir, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const out = join(root, 'dist', 'studio');
await rm(out, { recursive: true, force: true });
await mkdir(out, { recursive: true });
await build({
  entryPoints: [join(root, 'studio', 'src', 'main.tsx')],
  bundle: true,
  minify: true,
  format: 'esm',
  target: ['chrome120', 'firefox120'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  outfile: join(out, 'app.js'),
  logLevel: 'warning',
  legalComments: 'none',
});
await copyFile(join(root, 'studio', 'src', 'app.css'), join(out, 'app.css'));
await copyFile(join(root, 'studio', 'index.html'), join(out, 'index.html'));
