// The temp folder (<data>/tmp) and what a killed process (kill -9, a crash) leaves there. Several
// processes may share it (an API and workers on one data folder), so each registers itself with a
// marker, <tmp>/.owners/<host>-<pid>, and runs its jobs in its own folder, <tmp>/<host>-<pid>/. At
// start a process removes the folders and markers of owners that are gone; loose entries (uploads in
// flight) go when no other owner is alive, else once older than the job timeout.
import { hostname } from 'node:os';
import { readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ensurePrivateDir, makeFilePrivate } from '../private-files.js';

export const OWNERS_DIR = '.owners';

function ownerName(): string {
  return `${hostname()}-${process.pid}`;
}

/** Where this process's jobs make their scratch folders. */
export function processScratchDir(tempDir: string): string {
  return join(tempDir, ownerName());
}

/** Whether the process `pid` of this machine is alive (EPERM: it is, under another user). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** A marker's owner is gone: a process of this machine that no longer runs. Other machines' count as alive. */
function gone(name: string, host: string): boolean {
  const cut = name.lastIndexOf('-');
  const pid = Number(name.slice(cut + 1));
  return cut > 0 && name.slice(0, cut) === host && Number.isInteger(pid) && pid > 0 && !alive(pid);
}

/**
 * Registers this process as an owner of `dir` and removes what processes that are gone left there;
 * returns how many entries went. Entries made since this process started are kept.
 */
export async function sweepScratch(
  dir: string,
  jobTimeoutMs: number,
  startedAtMs: number = performance.timeOrigin,
): Promise<number> {
  const owners = join(dir, OWNERS_DIR);
  await ensurePrivateDir(owners);
  const me = ownerName();
  const marker = join(owners, me);
  await writeFile(marker, `${new Date().toISOString()}\n`);
  await makeFilePrivate(marker);
  const host = hostname();
  const live = new Set([me]);
  let removed = 0;
  for (const name of await readdir(owners).catch(() => [] as string[])) {
    if (name === me) continue;
    if (!gone(name, host)) {
      live.add(name);
      continue;
    }
    await rm(join(dir, name), { recursive: true, force: true });
    await rm(join(owners, name), { force: true });
    removed++;
  }
  // A restarted container's process often has its predecessor's pid, and so its folder.
  removed += await removeOlder(join(dir, me), new Set(), startedAtMs);
  const cutoff = live.size > 1 ? Date.now() - jobTimeoutMs : startedAtMs;
  return removed + (await removeOlder(dir, new Set([OWNERS_DIR, ...live]), cutoff));
}

async function removeOlder(dir: string, keep: ReadonlySet<string>, cutoffMs: number): Promise<number> {
  let removed = 0;
  for (const name of await readdir(dir).catch(() => [] as string[])) {
    if (keep.has(name)) continue;
    const path = join(dir, name);
    const st = await stat(path).catch(() => null);
    if (st && st.mtimeMs < cutoffMs) {
      await rm(path, { recursive: true, force: true }).catch(() => undefined);
      removed++;
    }
  }
  return removed;
}
