// Where things are: the repository root, the built command and the shared fixtures.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** The `lipsync` command as users run it (needs `npm run build`). */
export const binPath = join(repoRoot, 'bin', 'lipsync.js');

/** The shared media and model fixtures: LIPSYNC_FIXTURES_DIR or `<repo>/../shared/fixtures`. */
export function fixturesDir(): string {
  const given = process.env.LIPSYNC_FIXTURES_DIR;
  return given && given !== '' ? resolve(given) : resolve(repoRoot, '..', 'shared', 'fixtures');
}

/** A file under the fixtures folder, e.g. `fixture('media/face_1.mp4')`. */
export function fixture(relativePath: string): string {
  return join(fixturesDir(), relativePath);
}
