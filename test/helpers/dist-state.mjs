// Whether dist/ was built from the source as it is now. scripts/run-tests.mjs rebuilds a stale dist/
// before end-to-end tests; the process helpers refuse to start a stale one (a test file run directly).
// Plain JavaScript so that run-tests.mjs can import it without tsx.
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

/** What the build reads besides src/. */
const BUILD_INPUTS = ['tsconfig.json', 'tsconfig.build.json', 'package.json'];

/** The entry bin/lipsync.js runs; tsc rewrites every output on each build, so its time is the build's. */
export const DIST_ENTRY = join('dist', 'cli', 'index.js');
export const STUDIO_ENTRY = join('dist', 'studio', 'app.js');

function newestUnder(dir, best) {
  // A folder's own time changes when a file in it is added, removed or renamed.
  const own = statSync(dir).mtimeMs;
  if (own > best.mtimeMs) best = { path: dir, mtimeMs: own };
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) best = newestUnder(p, best);
    else {
      const m = statSync(p).mtimeMs;
      if (m > best.mtimeMs) best = { path: p, mtimeMs: m };
    }
  }
  return best;
}

/**
 * `{ fresh: true }`, or `{ fresh: false, reason }` when dist/ is missing or older than a source file,
 * a source folder (a file removed) or a build setting.
 */
export function distState(root) {
  let built;
  try {
    built = statSync(join(root, DIST_ENTRY)).mtimeMs;
  } catch {
    return { fresh: false, reason: `${DIST_ENTRY} does not exist (the project is not built)` };
  }
  let newest = newestUnder(join(root, 'src'), { path: '', mtimeMs: -Infinity });
  for (const f of BUILD_INPUTS) {
    try {
      const m = statSync(join(root, f)).mtimeMs;
      if (m > newest.mtimeMs) newest = { path: join(root, f), mtimeMs: m };
    } catch {
      // not every project has every settings file
    }
  }
  if (newest.mtimeMs > built) {
    return { fresh: false, reason: `${relative(root, newest.path)} is newer than ${DIST_ENTRY}` };
  }
  // The studio's bundle (scripts/build-studio.mjs), built from studio/ by the same `npm run build`.
  let bundled;
  try {
    bundled = statSync(join(root, STUDIO_ENTRY)).mtimeMs;
  } catch {
    return { fresh: false, reason: `${STUDIO_ENTRY} does not exist (the studio is not built)` };
  }
  const studio = newestUnder(join(root, 'studio'), { path: '', mtimeMs: -Infinity });
  if (studio.mtimeMs > bundled) {
    return { fresh: false, reason: `${relative(root, studio.path)} is newer than ${STUDIO_ENTRY}` };
  }
  return { fresh: true };
}
