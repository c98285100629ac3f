#!/usr/bin/env node
// Runs one kind of tests with Node's built-in runner:
//   node scripts/run-tests.mjs <unit|integration|e2e|browser|all> [--label NAME] [--database-free |
//     --with-database] [filter...]
// Finds test/<kind>/**/*.test.ts (optionally only paths containing one of the filters) and runs them
// one file at a time with `node --import tsx --test`. Prints the spec report, then one line
// `<label>: N passed, N failed, N skipped`, and exits non-zero on any failure. With
// LIPSYNC_TEST_RESULTS=<file> it also appends the counts as one JSON line (scripts/test.sh sums them).
// TEST_DATABASE=postgres first checks that PostgreSQL answers and fails with a clear message if not.
// The default label names the database, and for e2e the storage too (TEST_STORAGE, local by default):
// `e2e (postgres, s3)`. --database-free runs only the files marked `// test-database: none`,
// --with-database only the others (scripts/test.sh runs the heavy database-free integration files
// beside the browser tests, and the rest on both databases side by side).
// End-to-end and browser tests, and the integration tests that run the CLI, run bin/lipsync.js, which runs dist/:
// when dist/ is missing or older than any file under src/ (or a build setting), it is rebuilt first,
// so they always run this checkout's code.
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { distState } from '../test/helpers/dist-state.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const KINDS = ['unit', 'integration', 'e2e', 'browser'];

function usage(message) {
  if (message) console.error(`run-tests: ${message}`);
  console.error(
    'usage: node scripts/run-tests.mjs <unit|integration|e2e|browser|all> [--label NAME] ' +
      '[--database-free | --with-database] [filter...]',
  );
  process.exit(2);
}

const args = process.argv.slice(2);
const kind = args.shift();
if (!kind || (kind !== 'all' && !KINDS.includes(kind))) usage(kind ? `unknown kind ${kind}` : undefined);
let label = kind;
const filters = [];
/** null: every file; true: only the database-free ones; false: only those that open a database. */
let databaseFree = null;
while (args.length > 0) {
  const a = args.shift();
  if (a === '--label') label = args.shift() ?? usage('--label needs a value');
  else if (a === '--database-free') databaseFree = true;
  else if (a === '--with-database') databaseFree = false;
  else filters.push(a);
}
const database = (process.env.TEST_DATABASE || 'sqlite').toLowerCase();
const storage = (process.env.TEST_STORAGE || 'local').toLowerCase();
if (databaseFree === true && label === kind) label = `${kind} (no database)`;
else if ((kind === 'e2e' || kind === 'browser') && label === kind)
  label = `${kind} (${database}, ${storage})`;
else if (kind !== 'unit' && label === kind) label = `${kind} (${database})`;

function findTests(dir) {
  if (!existsSync(dir)) return [];
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...findTests(p));
    else if (entry.isFile() && entry.name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

function record(counts) {
  const line = `${label}: ${counts.passed} passed, ${counts.failed} failed, ${counts.skipped} skipped`;
  console.log(`\n==> ${line} (${((Date.now() - started) / 1000).toFixed(1)} s)`);
  const file = process.env.LIPSYNC_TEST_RESULTS;
  if (file) appendFileSync(file, JSON.stringify({ label, ...counts }) + '\n');
}

async function postgresReachable() {
  const url =
    process.env.TEST_DATABASE_URL || process.env.DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
  const { default: pg } = await import('pg');
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 5000 });
  try {
    await client.connect();
    await client.query('select 1');
    return { ok: true, url };
  } catch (err) {
    return { ok: false, url, error: err instanceof Error ? err.message : String(err) };
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * A test file that never opens a database says so in its first lines (`// test-database: none`):
 * it runs once, on the SQLite pass, not again for PostgreSQL (the media and speech tests take minutes).
 */
function usesDatabase(file) {
  return !/^\/\/ test-database: none$/m.test(readFileSync(file, 'utf8').slice(0, 2000));
}

const started = Date.now();
const kinds = kind === 'all' ? KINDS : [kind];
const files = kinds
  .flatMap((k) => findTests(join(root, 'test', k)).sort())
  .filter((f) => filters.length === 0 || filters.some((flt) => relative(root, f).includes(flt)))
  .filter((f) => database !== 'postgres' || kind === 'unit' || usesDatabase(f))
  .filter((f) => databaseFree === null || databaseFree !== usesDatabase(f));

if (files.length === 0) {
  console.log(
    `run-tests: no test files for ${label}${filters.length ? ` matching ${filters.join(', ')}` : ''}`,
  );
  record({ passed: 0, failed: 0, skipped: 0 });
  process.exit(0);
}

if (database === 'postgres' && kind !== 'unit' && databaseFree !== true) {
  const pg = await postgresReachable();
  if (!pg.ok) {
    console.error(
      `\nrun-tests: PostgreSQL is not reachable at ${pg.url.replace(/\/\/[^@/]*@/, '//***@')}: ${pg.error}\n` +
        'Start PostgreSQL (or set TEST_DATABASE_URL), or set LIPSYNC_TEST_SKIP_POSTGRES=1 to skip the PostgreSQL runs.\n',
    );
    record({ passed: 0, failed: 1, skipped: 0 });
    process.exit(1);
  }
}

if (files.some((f) => !relative(root, f).startsWith(join('test', 'unit')))) {
  const state = distState(root);
  if (!state.fresh) {
    console.log(`run-tests: building dist/ first: ${state.reason}`);
    const build = spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
    const after = distState(root);
    if (build.status !== 0 || !after.fresh) {
      console.error(
        `\nrun-tests: the build failed (${build.status ?? build.signal}${after.fresh ? '' : `; ${after.reason}`}): ` +
          'the tests would run stale code.\n',
      );
      record({ passed: 0, failed: 1, skipped: 0 });
      process.exit(1);
    }
  }
}

const nodeArgs = [
  '--import',
  'tsx',
  '--test',
  '--test-concurrency=1',
  // A file whose tests are done but which left a handle open (a socket, a timer) must not hang the run.
  '--test-force-exit',
  `--test-timeout=${process.env.LIPSYNC_TEST_TIMEOUT_MS || 300000}`,
  '--test-reporter=spec',
  '--test-reporter-destination=stdout',
  ...files.map((f) => relative(root, f)),
];
console.log(`run-tests: ${label}: ${files.length} file(s)`);
// The report goes to our stdout as it comes; its tail holds the summary we count from. (A file
// reporter would lose its summary to --test-force-exit; stdout to a pipe is written synchronously.)
let tail = '';
const code = await new Promise((res) => {
  const child = spawn(process.execPath, nodeArgs, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (chunk) => {
    process.stdout.write(chunk);
    tail = (tail + chunk).slice(-200_000);
  });
  child.on('close', (c, signal) => res(c ?? (signal ? 1 : 0)));
});

// The spec reporter ends with `ℹ tests N`, `ℹ pass N`, `ℹ fail N`, `ℹ cancelled N`, `ℹ skipped N`, `ℹ todo N`.
// eslint-disable-next-line no-control-regex
const plain = tail.replace(/\u001b\[[0-9;]*m/g, '');
const count = (name) => {
  const all = [...plain.matchAll(new RegExp(`^ℹ ${name} (\\d+)\\s*$`, 'gm'))];
  return all.length ? Number(all[all.length - 1][1]) : null;
};
const counts = {
  passed: count('pass') ?? 0,
  failed: (count('fail') ?? 0) + (count('cancelled') ?? 0),
  skipped: (count('skipped') ?? 0) + (count('todo') ?? 0),
};
// A runner that died without a summary, or exited non-zero with no failing test, still fails.
if (count('tests') === null && counts.failed === 0) counts.failed = 1;
if (code !== 0 && counts.failed === 0) counts.failed = 1;
record(counts);
process.exit(code !== 0 || counts.failed > 0 ? 1 : 0);
