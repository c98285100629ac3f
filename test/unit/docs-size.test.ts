// The documentation stays readable: README.md at most 16,000 bytes, docs/ at most 275,000 bytes of text
// in all (issue 30). A measurement log belongs in bench/results/, not in docs/. The studio's screenshots
// (docs/images) are not text to read: they have their own cap, so the repository stays small.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

const IMAGE = /\.(png|jpe?g|webp)$/i;

function bytesUnder(dir: string, counts: (name: string) => boolean): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    total += entry.isDirectory() ? bytesUnder(p, counts) : counts(entry.name) ? statSync(p).size : 0;
  }
  return total;
}

test('README.md is at most 16,000 bytes', () => {
  const size = statSync(join(root, 'README.md')).size;
  assert.ok(size <= 16_000, `README.md is ${size} bytes`);
});

test('docs/ is at most 275,000 bytes of text in all', () => {
  const size = bytesUnder(join(root, 'docs'), (name) => !IMAGE.test(name));
  assert.ok(size <= 275_000, `docs/ is ${size} bytes of text`);
});

test('the images in docs/ are at most 600,000 bytes in all', () => {
  const size = bytesUnder(join(root, 'docs'), (name) => IMAGE.test(name));
  assert.ok(size <= 600_000, `docs/ images are ${size} bytes`);
});
