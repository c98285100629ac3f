// Blobs on local disk under <dataDir>/blobs/<key>. A write streams into <root>/.tmp/ and is renamed into
// place once complete and flushed, so readers never see a partial blob. The content type lives in a
// small JSON side file under <root>/.meta/<key>.json (keys never start with '.', so these cannot clash).
import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import {
  chmod,
  copyFile,
  link,
  open,
  readFile,
  readdir,
  rename,
  rm,
  stat,
  writeFile,
} from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';
import {
  BlobNotFoundError,
  assertValidBlobKey,
  type BlobStat,
  type BlobStore,
  type ByteRange,
  type PutOptions,
  type SignedUploadOptions,
  type SignedUrlOptions,
} from './blob-store.js';
import type { UrlSigner } from './url-signer.js';
import { ensurePrivateDir, PRIVATE_FILE_MODE } from '../private-files.js';
import { streamToFile } from '../stream-to-file.js';

interface BlobMeta {
  contentType: string;
}

const DEFAULT_CONTENT_TYPE = 'application/octet-stream';
const STALE_TMP_MS = 3600_000;

function isNotFound(err: unknown): boolean {
  const code = (err as NodeJS.ErrnoException).code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

export class LocalBlobStore implements BlobStore {
  readonly root: string;
  private readonly tmpDir: string;
  private readonly metaDir: string;

  constructor(
    dataDir: string,
    private readonly signer: UrlSigner,
  ) {
    this.root = join(dataDir, 'blobs');
    this.tmpDir = join(this.root, '.tmp');
    this.metaDir = join(this.root, '.meta');
  }

  /**
   * Creates the folders and removes temp files that a crashed write left behind: only those untouched
   * for an hour, because other processes (API, workers) may share this folder and be writing now.
   */
  async init(): Promise<void> {
    // Private folders (0700), existing ones included: blobs are the organizations' media.
    for (const dir of [this.root, this.tmpDir, this.metaDir]) await ensurePrivateDir(dir, { tighten: true });
    const cutoff = Date.now() - STALE_TMP_MS;
    for (const name of await readdir(this.tmpDir)) {
      const p = join(this.tmpDir, name);
      const st = await stat(p).catch(() => null);
      if (st && st.mtimeMs < cutoff) await rm(p, { recursive: true, force: true });
    }
  }

  async put(key: string, body: Readable, opts: PutOptions): Promise<BlobStat> {
    assertValidBlobKey(key);
    const tmp = join(this.tmpDir, randomUUID());
    try {
      await streamToFile(body, [], tmp, { flags: 'wx', mode: PRIVATE_FILE_MODE });
      return await this.commit(key, tmp, opts.contentType);
    } finally {
      await rm(tmp, { force: true });
    }
  }

  async putFile(key: string, path: string, opts: PutOptions & { move?: boolean }): Promise<BlobStat> {
    assertValidBlobKey(key);
    if (opts.move) {
      const tmp = join(this.tmpDir, randomUUID());
      try {
        await rename(path, tmp);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
        const stored = await this.put(key, createReadStream(path), opts); // another file system: copy
        await rm(path, { force: true });
        return stored;
      }
      try {
        return await this.commit(key, tmp, opts.contentType);
      } finally {
        await rm(tmp, { force: true });
      }
    }
    return this.put(key, createReadStream(path), opts);
  }

  async open(key: string, range?: ByteRange): Promise<Readable> {
    assertValidBlobKey(key);
    let handle;
    try {
      handle = await open(this.pathOf(key), 'r');
    } catch (err) {
      if (isNotFound(err)) throw new BlobNotFoundError(key);
      throw err;
    }
    return handle.createReadStream(range ? { start: range.start, end: range.end } : {});
  }

  async stat(key: string): Promise<BlobStat | null> {
    assertValidBlobKey(key);
    let st;
    try {
      st = await stat(this.pathOf(key));
    } catch (err) {
      if (isNotFound(err)) return null;
      throw err;
    }
    if (!st.isFile()) return null;
    return { size: st.size, contentType: await this.contentTypeOf(key), lastModified: st.mtime };
  }

  async exists(key: string): Promise<boolean> {
    return (await this.stat(key)) !== null;
  }

  async delete(key: string): Promise<void> {
    assertValidBlobKey(key);
    await rm(this.pathOf(key), { force: true });
    await rm(this.metaPathOf(key), { force: true });
  }

  async signedUrl(key: string, opts: SignedUrlOptions = {}): Promise<string> {
    assertValidBlobKey(key);
    return this.signer.sign(key, opts);
  }

  /** PUT /v2/files/<key> with an upload signature (src/http/routes/files.ts checks size and type). */
  async signedUploadUrl(key: string, opts: SignedUploadOptions): Promise<string> {
    assertValidBlobKey(key);
    return this.signer.signUpload(key, opts);
  }

  keyFromUrl(url: string): ReturnType<BlobStore['keyFromUrl']> {
    return this.signer.keyOf(url);
  }

  async localPath(key: string): Promise<string | null> {
    assertValidBlobKey(key);
    return this.pathOf(key);
  }

  async download(key: string, path: string): Promise<void> {
    assertValidBlobKey(key);
    const src = this.pathOf(key);
    try {
      // A hard link costs nothing and stays valid if the blob is deleted meanwhile.
      await link(src, path);
    } catch (err) {
      if (isNotFound(err)) throw new BlobNotFoundError(key);
      await copyFile(src, path).catch((e: unknown) => {
        throw isNotFound(e) ? new BlobNotFoundError(key) : e;
      });
    }
  }

  async list(prefix: string): Promise<string[]> {
    const dir = prefix.replace(/\/+$/, '');
    if (dir !== '') assertValidBlobKey(dir);
    const out: string[] = [];
    const walk = async (rel: string): Promise<void> => {
      const entries = await readdir(join(this.root, rel), { withFileTypes: true }).catch((err: unknown) => {
        if (isNotFound(err)) return [];
        throw err;
      });
      for (const e of entries) {
        if (e.name.startsWith('.')) continue;
        const k = rel ? `${rel}/${e.name}` : e.name;
        if (e.isDirectory()) await walk(k);
        else if (e.isFile()) out.push(k);
      }
    };
    await walk(dir);
    return out.sort();
  }

  private pathOf(key: string): string {
    return join(this.root, key);
  }

  private metaPathOf(key: string): string {
    return join(this.metaDir, `${key}.json`);
  }

  /** Flushes tmp, writes the side file, then renames tmp into place (the blob appears last). */
  private async commit(key: string, tmp: string, contentType: string): Promise<BlobStat> {
    const fh = await open(tmp, 'r+');
    try {
      // Exactly 0600 whatever the umask, and whoever wrote the file (a moved upload or fetch).
      await fh.chmod(PRIVATE_FILE_MODE);
      await fh.datasync();
    } finally {
      await fh.close();
    }
    const metaPath = this.metaPathOf(key);
    await ensurePrivateDir(dirname(metaPath));
    const metaTmp = join(this.tmpDir, `${randomUUID()}.json`);
    const meta: BlobMeta = { contentType: contentType || DEFAULT_CONTENT_TYPE };
    try {
      await writeFile(metaTmp, JSON.stringify(meta), { mode: PRIVATE_FILE_MODE });
      await chmod(metaTmp, PRIVATE_FILE_MODE);
      await rename(metaTmp, metaPath);
    } finally {
      await rm(metaTmp, { force: true });
    }
    const final = this.pathOf(key);
    await ensurePrivateDir(dirname(final));
    await rename(tmp, final);
    const st = await stat(final);
    return { size: st.size, contentType: meta.contentType, lastModified: st.mtime };
  }

  private async contentTypeOf(key: string): Promise<string> {
    try {
      const meta = JSON.parse(await readFile(this.metaPathOf(key), 'utf8')) as Partial<BlobMeta>;
      return typeof meta.contentType === 'string' && meta.contentType !== ''
        ? meta.contentType
        : DEFAULT_CONTENT_TYPE;
    } catch (err) {
      if (isNotFound(err) || err instanceof SyntaxError) return DEFAULT_CONTENT_TYPE;
      throw err;
    }
  }
}
