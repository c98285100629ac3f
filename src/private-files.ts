// Files and folders of the data folder are private to the service's user: folders 0700, files 0600,
// whatever the process umask. A mode given to mkdir or open is only an upper bound (the umask takes
// bits away, and a strict umask such as 0277 would even make a folder unusable), so every folder and
// file we create is also chmod-ed to the exact mode.
import { chmodSync, closeSync, mkdirSync, openSync } from 'node:fs';
import { chmod, mkdir } from 'node:fs/promises';
import { dirname, relative, resolve, sep } from 'node:path';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_FILE_MODE = 0o600;

/** The folders from `first` (the first one mkdir created) down to `dir`, top first. */
function createdChain(first: string | undefined, dir: string): string[] {
  if (first === undefined) return [];
  const top = resolve(first);
  const out = [top];
  const rest = relative(top, resolve(dir));
  if (rest === '') return out;
  let p = top;
  for (const part of rest.split(sep)) {
    p = resolve(p, part);
    out.push(p);
  }
  return out;
}

/**
 * Creates `dir` (and missing parents) as private folders. With `tighten`, an existing `dir` is made
 * private too (the data folder of an older install); a folder we do not own is left as it is.
 */
export async function ensurePrivateDir(dir: string, opts: { tighten?: boolean } = {}): Promise<void> {
  const first = await mkdir(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const created = createdChain(first, dir);
  for (const p of created) await chmod(p, PRIVATE_DIR_MODE);
  if (opts.tighten && created.length === 0) await chmod(dir, PRIVATE_DIR_MODE).catch(ignoreNotOwner);
}

export function ensurePrivateDirSync(dir: string, opts: { tighten?: boolean } = {}): void {
  const first = mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  const created = createdChain(first, dir);
  for (const p of created) chmodSync(p, PRIVATE_DIR_MODE);
  if (opts.tighten && created.length === 0) {
    try {
      chmodSync(dir, PRIVATE_DIR_MODE);
    } catch (err) {
      ignoreNotOwner(err);
    }
  }
}

/** Creates `file` empty when missing, and makes it (new or old) readable by its owner only. */
export function ensurePrivateFileSync(file: string): void {
  ensurePrivateDirSync(dirname(file));
  closeSync(openSync(file, 'a', PRIVATE_FILE_MODE));
  tightenFileSync(file);
}

export function tightenFileSync(file: string): void {
  try {
    chmodSync(file, PRIVATE_FILE_MODE);
  } catch (err) {
    ignoreNotOwner(err);
  }
}

/** Sets a file we wrote to exactly 0600. */
export async function makeFilePrivate(file: string): Promise<void> {
  await chmod(file, PRIVATE_FILE_MODE);
}

/** Makes an existing file 0600 when we own it (one an operator provisioned is left as it is; a missing one is no error). */
export async function tightenFile(file: string): Promise<void> {
  await chmod(file, PRIVATE_FILE_MODE).catch(ignoreNotOwner);
}

/** Not ours to change (or already gone): leave it. */
function ignoreNotOwner(err: unknown): void {
  const code = (err as NodeJS.ErrnoException).code;
  if (code !== 'EPERM' && code !== 'EACCES' && code !== 'ENOENT') throw err;
}
