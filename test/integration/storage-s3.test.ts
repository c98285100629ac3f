// test-database: none
// The S3 store against a real S3-protocol server (s3rver) on a random port: the shared BlobStore
// contract, then what only S3 has: presigned URLs served by the bucket, multipart uploads, paginated
// listing, the bucket check at start.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { pino } from 'pino';
import { S3BlobStore, type S3BlobStoreOptions } from '../../src/storage/s3-blob-store.js';
import { openBlobStore } from '../../src/storage/open-blob-store.js';
import { contentDisposition } from '../../src/storage/content-disposition.js';
import { UrlSigner } from '../../src/storage/url-signer.js';
import { loadConfig } from '../../src/config.js';
import { createServices } from '../../src/app/container.js';
import { blobStoreContract, readAll, TestClock } from '../helpers/blob-store-contract.js';
import { repoRoot } from '../helpers/paths.js';

const BUCKET = 'lipsync-test';
// s3rver's built-in account.
const ACCESS_KEY_ID = 'S3RVER';
const SECRET_ACCESS_KEY = 'S3RVER';

// s3rver runs in a child process because its list continuation tokens use DES, which Node's OpenSSL 3
// offers only with the legacy provider. Each request is reported as a JSON line, so tests can see
// which S3 operations the store used.
const SERVER = `
const S3rver = require('s3rver');
const server = new S3rver({
  address: '127.0.0.1', port: 0, directory: process.argv[1], silent: true,
  configureBuckets: [{ name: '${BUCKET}' }, { name: 'lipsync-other' }],
});
server.middleware.unshift(async (ctx, next) => {
  await next();
  process.stdout.write(JSON.stringify({ request: ctx.method + ' ' + ctx.url, status: ctx.status }) + '\\n');
});
server.run().then(
  (a) => process.stdout.write(JSON.stringify({ port: a.port }) + '\\n'),
  (e) => { console.error(e); process.exit(1); },
);
`;

interface Served {
  readonly request: string;
  readonly status: number;
}

let dir: string;
let server: ChildProcess;
let endpoint: string;
const served: Served[] = [];
const clock = new TestClock();
let store: S3BlobStore;

function options(extra: Partial<S3BlobStoreOptions> = {}): S3BlobStoreOptions {
  return {
    endpoint,
    region: 'us-east-1',
    bucket: BUCKET,
    accessKeyId: ACCESS_KEY_ID,
    secretAccessKey: SECRET_ACCESS_KEY,
    forcePathStyle: true,
    now: clock.now,
    ...extra,
  };
}

/** The requests the server has answered since `from`, once `done` holds (its log arrives by pipe). */
async function requestsSince(from: number, done: (rs: Served[]) => boolean): Promise<Served[]> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const rs = served.slice(from);
    if (done(rs) || Date.now() > deadline) return rs;
    await new Promise((r) => setTimeout(r, 20));
  }
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'lipsync-s3-'));
  server = spawn(process.execPath, ['--openssl-legacy-provider', '-e', SERVER, join(dir, 'server')], {
    cwd: repoRoot,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<number>((resolve, reject) => {
    server.once('exit', (code) => reject(new Error(`s3rver exited with ${code}`)));
    createInterface({ input: server.stdout! }).on('line', (line) => {
      const msg = JSON.parse(line) as { port?: number } & Partial<Served>;
      if (msg.port !== undefined) resolve(msg.port);
      else if (msg.request !== undefined) served.push({ request: msg.request, status: msg.status ?? 0 });
    });
  });
  endpoint = `http://127.0.0.1:${port}`;
  store = await S3BlobStore.create(options());
  await store.checkBucket();
});

after(async () => {
  server?.kill();
  await rm(dir, { recursive: true, force: true });
});

blobStoreContract('s3', () => ({ store, clock }));

describe('S3 store', () => {
  test('a presigned URL is served by the bucket: body, type and download name', async () => {
    await store.put('s3/clip.txt', Readable.from([Buffer.from('presigned body')]), {
      contentType: 'text/plain',
    });
    const name = 'Résumé "final" (1).txt';
    const url = await store.signedUrl('s3/clip.txt', { fileName: name });
    assert.ok(url.startsWith(`${endpoint}/${BUCKET}/s3/clip.txt?`), url);
    const u = new URL(url);
    assert.equal(u.searchParams.get('X-Amz-Expires'), String(7 * 24 * 3600), 'seven days by default');
    const res = await fetch(url);
    assert.equal(res.status, 200);
    assert.equal(await res.text(), 'presigned body');
    assert.equal(res.headers.get('content-type'), 'text/plain');
    assert.equal(res.headers.get('content-disposition'), contentDisposition(name));

    const plain = await fetch(await store.signedUrl('s3/clip.txt'));
    assert.equal(plain.status, 200);
    assert.equal(plain.headers.get('content-disposition'), null);
  });

  test('range reads: open() and a Range request on the presigned URL', async () => {
    const bytes = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    await store.put('s3/range.bin', Readable.from([bytes]), { contentType: 'application/octet-stream' });
    const part = await readAll(await store.open('s3/range.bin', { start: 10, end: 19 }));
    assert.deepEqual([...part], [10, 11, 12, 13, 14, 15, 16, 17, 18, 19]);
    const res = await fetch(await store.signedUrl('s3/range.bin'), { headers: { range: 'bytes=250-' } });
    assert.equal(res.status, 206);
    assert.equal(res.headers.get('content-range'), 'bytes 250-255/256');
    assert.deepEqual([...Buffer.from(await res.arrayBuffer())], [250, 251, 252, 253, 254, 255]);
  });

  test('an expired URL is refused by the bucket and reported expired by keyFromUrl', async () => {
    await store.put('s3/short.txt', Readable.from([Buffer.from('short')]), { contentType: 'text/plain' });
    const url = await store.signedUrl('s3/short.txt', { expiresInSeconds: 2 });
    const signedAt = Date.now();
    assert.equal((await fetch(url)).status, 200);
    assert.deepEqual(store.keyFromUrl(url), { status: 'valid', key: 's3/short.txt' });
    // X-Amz-Date has whole seconds: the URL is surely past its validity 3 s after signing.
    await new Promise((r) => setTimeout(r, Math.max(0, signedAt + 3200 - Date.now())));
    const res = await fetch(url);
    assert.equal(res.status, 403);
    assert.match(await res.text(), /Request has expired/);
    assert.deepEqual(store.keyFromUrl(url), { status: 'expired', key: 's3/short.txt' });
  });

  test('validity is limited to S3’s seven days', async () => {
    await assert.rejects(store.signedUrl('s3/clip.txt', { expiresInSeconds: 7 * 24 * 3600 + 1 }), RangeError);
  });

  test('keyFromUrl: other credentials, buckets and endpoints', async () => {
    const ours = await store.signedUrl('s3/clip.txt');
    const otherKeys = await S3BlobStore.create(options({ secretAccessKey: 'another-secret' }));
    assert.deepEqual(otherKeys.keyFromUrl(ours), { status: 'invalid', key: 's3/clip.txt' });
    const otherBucket = await S3BlobStore.create(options({ bucket: 'lipsync-other' }));
    assert.deepEqual(otherBucket.keyFromUrl(ours), { status: 'foreign' });
    assert.deepEqual(store.keyFromUrl(await otherBucket.signedUrl('s3/clip.txt')), { status: 'foreign' });
    // The local store's URLs are foreign here, and ours there.
    const local = new UrlSigner('unit-test-secret-0123456789abcdef0123', endpoint);
    assert.deepEqual(store.keyFromUrl(local.sign('s3/clip.txt')), { status: 'foreign' });
    assert.deepEqual(local.keyOf(ours), { status: 'foreign' });

    // Virtual-hosted URLs (<bucket>.<host>), as AWS and most servers use: learnt from the SDK.
    const vhost = await S3BlobStore.create(
      options({ endpoint: endpoint.replace('127.0.0.1', 'localhost'), forcePathStyle: false }),
    );
    const vurl = await vhost.signedUrl('s3/clip.txt', { fileName: 'a.txt' });
    assert.ok(vurl.startsWith(`http://${BUCKET}.localhost:`), vurl);
    assert.deepEqual(vhost.keyFromUrl(vurl), { status: 'valid', key: 's3/clip.txt' });
    assert.deepEqual(vhost.keyFromUrl(ours), { status: 'foreign' });
    assert.deepEqual(store.keyFromUrl(vurl), { status: 'foreign' });

    // AWS itself (no endpoint), where the SDK picks the host from the region.
    const aws = await S3BlobStore.create(
      options({ endpoint: null, region: 'eu-west-3', forcePathStyle: false }),
    );
    const awsUrl = await aws.signedUrl('s3/clip.txt');
    assert.match(awsUrl, /^https:\/\/lipsync-test\.s3\.eu-west-3\.amazonaws\.com\/s3\/clip\.txt\?/);
    assert.deepEqual(aws.keyFromUrl(awsUrl), { status: 'valid', key: 's3/clip.txt' });
    assert.equal(aws.keyFromUrl(awsUrl.replace('eu-west-3', 'eu-west-1')).status, 'foreign');
  });

  test('list pages through ListObjectsV2 continuation tokens', async () => {
    const paged = await S3BlobStore.create(options({ listPageSize: 3 }));
    const keys = Array.from({ length: 8 }, (_, i) => `s3/paged/k${i}.txt`);
    for (const k of keys) await paged.put(k, Readable.from([Buffer.from(k)]), { contentType: 'text/plain' });
    const from = served.length;
    assert.deepEqual(await paged.list('s3/paged/'), keys);
    const lists = await requestsSince(
      from,
      (rs) => rs.filter((r) => r.request.includes('list-type=2')).length >= 3,
    );
    const listRequests = lists.filter((r) => r.request.includes('list-type=2'));
    assert.equal(listRequests.length, 3, 'pages of 3, 3 and 2 keys');
    assert.equal(listRequests.filter((r) => r.request.includes('continuation-token=')).length, 2);
  });

  test('a large putFile is a multipart upload, read back intact', async () => {
    const path = join(dir, 'large.bin');
    const data = randomBytes(20 * 1024 * 1024 + 12345); // three 8 MiB parts, the last one short
    await writeFile(path, data);
    const from = served.length;
    const st = await store.putFile('s3/large.bin', path, { contentType: 'video/mp4', move: true });
    assert.equal(st.size, data.length);
    assert.equal(st.contentType, 'video/mp4');
    await assert.rejects(readFile(path), { code: 'ENOENT' });
    const rs = await requestsSince(from, (r) => r.some((x) => /^POST .*uploadId=/.test(x.request)));
    assert.ok(
      rs.some((r) => /^POST \/lipsync-test\/s3\/large\.bin\?uploads/.test(r.request)),
      'started',
    );
    assert.equal(
      rs.filter((r) => /^PUT \/lipsync-test\/s3\/large\.bin\?.*partNumber=/.test(r.request)).length,
      3,
    );
    assert.ok(
      rs.some((r) => /^POST .*uploadId=/.test(r.request) && r.status === 200),
      'completed',
    );
    assert.ok(!rs.some((r) => /^PUT \/lipsync-test\/s3\/large\.bin(\?x-id=PutObject)?$/.test(r.request)));

    const back = join(dir, 'large.back');
    await store.download('s3/large.bin', back);
    const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
    assert.equal(sha(await readFile(back)), sha(data));
    const tail = await readAll(
      await store.open('s3/large.bin', { start: data.length - 5, end: data.length - 1 }),
    );
    assert.deepEqual(tail, data.subarray(data.length - 5));
  });

  test('a small put is one PutObject, no multipart upload', async () => {
    const from = served.length;
    await store.put('s3/small.txt', Readable.from([Buffer.from('small')]), { contentType: 'text/plain' });
    const rs = await requestsSince(from, (r) => r.some((x) => x.request.startsWith('HEAD')));
    assert.ok(rs.some((r) => r.request.startsWith('PUT /lipsync-test/s3/small.txt') && r.status === 200));
    assert.ok(!rs.some((r) => r.request.includes('uploads')));
  });
});

describe('S3 store at start', () => {
  const storage = () =>
    ({
      kind: 's3',
      endpoint,
      region: 'us-east-1',
      bucket: BUCKET,
      accessKeyId: ACCESS_KEY_ID,
      secretAccessKey: SECRET_ACCESS_KEY,
      forcePathStyle: true,
    }) as const;

  test('a missing bucket, unknown credentials or an unreachable endpoint fail with what to fix', async () => {
    const signer = new UrlSigner('unit-test-secret-0123456789abcdef0123', 'http://h:1');
    await assert.rejects(openBlobStore({ ...storage(), bucket: 'no-such-bucket' }, dir, signer), {
      message: `S3 bucket "no-such-bucket" at ${endpoint} does not exist: create it first (the service never creates buckets)`,
    });
    await assert.rejects(openBlobStore({ ...storage(), accessKeyId: 'NOT-A-KEY' }, dir, signer), {
      message: /^S3 bucket "lipsync-test" at .*: access denied; check LIPSYNC_S3_ACCESS_KEY_ID/,
    });
    await assert.rejects(openBlobStore({ ...storage(), endpoint: 'http://127.0.0.1:1' }, dir, signer), {
      message: /^S3 bucket "lipsync-test" at http:\/\/127\.0\.0\.1:1 could not be reached/,
    });
  });

  test('LIPSYNC_STORAGE=s3 makes the service container use the bucket', async () => {
    const dataDir = join(dir, 'data');
    const env = {
      LIPSYNC_DATA_DIR: dataDir,
      LIPSYNC_STORAGE: 's3',
      LIPSYNC_S3_ENDPOINT: endpoint,
      LIPSYNC_S3_BUCKET: BUCKET,
      LIPSYNC_S3_ACCESS_KEY_ID: ACCESS_KEY_ID,
      LIPSYNC_S3_SECRET_ACCESS_KEY: SECRET_ACCESS_KEY,
      LIPSYNC_S3_FORCE_PATH_STYLE: 'true',
    };
    const services = await createServices(loadConfig(env), pino({ level: 'silent' }));
    try {
      assert.ok(services.blobs instanceof S3BlobStore);
      await services.blobs.put('s3/container.txt', Readable.from([Buffer.from('via container')]), {
        contentType: 'text/plain',
      });
      assert.equal((await store.stat('s3/container.txt'))?.size, 'via container'.length);
    } finally {
      await services.close();
    }
    await assert.rejects(
      createServices(loadConfig({ ...env, LIPSYNC_S3_BUCKET: 'no-such-bucket' }), pino({ level: 'silent' })),
      /S3 bucket "no-such-bucket" .* does not exist/,
    );
  });
});
