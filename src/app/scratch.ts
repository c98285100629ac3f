// The temp folder (<data>/tmp) and what a killed process (kill -9, a crash) leaves there. Several
// processes may share it (an API and workers on one data folder, containers on one volume), so each
// registers itself with a marker, <tmp>/.owners/<host>-<pid>-<nonce>, and runs its jobs in its own
// folder, <tmp>/<host>-<pid>-<nonce>/. The nonce is new at every start: a recreated container may get
// its predecessor's hostname and pid 1, and two containers may share both. A live process touches its
// marker every MARKER_REFRESH_MS; at start a process removes the folders and markers of owners that
// are gone (a dead pid of this host, or a marker not touched for long), and loose entries (uploads in
// flight, files of operator commands) older than the job timeout.
import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import { readdir, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ensurePrivateDir, makeFilePrivate } from '../private-files.js';

export const OWNERS_DIR = '.owners';
/** How often a live process touches its marker. */
export const MARKER_REFRESH_MS = 60_000;
/** A marker untouched for this many refresh periods (and the job timeout) is a gone owner's. */
const STALE_REFRESHES = 5;

const OWNER_NAME = `${hostname()}-${process.pid}-${randomBytes(6).toString('hex')}`;

/** This process's owner name: its marker's and its scratch folder's name. */
export function scratchOwnerName(): string {
  return OWNER_NAME;
}

/** Where this process's jobs make their scratch folders. */
export function processScratchDir(tempDir: string): string {
  return join(tempDir, OWNER_NAME);
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

/** A marker names a process of this host that no longer runs (the short cut; age decides the rest). */
function deadHere(name: string, host: string): boolean {
  const m = /^(.+)-(\d+)-[0-9a-f]+$/.exec(name);
  if (!m || m[1] !== host) return false;
  const pid = Number(m[2]);
  return pid > 0 && !alive(pid);
}

async function touchMarker(dir: string): Promise<void> {
  const owners = join(dir, OWNERS_DIR);
  await ensurePrivateDir(owners);
  const marker = join(owners, OWNER_NAME);
  await writeFile(marker, `${new Date().toISOString()}\n`);
  await makeFilePrivate(marker);
}

/**
 * Registers this process as an owner of `dir` and removes what owners that are gone left there;
 * returns how many entries went. An owner is gone when its pid is dead on this host, or when its
 * marker is older than both STALE_REFRESHES refresh periods and the job timeout (any host).
 */
export async function sweepScratch(dir: string, jobTimeoutMs: number): Promise<number> {
  await touchMarker(dir);
  const owners = join(dir, OWNERS_DIR);
  const host = hostname();
  const now = Date.now();
  const staleBefore = now - Math.max(STALE_REFRESHES * MARKER_REFRESH_MS, jobTimeoutMs);
  const live = new Set([OWNER_NAME]);
  let removed = 0;
  for (const name of await readdir(owners).catch(() => [] as string[])) {
    if (name === OWNER_NAME) continue;
    const st = await stat(join(owners, name)).catch(() => null);
    if (!st) continue;
    if (!deadHere(name, host) && st.mtimeMs >= staleBefore) {
      live.add(name);
      continue;
    }
    await rm(join(dir, name), { recursive: true, force: true });
    await rm(join(owners, name), { force: true });
    removed++;
  }
  // Loose entries and folders without a live marker: only past the job timeout, as processes that
  // never register (operator CLI commands) write here too.
  return removed + (await removeOlder(dir, new Set([OWNERS_DIR, ...live]), now - jobTimeoutMs));
}

/** Touches this process's marker every `everyMs` until stopped (the timer never holds the process). */
export function keepMarkerFresh(dir: string, everyMs: number = MARKER_REFRESH_MS): { stop(): void } {
  const timer = setInterval(() => {
    // A failed touch is retried on the next tick; a marker removed meanwhile is written again.
    touchMarker(dir).catch(() => undefined);
  }, everyMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
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
