// HMAC-SHA256 signed file URLs for the local blob store, and the signing secret they rest on.
//
// URL:       <publicUrl>/v2/files/<key>?expires=<unix seconds>&sig=<hex>[&name=<url-encoded file name>]
// Signed:    HMAC-SHA256(secret, "lipsync-file-v1\n" + key + "\n" + expires + "\n" + (name ?? ""))
// The name takes part in the signature, so a holder cannot change the download name either.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_URL_VALIDITY_SECONDS } from './blob-store.js';
import { ensurePrivateDir, PRIVATE_FILE_MODE, tightenFile } from '../private-files.js';

const SIGNATURE_VERSION = 'lipsync-file-v1';
const MAX_FILE_NAME_LENGTH = 255;

export type SignatureCheck = 'valid' | 'invalid' | 'expired';

export interface SignedQuery {
  readonly expires?: string;
  readonly sig?: string;
  readonly name?: string;
}

export class UrlSigner {
  private readonly secret: Buffer;

  constructor(
    secret: string | Buffer,
    private readonly publicUrl: string,
    private readonly now: () => number = Date.now,
  ) {
    this.secret = Buffer.isBuffer(secret) ? secret : Buffer.from(secret, 'utf8');
    if (this.secret.length < 32) throw new Error('the URL signing secret must be at least 32 bytes');
  }

  /** The absolute signed URL of key. */
  sign(key: string, opts: { expiresInSeconds?: number; fileName?: string } = {}): string {
    const validity = opts.expiresInSeconds ?? DEFAULT_URL_VALIDITY_SECONDS;
    if (!Number.isFinite(validity) || validity <= 0) throw new Error('expiresInSeconds must be positive');
    const expires = Math.floor(this.now() / 1000) + Math.ceil(validity);
    const name = opts.fileName !== undefined ? cleanFileName(opts.fileName) : undefined;
    const params = new URLSearchParams({ expires: String(expires), sig: this.mac(key, expires, name) });
    if (name !== undefined) params.set('name', name);
    return `${this.publicUrl}/v2/files/${key}?${params.toString()}`;
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
