// Per-job scratch space: a fresh private directory that is always removed afterwards, whether the
// work succeeded, failed or was aborted.
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TempDirOptions {
  /** Parent directory; defaults to the OS temp directory. */
  root?: string;
  /** When aborted, fn is expected to reject; the directory is removed once it has settled. */
  signal?: AbortSignal;
}

/** Creates a private (0700) directory named `<prefix>-XXXXXX` under the root. */
export async function makeTempDir(prefix: string, root: string = tmpdir()): Promise<string> {
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(prefix)) {
    throw new Error(
      `temp dir prefix must be 1-64 characters of [A-Za-z0-9._-], got ${JSON.stringify(prefix)}`,
    );
  }
  // The root (e.g. <data dir>/tmp) may not exist yet on a fresh data folder.
  await mkdir(root, { recursive: true, mode: 0o700 });
  return mkdtemp(join(root, `${prefix}-`));
}

export async function removeTempDir(dir: string): Promise<void> {
  await rm(dir, { recursive: true, force: true, maxRetries: 3, retryDelay: 50 });
}

/**
 * Runs fn with a new temp directory and removes the directory when fn settles. fn must not leave
 * work running in the directory (child processes, open write streams) after it settles; the media
 * helpers here only settle once their ffmpeg process has exited.
 */
export async function withTempDir<T>(
  prefix: string,
  fn: (dir: string) => Promise<T>,
  opts: TempDirOptions = {},
): Promise<T> {
  opts.signal?.throwIfAborted();
  const dir = await makeTempDir(prefix, opts.root);
  try {
    return await fn(dir);
  } finally {
    await removeTempDir(dir);
  }
}
