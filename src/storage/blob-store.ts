// The BlobStore interface: where media and outputs live. Local disk today, S3-compatible storage later;
// callers only ever see keys, streams and signed URLs.
import type { Readable } from 'node:stream';

/** Seven days: the validity the spec asks for signed download URLs. */
export const DEFAULT_URL_VALIDITY_SECONDS = 7 * 24 * 3600;

export interface BlobStat {
  readonly size: number;
  readonly contentType: string;
  readonly lastModified: Date;
}

/** An inclusive byte range, as in HTTP: bytes start..end. */
export interface ByteRange {
  readonly start: number;
  readonly end: number;
}

export interface PutOptions {
  readonly contentType: string;
}

export interface SignedUrlOptions {
  /** Validity in seconds from now; default seven days. */
  readonly expiresInSeconds?: number;
  /** A download file name: the file is served with Content-Disposition: attachment. */
  readonly fileName?: string;
}

export interface SignedUploadOptions {
  /** The Content-Type the upload must be sent with (bound into the URL's signature). */
  readonly contentType: string;
  /** The exact body size in bytes (bound into the URL's signature). */
  readonly size: number;
  /** Validity in seconds from now. */
  readonly expiresInSeconds: number;
}

export interface BlobStore {
  /** Stores a stream under key (replacing any blob there); the blob appears only once complete. */
  put(key: string, body: Readable, opts: PutOptions): Promise<BlobStat>;
  /** Stores a local file; with move the file is moved (renamed where possible) instead of copied. */
  putFile(key: string, path: string, opts: PutOptions & { move?: boolean }): Promise<BlobStat>;
  /** A read stream of the blob or of one byte range of it; BlobNotFoundError when missing. */
  open(key: string, range?: ByteRange): Promise<Readable>;
  stat(key: string): Promise<BlobStat | null>;
  exists(key: string): Promise<boolean>;
  /** Removes the blob; removing a missing blob is not an error. */
  delete(key: string): Promise<void>;
  /** An absolute URL that lets anyone holding it read the blob until it expires. */
  signedUrl(key: string, opts?: SignedUrlOptions): Promise<string>;
  /**
   * An absolute URL that lets anyone holding it PUT exactly `size` bytes of `contentType` under key
   * (sent with that Content-Type header) until it expires: a direct upload that never passes through
   * the API's own request handling where the store can take it (S3); the local store's own PUT route.
   */
  signedUploadUrl(key: string, opts: SignedUploadOptions): Promise<string>;
  /**
   * Whether `url` is one of this store's own signed URLs: 'foreign' for any other URL; else the key
   * and whether its signature is valid (unexpired), so that our own URLs given back as inputs are
   * read from the store, never fetched over HTTP.
   */
  keyFromUrl(url: string): { status: 'foreign' } | { status: 'valid' | 'invalid' | 'expired'; key: string };
  /**
   * Writes the blob to a local file (a download; the local store links or copies its own file), for
   * tools that need a path (ffmpeg). The file is the caller's to remove.
   */
  download(key: string, path: string): Promise<void>;
  /** The keys that start with `prefix` (a folder-like prefix ending in '/'). */
  list(prefix: string): Promise<string[]>;
}

export class BlobNotFoundError extends Error {
  constructor(readonly key: string) {
    super(`blob not found: ${key}`);
    this.name = 'BlobNotFoundError';
  }
}

export class InvalidBlobKeyError extends Error {
  constructor(readonly key: string) {
    super(`invalid blob key: ${JSON.stringify(key.slice(0, 100))}`);
    this.name = 'InvalidBlobKeyError';
  }
}

// Segments of letters, digits, '_', '-' and '.', never starting with '.', joined by single '/':
// no absolute paths, no '..', no hidden names (the local store keeps its own files under '.tmp' and
// '.meta'), nothing that needs URL encoding.
const KEY_RE = /^[A-Za-z0-9_-][A-Za-z0-9._-]*(?:\/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$/;
export const MAX_KEY_LENGTH = 512;

export function isValidBlobKey(key: string): boolean {
  return key.length > 0 && key.length <= MAX_KEY_LENGTH && KEY_RE.test(key);
}

export function assertValidBlobKey(key: string): void {
  if (!isValidBlobKey(key)) throw new InvalidBlobKeyError(key);
}
