// The model files the service can use but does not ship (docs/engine.md, "The learned viseme model"):
// where each comes from upstream, its checksum, and a download that writes the file only once its
// checksum matches. `lipsync models download` runs it; LIPSYNC_MODELS_DIR points the service at them.
import { createHash } from 'node:crypto';
import { mkdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { guardedRequest } from '../media/http-client.js';
import { sha256File } from '../file-hash.js';
import { VISEME_MODEL_FILE } from '../config.js';
import { streamToFile } from '../stream-to-file.js';

export interface ModelFile {
  file: string;
  what: string;
  /** The upstream location, pinned to a commit. */
  url: string;
  sha256: string;
  licence: string;
}

export const MODEL_FILES: readonly ModelFile[] = [
  {
    file: VISEME_MODEL_FILE,
    what: 'audio-to-viseme classifier (cherry-lip-sync)',
    url: 'https://raw.githubusercontent.com/nwhitehead/cherry-lip-sync/4e8e6fabefc1b1425199667728ddbd619e5dff8a/rust/model/model.onnx',
    sha256: '0c5169423b63a09ce45b061d288afa8f8dc052b4d4e751ae8fd1866b9ccb6e47',
    licence: 'MIT or Apache-2.0',
  },
];

export class ModelDownloadError extends Error {}

/** sha256 (hex) of a file, or null when it does not exist. */
export async function fileSha256(path: string): Promise<string | null> {
  try {
    await stat(path);
  } catch {
    return null;
  }
  return sha256File(path);
}

export interface DownloadOptions {
  dir: string;
  /** A mirror: the file is fetched from `<from>/<file>` instead of upstream. */
  from?: string | null;
  allowPrivate: boolean;
  signal?: AbortSignal;
}

/**
 * Fetches one model into `dir` unless a file with the right checksum is there already. The bytes go
 * to a temporary name and are renamed only when their checksum matches: a failed or tampered download
 * leaves nothing behind.
 */
export async function downloadModel(m: ModelFile, opts: DownloadOptions): Promise<'present' | 'downloaded'> {
  const target = join(opts.dir, m.file);
  if ((await fileSha256(target)) === m.sha256) return 'present';
  await mkdir(opts.dir, { recursive: true });
  const url = opts.from ? `${opts.from.replace(/\/+$/, '')}/${m.file}` : m.url;
  const res = await guardedRequest({
    method: 'GET',
    url,
    timeoutMs: 300_000,
    maxResponseBytes: 64 * 1024 * 1024,
    maxRedirects: 5,
    allowPrivate: opts.allowPrivate,
    signal: opts.signal,
  });
  if (res.status !== 200) {
    res.close();
    throw new ModelDownloadError(`${m.file}: ${url} answered ${res.status}`);
  }
  const partial = `${target}.part-${process.pid}`;
  const hash = createHash('sha256');
  try {
    const hashing = new Transform({
      transform(chunk: Buffer, _enc, done) {
        hash.update(chunk);
        done(null, chunk);
      },
    });
    await streamToFile(res.body, [hashing], partial, { mode: 0o644 });
    const got = hash.digest('hex');
    if (got !== m.sha256)
      throw new ModelDownloadError(`${m.file}: checksum ${got} is not the expected ${m.sha256}`);
    await rename(partial, target);
    return 'downloaded';
  } finally {
    await rm(partial, { force: true });
  }
}
