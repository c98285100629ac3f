// Where things are: the repository root, the built command and the shared fixtures; and the plain
// failure a test gets when ffmpeg or a fixture is missing (a failure, not a skip: a machine without
// them must not pass the suite).
import { accessSync, constants, existsSync } from 'node:fs';
import { delimiter, dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { distState } from './dist-state.mjs';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The `lipsync` command as users run it: it runs dist/. Tests start it through lipsyncBin(). */
const binPath = join(repoRoot, 'bin', 'lipsync.js');

/** The shared media and model fixtures: LIPSYNC_FIXTURES_DIR or `<repo>/../shared/fixtures`. */
export function fixturesDir(): string {
  const given = process.env.LIPSYNC_FIXTURES_DIR;
  return given && given !== '' ? resolve(given) : resolve(repoRoot, '..', 'shared', 'fixtures');
}

/** Thrown when something a test needs is not on this machine; its message says how to get it. */
export class MissingTestDependency extends Error {
  override name = 'MissingTestDependency';
}

function onPath(command: string, path: string): boolean {
  return path
    .split(delimiter)
    .filter((d) => d !== '')
    .some((d) => {
      try {
        accessSync(join(d, command), constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
}

/** Fails unless ffmpeg and ffprobe are on PATH (the media code runs them by name). */
export function requireFfmpeg(path: string = process.env.PATH ?? ''): void {
  for (const command of ['ffmpeg', 'ffprobe']) {
    if (!onPath(command, path)) {
      throw new MissingTestDependency(
        `${command} is not installed (not on PATH): run scripts/install-system-packages.sh`,
      );
    }
  }
}

/** Fails unless the fixtures folder holds the given file (or folder). Returns its path. */
export function requireFixture(relativePath: string, dir: string = fixturesDir()): string {
  const hint = 'set LIPSYNC_FIXTURES_DIR to the fixtures folder (default ../shared/fixtures)';
  if (!existsSync(dir)) throw new MissingTestDependency(`the fixtures folder ${dir} does not exist: ${hint}`);
  const path = join(dir, relativePath);
  if (!existsSync(path))
    throw new MissingTestDependency(`fixture ${relativePath} not found in ${dir}: ${hint}`);
  return path;
}

/**
 * A file under the fixtures folder, e.g. `fixture('media/face_1.mp4')`. Fails plainly when it is
 * missing, and for media, when ffmpeg is (every test that reads a media fixture decodes or probes it).
 */
export function fixture(relativePath: string): string {
  const path = requireFixture(relativePath);
  if (relativePath.startsWith('media/')) requireFfmpeg();
  return path;
}

/**
 * bin/lipsync.js, once dist/ is known to be built from the source as it is now: a test must never run
 * an older build than the commit it tests. scripts/run-tests.mjs rebuilds a stale dist/ before e2e.
 */
export function lipsyncBin(): string {
  const state = distState(repoRoot);
  if (!state.fresh) {
    throw new MissingTestDependency(
      `dist/ is not built from the current source (${state.reason}): run \`npm run build\`, ` +
        'or run the tests through scripts/run-tests.mjs, which rebuilds it',
    );
  }
  return binPath;
}
