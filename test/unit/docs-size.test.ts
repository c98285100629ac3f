// The documentation stays readable: README.md at most 16,000 bytes, docs/ at most 250,000 bytes in all
// (issue 30). A measurement log belongs in bench/results/, not in docs/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

function bytesUnder(dir: string): number {
  let total = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    total += entry.isDirectory() ? bytesUnder(p) : statSync(p).size;
  }
  return total;
}

test('README.md is at most 16,000 bytes', () => {
  const size = statSync(join(root, 'README.md')).size;
  assert.ok(size <= 16_000, `README.md is ${size} bytes`);
});

test('docs/ is at most 250,000 bytes in all', () => {
  const size = bytesUnder(join(root, 'docs'));
  assert.ok(size <= 250_000, `docs/ is ${size} bytes`);
});
