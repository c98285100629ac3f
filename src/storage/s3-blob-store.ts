// Blobs in an S3-compatible bucket (AWS S3, MinIO, R2, ...), one object per key. Downloads are
// presigned GET URLs that the bucket serves itself; keyFromUrl recognises them by recomputing their
// SigV4 signature with our own secret key (docs/storage.md, "S3").
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
} from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';
import { getSignedUrl } from '@aws-sdk/s3-request-presigner';
import {
  BlobNotFoundError,
  DEFAULT_URL_VALIDITY_SECONDS,
  assertValidBlobKey,
  isValidBlobKey,
  type BlobStat,
  type BlobStore,
  type ByteRange,
  type PutOptions,
  type SignedUploadOptions,
  type SignedUrlOptions,
} from './blob-store.js';
import { contentDisposition } from './content-disposition.js';
import { cleanFileName } from './url-signer.js';
import { PRIVATE_FILE_MODE } from '../private-files.js';
import { streamToFile } from '../stream-to-file.js';

export interface S3BlobStoreOptions {
  /** An S3-compatible server's URL (MinIO, R2, ...); null = AWS S3 of `region`. */
  readonly endpoint: string | null;
  readonly region: string;
  readonly bucket: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  /** `<endpoint>/<bucket>/<key>` instead of `<bucket>.<endpoint host>/<key>` (MinIO's usual setup). */
  readonly forcePathStyle: boolean;
  /** Keys per ListObjectsV2 request (S3's maximum and default is 1000; tests use fewer). */
  readonly listPageSize?: number;
  readonly now?: () => number;
}

const DEFAULT_CONTENT_TYPE = 'application/octet-stream';
/** SigV4 presigned URLs cannot be valid longer than seven days (S3 refuses them). */
export const MAX_PRESIGNED_SECONDS = 7 * 24 * 3600;
// Parts of 8 MiB, four in flight: at most 32 MiB of a body in memory per upload, and 10,000 parts
// (S3's limit) reach 80 GiB, far above the largest upload we accept (5 GiB).
const PART_SIZE = 8 * 1024 * 1024;
const QUEUE_SIZE = 4;
const PROBE_KEY = 'lipsync-url-probe';
const ALGORITHM = 'AWS4-HMAC-SHA256';
const UNSIGNED_PAYLOAD = 'UNSIGNED-PAYLOAD';

interface UrlBase {
  /** Scheme, host and port of this bucket's presigned URLs. */
  readonly origin: string;
  /** The path before the key: `/` (virtual-hosted) or `/<bucket>/` (path style), after any endpoint path. */
  readonly path: string;
}

interface AwsError {
  name?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

/** A missing object: GET answers NoSuchKey, HEAD (no body) only a 404 named NotFound. */
function isMissing(err: unknown): boolean {
  const e = err as AwsError | null;
  return e?.name === 'NoSuchKey' || e?.name === 'NotFound';
}

/** SigV4's URI encoding (RFC 3986 unreserved characters kept, everything else %XX). */
function uriEncode(s: string): string {
  return encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

function hmac(key: string | Buffer, data: string): Buffer {
  return createHmac('sha256', key).update(data, 'utf8').digest();
}

/** The query's parameters decoded ('+' as a space, as S3 reads it), or null if malformed or repeated. */
function queryParams(search: string): Map<string, string> | null {
  const out = new Map<string, string>();
  for (const part of search.replace(/^\?/, '').split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const [rawName, rawValue] = eq === -1 ? [part, ''] : [part.slice(0, eq), part.slice(eq + 1)];
    let name: string;
    let value: string;
    try {
      name = decodeURIComponent(rawName.replace(/\+/g, '%20'));
      value = decodeURIComponent(rawValue.replace(/\+/g, '%20'));
    } catch {
      return null;
    }
    if (out.has(name)) return null;
    out.set(name, value);
  }
  return out;
}

export class S3BlobStore implements BlobStore {
  private readonly now: () => number;
  private readonly listPageSize: number;

  private constructor(
    private readonly client: S3Client,
    private readonly opts: S3BlobStoreOptions,
    private readonly base: UrlBase,
  ) {
    this.now = opts.now ?? Date.now;
    this.listPageSize = opts.listPageSize ?? 1000;
  }

  /**
   * A store for the bucket. Contacts nothing: call checkBucket() to know that the bucket is there.
   * Where this bucket's URLs point (virtual-hosted or path style, AWS or another endpoint) is learnt
   * from one presigned URL, so keyFromUrl follows the SDK's own endpoint rules.
   */
  static async create(opts: S3BlobStoreOptions): Promise<S3BlobStore> {
    const client = new S3Client({
      region: opts.region,
      ...(opts.endpoint !== null ? { endpoint: opts.endpoint } : {}),
      forcePathStyle: opts.forcePathStyle,
      credentials: { accessKeyId: opts.accessKeyId, secretAccessKey: opts.secretAccessKey },
      // Checksums only where S3 requires them: by default the SDK sends aws-chunked bodies with
      // trailing CRC checksums, which several S3-compatible servers do not understand.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      // An unreachable endpoint fails the start in seconds, not after the OS's connect timeout.
      requestHandler: { connectionTimeout: 10_000 },
    });
    const probe = new URL(
      await getSignedUrl(client, new GetObjectCommand({ Bucket: opts.bucket, Key: PROBE_KEY }), {
        expiresIn: 60,
      }),
    );
    if (!probe.pathname.endsWith(`/${PROBE_KEY}`)) {
      throw new Error(`unexpected presigned URL shape for bucket ${JSON.stringify(opts.bucket)}`);
    }
    return new S3BlobStore(client, opts, {
      origin: probe.origin,
      path: probe.pathname.slice(0, -PROBE_KEY.length),
    });
  }

  /** Fails with a message that says what to fix when the bucket is missing or out of reach. */
  async checkBucket(): Promise<void> {
    const { bucket, endpoint, region } = this.opts;
    const where = `S3 bucket ${JSON.stringify(bucket)} ${endpoint !== null ? `at ${new URL(endpoint).origin}` : `in ${region}`}`;
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: bucket }));
    } catch (err) {
      const e = err as AwsError;
      const status = e.$metadata?.httpStatusCode;
      if (status === 404) {
        throw new Error(`${where} does not exist: create it first (the service never creates buckets)`, {
          cause: err,
        });
      }
      if (status === 401 || status === 403) {
        throw new Error(
          `${where}: access denied; check LIPSYNC_S3_ACCESS_KEY_ID, LIPSYNC_S3_SECRET_ACCESS_KEY and the bucket's policy`,
          { cause: err },
        );
      }
      if (status === 301) {
        throw new Error(`${where}: the bucket is in another region (set LIPSYNC_S3_REGION)`, { cause: err });
      }
      throw new Error(`${where} could not be reached: ${e.message ?? String(err)}`, { cause: err });
    }
  }

  async put(key: string, body: Readable, opts: PutOptions): Promise<BlobStat> {
    assertValidBlobKey(key);
    // One PutObject for a body up to one part, a multipart upload beyond; a failed multipart upload is
    // aborted (leavePartsOnError false), so nothing appears under key unless the whole body arrived.
    const upload = new Upload({
      client: this.client,
      params: {
        Bucket: this.opts.bucket,
        Key: key,
        Body: body,
        ContentType: opts.contentType || DEFAULT_CONTENT_TYPE,
      },
      partSize: PART_SIZE,
      queueSize: QUEUE_SIZE,
      leavePartsOnError: false,
    });
    try {
      await upload.done();
    } catch (err) {
      body.destroy(); // a request that failed leaves the source unread: release its file or socket
      throw err;
    }
    const st = await this.stat(key);
    if (!st) throw new Error(`S3 object ${key} vanished right after its upload`);
    return st;
  }

  async putFile(key: string, path: string, opts: PutOptions & { move?: boolean }): Promise<BlobStat> {
    assertValidBlobKey(key);
    const st = await this.put(key, createReadStream(path), opts);
    if (opts.move) await rm(path, { force: true });
    return st;
  }

  async open(key: string, range?: ByteRange): Promise<Readable> {
    assertValidBlobKey(key);
    return this.body(key, range);
  }

  async stat(key: string): Promise<BlobStat | null> {
    assertValidBlobKey(key);
    try {
      const head = await this.client.send(new HeadObjectCommand({ Bucket: this.opts.bucket, Key: key }));
      return {
        size: head.ContentLength ?? 0,
        contentType: head.ContentType || DEFAULT_CONTENT_TYPE,
        lastModified: head.LastModified ?? new Date(0),
      };
    } catch (err) {
      if (isMissing(err)) return null;
      throw err;
    }
  }

  async exists(key: string): Promise<boolean> {
    return (await this.stat(key)) !== null;
  }

  async delete(key: string): Promise<void> {
    assertValidBlobKey(key);
    // S3 answers 204 for a missing key as well: delete is idempotent there too.
    await this.client.send(new DeleteObjectCommand({ Bucket: this.opts.bucket, Key: key }));
  }

  async signedUrl(key: string, opts: SignedUrlOptions = {}): Promise<string> {
    assertValidBlobKey(key);
    const validity = opts.expiresInSeconds ?? DEFAULT_URL_VALIDITY_SECONDS;
    if (!Number.isFinite(validity) || validity <= 0) throw new Error('expiresInSeconds must be positive');
    const expiresIn = Math.ceil(validity);
    if (expiresIn > MAX_PRESIGNED_SECONDS) {
      throw new RangeError(`S3 presigned URLs are valid for at most ${MAX_PRESIGNED_SECONDS} seconds`);
    }
    const command = new GetObjectCommand({
      Bucket: this.opts.bucket,
      Key: key,
      ResponseContentDisposition:
        opts.fileName !== undefined ? contentDisposition(cleanFileName(opts.fileName)) : undefined,
    });
    return getSignedUrl(this.client, command, { expiresIn, signingDate: new Date(this.now()) });
  }

  /**
   * A presigned PutObject: Content-Type and Content-Length are signed headers, so the bucket refuses
   * (403) a body of another size or type; S3 itself refuses a body longer than Content-Length.
   */
  async signedUploadUrl(key: string, opts: SignedUploadOptions): Promise<string> {
    assertValidBlobKey(key);
    const expiresIn = Math.ceil(opts.expiresInSeconds);
    if (!Number.isFinite(expiresIn) || expiresIn <= 0) throw new Error('expiresInSeconds must be positive');
    if (expiresIn > MAX_PRESIGNED_SECONDS) {
      throw new RangeError(`S3 presigned URLs are valid for at most ${MAX_PRESIGNED_SECONDS} seconds`);
    }
    const command = new PutObjectCommand({
      Bucket: this.opts.bucket,
      Key: key,
      ContentType: opts.contentType,
      ContentLength: opts.size,
    });
    return getSignedUrl(this.client, command, {
      expiresIn,
      signingDate: new Date(this.now()),
      signableHeaders: new Set(['content-type', 'content-length']),
    });
  }

  /**
   * 'foreign' for URLs outside this bucket's URL space; for ours, the key and the result of
   * recomputing the URL's SigV4 query signature with our secret key: 'valid' exactly when S3 would
   * accept it with these credentials (and it has not expired), 'expired' for a genuine but expired
   * one, 'invalid' for anything else (unsigned, altered, signed by other credentials).
   */
  keyFromUrl(url: string): ReturnType<BlobStore['keyFromUrl']> {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return { status: 'foreign' };
    }
    if (u.origin !== this.base.origin || !u.pathname.startsWith(this.base.path)) return { status: 'foreign' };
    const key = u.pathname.slice(this.base.path.length);
    return { status: this.checkSignature(u, key), key };
  }

  async download(key: string, path: string): Promise<void> {
    assertValidBlobKey(key);
    const body = await this.body(key);
    await streamToFile(body, [], path, { mode: PRIVATE_FILE_MODE });
  }

  async list(prefix: string): Promise<string[]> {
    const dir = prefix.replace(/\/+$/, '');
    if (dir !== '') assertValidBlobKey(dir);
    const out: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.opts.bucket,
          Prefix: dir === '' ? undefined : `${dir}/`,
          ContinuationToken: token,
          MaxKeys: this.listPageSize,
        }),
      );
      // Objects that other tools put in the bucket under names that are not keys of ours (folder
      // markers ending in '/', hidden names) are not listed, as the local store skips such files.
      for (const o of page.Contents ?? []) if (o.Key !== undefined && isValidBlobKey(o.Key)) out.push(o.Key);
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token !== undefined);
    return out.sort();
  }

  private async body(key: string, range?: ByteRange): Promise<Readable> {
    let res;
    try {
      res = await this.client.send(
        new GetObjectCommand({
          Bucket: this.opts.bucket,
          Key: key,
          Range: range ? `bytes=${range.start}-${range.end}` : undefined,
        }),
      );
    } catch (err) {
      if (isMissing(err)) throw new BlobNotFoundError(key);
      throw err;
    }
    if (!(res.Body instanceof Readable)) throw new Error(`S3 answered no readable body for ${key}`);
    return res.Body;
  }

  /** SigV4 query-signature check of a presigned GET, as S3 does it (only the host header signed). */
  private checkSignature(u: URL, key: string): 'valid' | 'invalid' | 'expired' {
    if (!isValidBlobKey(key)) return 'invalid';
    const q = queryParams(u.search);
    if (!q) return 'invalid';
    const credential = (q.get('X-Amz-Credential') ?? '').split('/');
    const amzDate = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(q.get('X-Amz-Date') ?? '');
    const expiresRaw = q.get('X-Amz-Expires') ?? '';
    const signature = q.get('X-Amz-Signature') ?? '';
    const payload = q.get('X-Amz-Content-Sha256');
    if (
      q.get('X-Amz-Algorithm') !== ALGORITHM ||
      q.get('X-Amz-SignedHeaders') !== 'host' ||
      (payload !== undefined && payload !== UNSIGNED_PAYLOAD) ||
      credential.length !== 5 ||
      credential[0] !== this.opts.accessKeyId ||
      credential[2] !== this.opts.region ||
      credential[3] !== 's3' ||
      credential[4] !== 'aws4_request' ||
      !amzDate ||
      credential[1] !== amzDate.slice(1, 4).join('') ||
      !/^\d{1,6}$/.test(expiresRaw) ||
      Number(expiresRaw) < 1 ||
      Number(expiresRaw) > MAX_PRESIGNED_SECONDS ||
      !/^[0-9a-f]{64}$/.test(signature)
    ) {
      return 'invalid';
    }
    const day = credential[1] as string;
    const canonicalQuery = [...q]
      .filter(([name]) => name !== 'X-Amz-Signature')
      .map(([name, value]) => [uriEncode(name), uriEncode(value)] as const)
      .sort(([a, av], [b, bv]) => (a < b ? -1 : a > b ? 1 : av < bv ? -1 : av > bv ? 1 : 0))
      .map(([name, value]) => `${name}=${value}`)
      .join('&');
    // The path as sent: keys need no encoding, and S3 signs paths without re-encoding them.
    const canonicalRequest = [
      'GET',
      u.pathname,
      canonicalQuery,
      `host:${u.host}`,
      '',
      'host',
      UNSIGNED_PAYLOAD,
    ].join('\n');
    const scope = `${day}/${this.opts.region}/s3/aws4_request`;
    const stringToSign = [
      ALGORITHM,
      amzDate[0],
      scope,
      createHash('sha256').update(canonicalRequest, 'utf8').digest('hex'),
    ].join('\n');
    let signingKey = hmac(`AWS4${this.opts.secretAccessKey}`, day);
    for (const part of [this.opts.region, 's3', 'aws4_request']) signingKey = hmac(signingKey, part);
    const expected = hmac(signingKey, stringToSign);
    if (!timingSafeEqual(expected, Buffer.from(signature, 'hex'))) return 'invalid';
    const [, y, mo, d, h, mi, s] = amzDate.map(Number) as number[];
    const signedAt = Date.UTC(y!, mo! - 1, d!, h!, mi!, s!);
    return signedAt + Number(expiresRaw) * 1000 <= this.now() ? 'expired' : 'valid';
  }
}
