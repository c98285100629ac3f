// The folders of src/ import in one direction (docs/architecture.md): no two top-level folders (or
// top-level files such as main.ts) import each other, and no cycle runs through several. Reads
// every import of a relative path: `from '...'` (imports and re-exports), `import '...'` and
// `import('...')`.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { repoRoot } from '../helpers/paths.js';

const SRC = join(repoRoot, 'src');

/** from one top-level unit to another -> the files that import that way */
type Graph = Map<string, Map<string, string[]>>;

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)['"](\.{1,2}\/[^'"]+)['"]/g;

function relativeSpecifiers(source: string): string[] {
  return [...source.matchAll(IMPORT)].map((m) => m[1]!);
}

/** `main` for src/main.ts, `jobs` for src/jobs/queue.ts; null outside src/. */
function unitOf(path: string): string | null {
  const rel = relative(SRC, path);
  if (rel.startsWith('..')) return null;
  const [first] = rel.split(sep);
  return first!.replace(/\.(ts|js)$/, '');
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? tsFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

function importGraph(files: readonly { path: string; source: string }[]): Graph {
  const graph: Graph = new Map();
  for (const { path, source } of files) {
    const from = unitOf(path)!;
    for (const spec of relativeSpecifiers(source)) {
      const to = unitOf(resolve(dirname(path), spec));
      if (to === null || to === from) continue;
      const targets = graph.get(from) ?? new Map<string, string[]>();
      graph.set(from, targets);
      const importers = targets.get(to) ?? [];
      targets.set(to, importers);
      const file = relative(repoRoot, path);
      if (!importers.includes(file)) importers.push(file);
    }
  }
  return graph;
}

function mutualPairs(graph: Graph): [string, string][] {
  const pairs: [string, string][] = [];
  for (const [a, targets] of graph)
    for (const b of targets.keys()) if (a < b && graph.get(b)?.has(a)) pairs.push([a, b]);
  return pairs.sort();
}

/** One cycle of two or more units (as a path a -> ... -> a), or null when the graph has none. */
function findCycle(graph: Graph): string[] | null {
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (unit: string): string[] | null => {
    state.set(unit, 'open');
    path.push(unit);
    for (const next of [...(graph.get(unit)?.keys() ?? [])].sort()) {
      if (state.get(next) === 'open') return [...path.slice(path.indexOf(next)), next];
      if (!state.has(next)) {
        const found = visit(next);
        if (found) return found;
      }
    }
    path.pop();
    state.set(unit, 'done');
    return null;
  };
  for (const unit of [...graph.keys()].sort()) {
    if (state.has(unit)) continue;
    const found = visit(unit);
    if (found) return found;
  }
  return null;
}

function describeEdge(graph: Graph, a: string, b: string): string {
  return `  ${a} -> ${b}: ${graph.get(a)!.get(b)!.join(', ')}`;
}

describe('import direction of src/', () => {
  const graph = importGraph(tsFiles(SRC).map((path) => ({ path, source: readFileSync(path, 'utf8') })));

  test('no two top-level folders import each other', () => {
    const pairs = mutualPairs(graph);
    assert.deepEqual(
      pairs,
      [],
      'Folders that import each other:\n' +
        pairs.map(([a, b]) => `${describeEdge(graph, a, b)}\n${describeEdge(graph, b, a)}`).join('\n'),
    );
  });

  test('no cycle of any length runs through the folders', () => {
    const cycle = findCycle(graph);
    assert.equal(
      cycle,
      null,
      cycle
        ? `Import cycle ${cycle.join(' -> ')}:\n` +
            cycle
              .slice(1)
              .map((b, i) => describeEdge(graph, cycle[i]!, b))
              .join('\n')
        : '',
    );
  });

  test('the scanner sees every kind of relative import (so the checks above can fail)', () => {
    const source = [
      "import { a } from '../a/x.js';",
      "import type { B } from '../b/y.js';",
      "export { c } from '../c/z.js';",
      "import '../d/side-effect.js';",
      "const e = await import('../e/lazy.js');",
      "import { f } from 'node:fs';",
      "import { g } from './same-folder.js';",
    ].join('\n');
    const g = importGraph([
      { path: join(SRC, 'one', 'file.ts'), source },
      { path: join(SRC, 'a', 'x.ts'), source: "import { o } from '../one/file.js';" },
      { path: join(SRC, 'main.ts'), source: "import { c } from './c/z.js';" },
    ]);
    assert.deepEqual([...g.get('one')!.keys()].sort(), ['a', 'b', 'c', 'd', 'e']);
    assert.deepEqual(g.get('main')!.get('c'), [join('src', 'main.ts')]);
    assert.deepEqual(mutualPairs(g), [['a', 'one']]);
  });

  test('a cycle through three folders is found', () => {
    const g = importGraph([
      { path: join(SRC, 'p', 'x.ts'), source: "import { q } from '../q/x.js';" },
      { path: join(SRC, 'q', 'x.ts'), source: "import { r } from '../r/x.js';" },
      { path: join(SRC, 'r', 'x.ts'), source: "import type { P } from '../p/x.js';" },
    ]);
    assert.deepEqual(mutualPairs(g), []);
    assert.deepEqual(findCycle(g), ['p', 'q', 'r', 'p']);
  });
});
