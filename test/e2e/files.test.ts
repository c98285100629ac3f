// Signed file URLs against a real listening server: uploads over HTTP, downloads without an API key,
// byte ranges, HEAD, tampered and expired URLs, and an early refusal of an upload over the plan limit.
// Always on local storage, whatever TEST_STORAGE says: /v2/files/ is the local store's own route (the
// S3 store's presigned URLs are served by the bucket; test/integration/storage-s3.test.ts).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { readFile } from 'node:fs/promises';
import {
  createOrgWithKey,
  createTestServices,
  fixture,
  freePort,
  type TestOrg,
  type TestServices,
} from '../helpers/index.js';
import { encodeForm, streamedZeroFileForm } from '../helpers/multipart.js';
import { UrlSigner } from '../../src/storage/url-signer.js';

describe(`signed file URLs over HTTP (${process.env.TEST_DATABASE ?? 'sqlite'})`, () => {
  let t: TestServices;
  let org: TestOrg;
  let base: string;
  let video: Buffer;
  let asset: { id: string; url: string; size: number };

  before(async () => {
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    t = await createTestServices({
      env: { PORT: String(port), LIPSYNC_PUBLIC_URL: base, LIPSYNC_RATE_LIMIT_ENABLED: 'false' },
    });
    await t.app.listen({ port, host: '127.0.0.1' });
    org = await createOrgWithKey(t.services);
    video = await readFile(fixture('media/face_1.mp4'));
    const { payload, headers } = await encodeForm([{ name: 'file', file: fixture('media/face_1.mp4') }]);
    const res = await fetch(`${base}/v2/assets/upload`, {
      method: 'POST',
      headers: { ...org.owner.headers, ...headers },
      body: payload,
    });
    assert.equal(res.status, 201, await res.clone().text());
    asset = (await res.json()) as typeof asset;
  });
  after(() => t.cleanup());

  const errorCode = async (res: Response) => ((await res.json()) as { errorCode?: string }).errorCode;
  const keyOf = (url: string) => new URL(url).pathname.replace(/^\/v2\/files\//, '');

  test('the URL of an asset downloads its exact bytes without an API key', async () => {
    assert.ok(asset.url.startsWith(`${base}/v2/files/`));
    const res = await fetch(asset.url);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-type'), 'video/mp4');
    assert.equal(res.headers.get('content-length'), String(video.length));
    assert.equal(res.headers.get('accept-ranges'), 'bytes');
    assert.equal(res.headers.get('content-disposition'), null);
    assert.ok(Buffer.from(await res.arrayBuffer()).equals(video));
  });

  test('HEAD gives the headers and no body', async () => {
    const res = await fetch(asset.url, { method: 'HEAD' });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('content-length'), String(video.length));
    assert.equal(res.headers.get('content-type'), 'video/mp4');
    assert.equal((await res.arrayBuffer()).byteLength, 0);
  });

  test('single byte ranges are 206 with Content-Range', async () => {
    const cases: [string, number, number][] = [
      ['bytes=0-99', 0, 99],
      ['bytes=1000-', 1000, video.length - 1],
      ['bytes=-10', video.length - 10, video.length - 1],
      [`bytes=5-${video.length + 100}`, 5, video.length - 1],
    ];
    for (const [range, start, end] of cases) {
      const res = await fetch(asset.url, { headers: { range } });
      assert.equal(res.status, 206, range);
      assert.equal(res.headers.get('content-range'), `bytes ${start}-${end}/${video.length}`);
      assert.equal(res.headers.get('content-length'), String(end - start + 1));
      assert.ok(Buffer.from(await res.arrayBuffer()).equals(video.subarray(start, end + 1)), range);
    }
    const head = await fetch(asset.url, { method: 'HEAD', headers: { range: 'bytes=0-9' } });
    assert.equal(head.status, 206);
    assert.equal(head.headers.get('content-length'), '10');
  });

  test('a range outside the file is 416 with Content-Range: bytes */size', async () => {
    const res = await fetch(asset.url, { headers: { range: `bytes=${video.length}-` } });
    assert.equal(res.status, 416);
    assert.equal(res.headers.get('content-range'), `bytes */${video.length}`);
    assert.equal(await errorCode(res), 'range_not_satisfiable');
  });

  test('tampered, incomplete or misplaced signatures are 403 url_signature_invalid', async () => {
    const u = new URL(asset.url);
    const sig = u.searchParams.get('sig')!;
    const variants: string[] = [];
    const flip = new URL(u);
    flip.searchParams.set('sig', (sig[0] === '0' ? '1' : '0') + sig.slice(1));
    variants.push(flip.toString());
    const later = new URL(u);
    later.searchParams.set('expires', String(Number(u.searchParams.get('expires')) + 3600));
    variants.push(later.toString());
    const noSig = new URL(u);
    noSig.searchParams.delete('sig');
    variants.push(noSig.toString());
    const named = new URL(u);
    named.searchParams.set('name', 'renamed.mp4');
    variants.push(named.toString());
    variants.push(asset.url.replace(/\.mp4\?/, '.mov?'));
    variants.push(`${base}/v2/files/.meta/${keyOf(asset.url)}.json${u.search}`);
    for (const v of variants) {
      const res = await fetch(v);
      assert.equal(res.status, 403, v);
      assert.equal(await errorCode(res), 'url_signature_invalid', v);
    }
  });

  test('an expired URL is 410 url_expired', async () => {
    const secret = t.env.LIPSYNC_SIGNING_SECRET!;
    const past = new UrlSigner(secret, base, () => Date.now() - 3600_000);
    const res = await fetch(past.sign(keyOf(asset.url), { expiresInSeconds: 60 }));
    assert.equal(res.status, 410);
    assert.equal(await errorCode(res), 'url_expired');
  });

  test('a download name gives Content-Disposition; a validly signed missing file is 404', async () => {
    const named = await t.services.blobs.signedUrl(keyOf(asset.url), { fileName: 'Interview é.mp4' });
    const res = await fetch(named);
    assert.equal(res.status, 200);
    assert.equal(
      res.headers.get('content-disposition'),
      `attachment; filename="Interview _.mp4"; filename*=UTF-8''Interview%20%C3%A9.mp4`,
    );
    await res.arrayBuffer();
    const missing = await fetch(await t.services.blobs.signedUrl('assets/nobody/none.mp4'));
    assert.equal(missing.status, 404);
    assert.equal(await errorCode(missing), 'file_not_found');
  });

  test('an upload over the plan limit is refused while it streams, and the connection is closed', async () => {
    const free = await createOrgWithKey(t.services, { plan: 'free' });
    const size = 300 * 1024 * 1024; // three times the free plan's 100 MiB
    const { payload, headers } = streamedZeroFileForm('file', size);
    let sent = 0;
    payload.on('data', (c: Buffer) => (sent += c.length));
    const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = httpRequest(`${base}/v2/assets/upload`, {
        method: 'POST',
        headers: { ...free.owner.headers, ...headers },
      });
      req.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
        res.on('error', reject);
      });
      req.on('error', (err) => reject(err));
      payload.pipe(req);
    });
    payload.destroy();
    assert.equal(status, 422, body);
    assert.equal(JSON.parse(body).errorCode, 'file_size_exceeds_plan_limit');
    assert.ok(sent < size, `the server answered before the whole body was sent (${sent} of ${size})`);
  });
});
