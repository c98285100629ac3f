// HMAC-SHA256 signed file URLs for the local blob store, and the signing secret they rest on.
//
// URL:       <publicUrl>/v2/files/<key>?expires=<unix seconds>&sig=<hex>[&name=<url-encoded file name>]
// Signed:    HMAC-SHA256(secret, "lipsync-file-v1\n" + key + "\n" + expires + "\n" + (name ?? ""))
// The name takes part in the signature, so a holder cannot change the download name either.
//
// Upload URLs (direct uploads, PUT):
// URL:       <publicUrl>/v2/files/<key>?upload=1&expires=<unix seconds>&size=<bytes>&type=<content type>&sig=<hex>
// Signed:    HMAC-SHA256(secret, "lipsync-upload-v1\n" + key + "\n" + expires + "\n" + size + "\n" + type)
// Another version string than downloads: an upload URL never reads a file, a download URL never writes.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_URL_VALIDITY_SECONDS } from './blob-store.js';
import { ensurePrivateDir, PRIVATE_FILE_MODE, tightenFile } from '../private-files.js';

const SIGNATURE_VERSION = 'lipsync-file-v1';
const UPLOAD_SIGNATURE_VERSION = 'lipsync-upload-v1';
/** A media type with optional parameters, printable ASCII only (it is echoed in a header). */
const CONTENT_TYPE_RE = /^[A-Za-z0-9!#$&^_.+-]+\/[A-Za-z0-9!#$&^_.+-]+(?:\s*;\s*[\x21-\x7e ]*)?$/;
export const MAX_CONTENT_TYPE_LENGTH = 200;
const MAX_FILE_NAME_LENGTH = 255;
/** How many URLs signed within one second are kept for the rest of that second. */
const SIGNED_URL_CACHE_SIZE = 1000;

export type SignatureCheck = 'valid' | 'invalid' | 'expired';

export interface SignedQuery {
  readonly expires?: string;
  readonly sig?: string;
  readonly name?: string;
}

export interface UploadQuery {
  readonly expires?: string;
  readonly size?: string;
  readonly type?: string;
  readonly sig?: string;
}

/** What an upload URL allows: exactly `size` bytes of `contentType`. */
export interface UploadGrant {
  readonly size: number;
  readonly contentType: string;
}

/** Whether a content type may be bound into an upload URL (and sent back as a header). */
export function isUploadContentType(type: string): boolean {
  return type.length > 0 && type.length <= MAX_CONTENT_TYPE_LENGTH && CONTENT_TYPE_RE.test(type);
}

export class UrlSigner {
  private readonly secret: Buffer;
  /** URLs signed within the second signedSecond, by expiry, key and file name (sign()). */
  private readonly signed = new Map<string, string>();
  private signedSecond = Number.NaN;

  constructor(
    secret: string | Buffer,
    private readonly publicUrl: string,
    private readonly now: () => number = Date.now,
  ) {
    this.secret = Buffer.isBuffer(secret) ? secret : Buffer.from(secret, 'utf8');
    if (this.secret.length < 32) throw new Error('the URL signing secret must be at least 32 bytes');
  }

  /**
   * The absolute signed URL of key. A URL is a function of (key, file name, expiry second) alone, and
   * the expiry moves on with the clock's second: the URLs signed within the current second are kept
   * (at most SIGNED_URL_CACHE_SIZE), so that a generation read many times a second is signed once.
   * Every answer is the URL that signing anew would give.
   */
  sign(key: string, opts: { expiresInSeconds?: number; fileName?: string } = {}): string {
    const validity = opts.expiresInSeconds ?? DEFAULT_URL_VALIDITY_SECONDS;
    if (!Number.isFinite(validity) || validity <= 0) throw new Error('expiresInSeconds must be positive');
    const second = Math.floor(this.now() / 1000);
    const expires = second + Math.ceil(validity);
    if (second !== this.signedSecond || this.signed.size >= SIGNED_URL_CACHE_SIZE) {
      this.signed.clear();
      this.signedSecond = second;
    }
    // Unambiguous: the key's length comes first; '=' marks a file name (none and '' differ).
    const cacheKey = `${expires} ${key.length} ${key}${opts.fileName === undefined ? '' : `=${opts.fileName}`}`;
    const cached = this.signed.get(cacheKey);
    if (cached !== undefined) return cached;
    const name = opts.fileName !== undefined ? cleanFileName(opts.fileName) : undefined;
    const params = new URLSearchParams({ expires: String(expires), sig: this.mac(key, expires, name) });
    if (name !== undefined) params.set('name', name);
    const url = `${this.publicUrl}/v2/files/${key}?${params.toString()}`;
    this.signed.set(cacheKey, url);
    return url;
  }

  /**
   * The key a URL of ours points at: 'foreign' for any other URL, otherwise the signature check of
   * its key ('valid' only for an unexpired URL signed here).
   */
  keyOf(url: string): { status: 'foreign' } | { status: SignatureCheck; key: string } {
    let u: URL;
    let base: URL;
    try {
      u = new URL(url);
      base = new URL(`${this.publicUrl}/v2/files/`);
    } catch {
      return { status: 'foreign' };
    }
    if (u.origin !== base.origin || !u.pathname.startsWith(base.pathname)) return { status: 'foreign' };
    const key = decodeURIComponent(u.pathname.slice(base.pathname.length));
    const q = u.searchParams;
    const status = this.check(key, {
      expires: q.get('expires') ?? undefined,
      sig: q.get('sig') ?? undefined,
      name: q.get('name') ?? undefined,
    });
    return { status, key };
  }

  /** Checks a request for key; a wrong signature is 'invalid' whether or not it has expired. */
  check(key: string, q: SignedQuery): SignatureCheck {
    if (!q.expires || !/^\d{1,12}$/.test(q.expires) || !q.sig || !/^[0-9a-f]{64}$/i.test(q.sig)) {
      return 'invalid';
    }
    if (q.name !== undefined && (q.name === '' || q.name !== cleanFileName(q.name))) return 'invalid';
    const expires = Number(q.expires);
    const expected = Buffer.from(this.mac(key, expires, q.name), 'hex');
    const given = Buffer.from(q.sig, 'hex');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'invalid';
    return expires * 1000 <= this.now() ? 'expired' : 'valid';
  }

  /** The absolute signed upload (PUT) URL of key for exactly `size` bytes of `contentType`. */
  signUpload(key: string, opts: UploadGrant & { expiresInSeconds: number }): string {
    const validity = opts.expiresInSeconds;
    if (!Number.isFinite(validity) || validity <= 0) throw new Error('expiresInSeconds must be positive');
    if (!Number.isSafeInteger(opts.size) || opts.size < 0) throw new Error('size must be a whole number');
    if (!isUploadContentType(opts.contentType)) throw new Error('invalid content type');
    const expires = Math.floor(this.now() / 1000) + Math.ceil(validity);
    const params = new URLSearchParams({
      upload: '1',
      expires: String(expires),
      size: String(opts.size),
      type: opts.contentType,
      sig: this.uploadMac(key, expires, opts.size, opts.contentType),
    });
    return `${this.publicUrl}/v2/files/${key}?${params.toString()}`;
  }

  /** Checks an upload request for key; the grant (size, type) comes with 'valid' and 'expired'. */
  checkUpload(
    key: string,
    q: UploadQuery,
  ): { status: 'invalid' } | { status: 'valid' | 'expired'; grant: UploadGrant } {
    if (
      !q.expires ||
      !/^\d{1,12}$/.test(q.expires) ||
      !q.size ||
      !/^\d{1,15}$/.test(q.size) ||
      q.type === undefined ||
      !isUploadContentType(q.type) ||
      !q.sig ||
      !/^[0-9a-f]{64}$/i.test(q.sig)
    ) {
      return { status: 'invalid' };
    }
    const expires = Number(q.expires);
    const size = Number(q.size);
    const expected = Buffer.from(this.uploadMac(key, expires, size, q.type), 'hex');
    const given = Buffer.from(q.sig, 'hex');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { status: 'invalid' };
    const grant = { size, contentType: q.type };
    return { status: expires * 1000 <= this.now() ? 'expired' : 'valid', grant };
  }

  private uploadMac(key: string, expires: number, size: number, type: string): string {
    return createHmac('sha256', this.secret)
      .update(`${UPLOAD_SIGNATURE_VERSION}\n${key}\n${expires}\n${size}\n${type}`)
      .digest('hex');
  }

  private mac(key: string, expires: number, name: string | undefined): string {
    return createHmac('sha256', this.secret)
      .update(`${SIGNATURE_VERSION}\n${key}\n${expires}\n${name ?? ''}`)
      .digest('hex');
  }
}

/** A download name without path separators or control characters, at most 255 characters. */
export function cleanFileName(name: string): string {
  const cleaned = name
    .replace(/[\p{Cc}\p{Cf}]/gu, '')
    .replace(/[\\/]/g, '_')
    .trim()
    .slice(0, MAX_FILE_NAME_LENGTH);
  return cleaned === '' ? 'file' : cleaned;
}

/**
 * The configured secret, or one created once (32 random bytes, hex, mode 0600) in
 * `<dataDir>/signing-secret` so that URLs stay valid across restarts. Created with O_EXCL so that two
 * processes starting together agree on one secret.
 */
export async function resolveSigningSecret(configured: string | null, dataDir: string): Promise<string> {
  if (configured !== null) return configured;
  const file = join(dataDir, 'signing-secret');
  await ensurePrivateDir(dataDir);
  try {
    await writeFile(file, randomBytes(32).toString('hex') + '\n', { flag: 'wx', mode: PRIVATE_FILE_MODE });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  // Exactly 0600 whatever the umask; an older install's secret file is tightened too.
  await tightenFile(file);
  // A process that lost the creation race may read before the winner's write lands: retry briefly.
  for (let attempt = 0; ; attempt++) {
    const secret = (await readFile(file, 'utf8')).trim();
    if (secret.length >= 32) return secret;
    if (attempt >= 20) throw new Error(`${file} holds no usable secret (fewer than 32 characters)`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
