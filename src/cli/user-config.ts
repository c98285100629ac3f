// The user's saved connection of the client commands, written by `lipsync login` and removed by
// `lipsync logout`: $XDG_CONFIG_HOME/lipsync/config.json (else ~/.config/lipsync/config.json), a 0600
// file in a 0700 folder because it holds an API key. Flags and environment variables come first.
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { rename, rm, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import { ensurePrivateDir, makeFilePrivate, PRIVATE_FILE_MODE } from '../private-files.js';
import { ClientError } from './client-error.js';

export interface SavedLogin {
  readonly server: string;
  readonly key: string;
}

/** Where `lipsync login` saves the server and key. A relative XDG_CONFIG_HOME is ignored, as the XDG spec says. */
export function userConfigPath(env: NodeJS.ProcessEnv = process.env): string {
  const xdg = env.XDG_CONFIG_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : join(homedir(), '.config');
  return join(base, 'lipsync', 'config.json');
}

/** The saved login, or null when there is none. A file that is not what login writes is an error naming it. */
export function readSavedLogin(path = userConfigPath()): SavedLogin | null {
  let raw: string;
  try {
    raw = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new ClientError(`cannot read ${path}: ${(err as Error).message}`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    parsed = null;
  }
  const o = parsed as Partial<SavedLogin> | null;
  if (!o || typeof o !== 'object' || typeof o.server !== 'string' || typeof o.key !== 'string')
    throw new ClientError(
      `${path} is not a saved login (run \`lipsync logout\` to remove it, then \`lipsync login\`)`,
    );
  return { server: o.server, key: o.key };
}

/** Saves the login: written to a private temporary file first, then renamed, so no reader sees half of it. */
export async function saveLogin(login: SavedLogin, path = userConfigPath()): Promise<void> {
  await ensurePrivateDir(dirname(path), { tighten: true });
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, JSON.stringify(login, null, 2) + '\n', { mode: PRIVATE_FILE_MODE, flag: 'wx' });
    await makeFilePrivate(tmp);
    await rename(tmp, path);
  } catch (err) {
    await rm(tmp, { force: true });
    throw new ClientError(`cannot write ${path}: ${(err as Error).message}`);
  }
}

/** Removes the saved login; false when there was none. */
export async function removeSavedLogin(path = userConfigPath()): Promise<boolean> {
  try {
    await rm(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw new ClientError(`cannot remove ${path}: ${(err as Error).message}`);
  }
}
