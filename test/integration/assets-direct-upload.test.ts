// Direct uploads: POST /v2/assets/upload (JSON) → PUT to the signed upload URL → POST /v2/assets, then
// the asset in a generation; on the local store (our own PUT route, over real HTTP) and on S3 (s3rver,
// presigned PUT). Refusals: a body larger or smaller than announced, the wrong type, expired and
// forged URLs, URLs that are not this organization's upload; plan limits; lookup by SHA-256 (scoped to
// the API key, as the spec says); download. Uploads never registered are swept once their URL expired
// plus the grace period (the clock of a second AssetService on the same store is moved ahead). An
// upload URL is used up by its registration: refused afterwards locally, swept on S3; blobs under the
// upload prefix that no waiting upload owns are swept; open uploads count against an allowance.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { PassThrough, Readable } from 'node:stream';
import { randomUUID } from 'node:crypto';
import {
  createKey,
  createOrgWithKey,
  createTestServices,
  type TestKey,
  type TestOrg,
  type TestServices,
} from '../helpers/index.js';
import { encodeForm } from '../helpers/multipart.js';
import {
  startS3rver,
  S3RVER_ACCESS_KEY_ID,
  S3RVER_SECRET_ACCESS_KEY,
  type S3rver,
} from '../helpers/s3rver.js';
import { startBackground, startHousekeeping, type Background } from '../../src/app/runtime.js';
import { AssetService, UPLOAD_URL_SECONDS } from '../../src/services/assets.js';
import { AppError } from '../../src/domain/errors.js';
import { UrlSigner } from '../../src/storage/url-signer.js';
import { S3BlobStore } from '../../src/storage/s3-blob-store.js';
import {
  LIFECYCLE_ENGINE_ENV,
  fetchSigned,
  makeTestMedia,
  postGenerate,
  waitTerminal,
  type TestMedia,
} from './generations-support.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';
const SIGNING_SECRET = 'test-signing-secret-0123456789abcdef';
const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/**
 * A PUT over real HTTP. With `waitForAnswer` the headers go first and the body only if the server has
 * not answered within 300 ms (a refusal on the headers alone is read, not raced by the body).
 */
function httpPut(
  url: string,
  headers: Record<string, string>,
  chunks: Buffer[],
  waitForAnswer = false,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    let answered = false;
    const req = httpRequest(url, { method: 'PUT', headers }, (res) => {
      answered = true;
      const parts: Buffer[] = [];
      res.on('data', (c: Buffer) => parts.push(c));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(parts).toString() }),
      );
      res.on('error', reject);
    });
    req.on('error', (err) => {
      if (!answered) reject(err);
    });
    const send = () => {
      if (answered) return;
      for (const c of chunks) req.write(c);
      req.end();
    };
    if (waitForAnswer) {
      req.flushHeaders();
      setTimeout(send, 300);
    } else send();
  });
}

function assertError(
  res: { statusCode: number; body: string },
  status: number,
  code: string,
  field?: string,
) {
  assert.equal(res.statusCode, status, res.body);
  const b = JSON.parse(res.body) as Record<string, unknown>;
  assert.equal(b.errorCode, code, res.body);
  if (field !== undefined) assert.equal(b.field, field, res.body);
  return b;
}

/** The service on the same store and blobs, its clock `aheadMs` in the future. */
function assetsAt(t: TestServices, aheadMs: number): AssetService {
  return new AssetService(t.services.store, t.services.blobs, t.services.logger, {
    uploadGraceMs: t.services.config.uploadSweepGraceMs,
    now: () => Date.now() + aheadMs,
  });
}

/** Past the upload URL's expiry plus the grace period (by a minute), and not yet (a minute before). */
const pastGrace = (t: TestServices) =>
  UPLOAD_URL_SECONDS * 1000 + t.services.config.uploadSweepGraceMs + 60_000;
const withinGrace = (t: TestServices) =>
  UPLOAD_URL_SECONDS * 1000 + t.services.config.uploadSweepGraceMs - 60_000;

/** The API calls of a direct upload, through inject. */
function client(t: () => TestServices) {
  const json = (who: TestKey, method: 'POST' | 'GET', url: string, body?: unknown) =>
    t().app.inject({
      method,
      url,
      headers: { ...who.headers, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      payload: body === undefined ? undefined : JSON.stringify(body),
    });
  return {
    presign: (who: TestKey, body: unknown) => json(who, 'POST', '/v2/assets/upload', body),
    async presignOk(who: TestKey, body: { fileName: string; contentType: string; size: number }) {
      const res = await json(who, 'POST', '/v2/assets/upload', body);
      assert.equal(res.statusCode, 201, res.body);
      return res.json() as { uploadUrl: string; url: string; expiresIn: number };
    },
    register: (who: TestKey, body: unknown) => json(who, 'POST', '/v2/assets', body),
    get: (who: TestKey, url: string) => json(who, 'GET', url),
  };
}

describe(`direct uploads, local store (${DB})`, { timeout: 240_000 }, () => {
  let t: TestServices;
  let bg: Background;
  let m: TestMedia;
  let orgA: TestOrg;
  let orgB: TestOrg;
  let free: TestOrg;
  let base: string;
  let video: Buffer;
  let audio: Buffer;
  const api = client(() => t);

  /** The upload URL at the address the test server listens on (the public URL names another port). */
  const here = (url: string) => {
    const u = new URL(url);
    return `${base}${u.pathname}${u.search}`;
  };
  const injectPut = (url: string, contentType: string, payload: Buffer) => {
    const u = new URL(url);
    return t.app.inject({
      method: 'PUT',
      url: `${u.pathname}${u.search}`,
      headers: { 'content-type': contentType },
      payload,
    });
  };
  const keyOf = (url: string) => decodeURIComponent(new URL(url).pathname.replace(/^\/v2\/files\//, ''));

  before(async () => {
    [t, m] = await Promise.all([
      createTestServices({ env: { ...LIFECYCLE_ENGINE_ENV, LIPSYNC_RATE_LIMIT_ENABLED: 'false' } }),
      makeTestMedia(),
    ]);
    orgA = await createOrgWithKey(t.services, { plan: 'enterprise' });
    orgB = await createOrgWithKey(t.services, { plan: 'enterprise' });
    free = await createOrgWithKey(t.services, { plan: 'free' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    [video, audio] = await Promise.all([readFile(m.video), readFile(m.audioShort)]);
    bg = startBackground(t.services);
  });
  after(async () => {
    await bg?.stop();
    await t?.cleanup();
    await m?.cleanup();
  });

  test('presign → PUT over HTTP → register → generate with the assets', async () => {
    const target = await api.presignOk(orgA.owner, {
      fileName: 'face clip.mp4',
      contentType: 'video/mp4',
      size: video.length,
    });
    assert.equal(target.expiresIn, 3600);
    assert.match(
      new URL(target.uploadUrl).pathname,
      new RegExp(`^/v2/files/uploads/${orgA.organization.id}/[0-9a-f-]{36}$`),
    );
    assert.equal(new URL(target.url).pathname, new URL(target.uploadUrl).pathname, 'same object');
    // Before the PUT the object is not there.
    assert.equal((await fetchSigned(t.app, target.url)).statusCode, 404);

    const put = await httpPut(
      here(target.uploadUrl),
      { 'content-type': 'video/mp4', 'content-length': String(video.length) },
      [video.subarray(0, 1000), video.subarray(1000)],
    );
    assert.equal(put.status, 200, put.body);
    const read = await fetch(here(target.url));
    assert.equal(read.status, 200);
    assert.equal(read.headers.get('content-type'), 'video/mp4');
    assert.equal(sha256(Buffer.from(await read.arrayBuffer())), sha256(video));

    const res = await api.register(orgA.owner, { url: target.url, type: 'VIDEO', visibility: 'USER' });
    assert.equal(res.statusCode, 201, res.body);
    const asset = res.json();
    assert.equal(asset.type, 'VIDEO');
    assert.equal(asset.format, 'mp4');
    assert.equal(asset.name, 'face clip.mp4', 'the announced file name');
    assert.equal(asset.size, video.length);
    assert.equal(asset.width, 256);
    assert.equal(asset.inputType, 'UPLOAD');
    assert.equal(asset.visibility, 'USER');
    assert.equal(asset.organizationId, orgA.organization.id);
    // The asset lives under its own key; the upload object is gone, so a later PUT cannot change it.
    assert.match(new URL(asset.url).pathname, new RegExp(`^/v2/files/assets/${orgA.organization.id}/`));
    assert.equal(await t.services.blobs.exists(keyOf(target.url)), false);
    const stored = await fetchSigned(t.app, asset.url);
    assert.equal(sha256(stored.rawPayload), sha256(video));
    // Registered once.
    assertError(
      await api.register(orgA.owner, { url: target.url, type: 'VIDEO' }),
      400,
      'invalid_request',
      'url',
    );

    const audioTarget = await api.presignOk(orgA.owner, {
      fileName: 'voice.wav',
      contentType: 'audio/wav',
      size: audio.length,
    });
    const audioPut = await httpPut(here(audioTarget.uploadUrl), { 'content-type': 'audio/wav' }, [audio]);
    assert.equal(audioPut.status, 200, audioPut.body);
    const audioRes = await api.register(orgA.owner, {
      url: audioTarget.url,
      type: 'AUDIO',
      name: 'My voice',
    });
    assert.equal(audioRes.statusCode, 201, audioRes.body);
    assert.equal(audioRes.json().name, 'My voice');

    const gen = await postGenerate(t.app, orgA.owner.headers, {
      model: 'lipsync-2',
      input: [
        { type: 'video', assetId: asset.id },
        { type: 'audio', assetId: audioRes.json().id },
      ],
    });
    assert.equal(gen.statusCode, 201, gen.body);
    const done = await waitTerminal(t.app, orgA.owner.headers, gen.json().id);
    assert.equal(done.status, 'COMPLETED', JSON.stringify(done));
    const out = await fetchSigned(t.app, done.outputUrl);
    assert.equal(out.statusCode, 200);
    assert.equal(out.rawPayload.subarray(4, 8).toString('latin1'), 'ftyp');
  });

  test('a body larger than announced is cut off and refused; nothing is kept', async () => {
    const size = 1000;
    const target = await api.presignOk(orgA.owner, { fileName: 'x.bin', contentType: 'video/mp4', size });
    const key = keyOf(target.uploadUrl);
    // Announced by Content-Length: refused on the headers, the body is never read.
    const byLength = await httpPut(
      here(target.uploadUrl),
      { 'content-type': 'video/mp4', 'content-length': String(size + 1) },
      [Buffer.alloc(size + 1)],
      true,
    );
    assert.equal(byLength.status, 413, byLength.body);
    assert.equal(JSON.parse(byLength.body).errorCode, 'payload_too_large');
    assert.equal(byLength.headers.connection, 'close');
    // Chunked (no length given): cut off once the count passes the announced size.
    const chunked = await httpPut(here(target.uploadUrl), { 'content-type': 'video/mp4' }, [
      Buffer.alloc(600),
      Buffer.alloc(401),
    ]);
    assert.equal(chunked.status, 413, chunked.body);
    assert.equal(await t.services.blobs.exists(key), false);
    // Shorter than announced is refused too.
    const short = await httpPut(here(target.uploadUrl), { 'content-type': 'video/mp4' }, [Buffer.alloc(999)]);
    assert.equal(short.status, 400, short.body);
    assert.equal(await t.services.blobs.exists(key), false);
    assertError(
      await api.register(orgA.owner, { url: target.url, type: 'VIDEO' }),
      400,
      'invalid_request',
      'url',
    );
  });

  test('upload URLs: the announced content type, expiry, and signatures distinct from downloads', async () => {
    const target = await api.presignOk(orgA.owner, {
      fileName: 'v.mp4',
      contentType: 'video/mp4',
      size: video.length,
    });
    assertError(await injectPut(target.uploadUrl, 'audio/wav', video), 400, 'invalid_request');
    // The download URL of the same key cannot write, the upload URL cannot read, a changed size fails.
    assertError(await injectPut(target.url, 'video/mp4', video), 403, 'url_signature_invalid');
    assertError(await fetchSigned(t.app, target.uploadUrl), 403, 'url_signature_invalid');
    const bigger = new URL(target.uploadUrl);
    bigger.searchParams.set('size', String(video.length + 1));
    assertError(
      await injectPut(bigger.href, 'video/mp4', Buffer.alloc(video.length + 1)),
      403,
      'url_signature_invalid',
    );
    // An upload URL signed two hours ago for one hour.
    const past = new UrlSigner(SIGNING_SECRET, t.services.config.publicUrl, () => Date.now() - 2 * 3600_000);
    const expired = past.signUpload(keyOf(target.uploadUrl), {
      contentType: 'video/mp4',
      size: video.length,
      expiresInSeconds: 3600,
    });
    assertError(await injectPut(expired, 'video/mp4', video), 410, 'url_expired');
    assert.equal(await t.services.blobs.exists(keyOf(target.uploadUrl)), false);
    // The genuine URL still works.
    assert.equal((await injectPut(target.uploadUrl, 'video/mp4', video)).statusCode, 200);
  });

  test('registration takes only this organization’s pending uploads, with the right content', async () => {
    const register = (who: TestKey, body: unknown) => api.register(who, body);
    assertError(
      await register(orgA.owner, { url: 'https://example.com/clip.mp4', type: 'VIDEO' }),
      400,
      'invalid_request',
      'url',
    );
    assertError(
      await register(orgA.owner, { url: 'not a url', type: 'VIDEO' }),
      400,
      'invalid_request',
      'url',
    );

    const target = await api.presignOk(orgA.owner, {
      fileName: 'v.mp4',
      contentType: 'video/mp4',
      size: video.length,
    });
    // Nothing uploaded yet.
    assertError(
      await register(orgA.owner, { url: target.url, type: 'VIDEO' }),
      400,
      'invalid_request',
      'url',
    );
    assert.equal((await injectPut(target.uploadUrl, 'video/mp4', video)).statusCode, 200);
    // Another organization cannot register it, and a forged signature is refused.
    assertError(
      await register(orgB.owner, { url: target.url, type: 'VIDEO' }),
      400,
      'invalid_request',
      'url',
    );
    const forged = new URL(target.url);
    forged.searchParams.set('sig', '0'.repeat(64));
    assertError(
      await register(orgA.owner, { url: forged.href, type: 'VIDEO' }),
      400,
      'invalid_request',
      'url',
    );
    // A signed URL of an asset (not an upload) is not registrable either.
    const form = await encodeForm([{ name: 'file', file: m.image }]);
    const uploaded = await t.app.inject({
      method: 'POST',
      url: '/v2/assets/upload',
      headers: { ...orgA.owner.headers, ...form.headers },
      payload: form.payload,
    });
    assert.equal(uploaded.statusCode, 201, uploaded.body);
    assertError(
      await register(orgA.owner, { url: uploaded.json().url, type: 'IMAGE' }),
      400,
      'invalid_request',
      'url',
    );
    // Schema: type is required and one of the three.
    assertError(await register(orgA.owner, { url: target.url }), 400, 'invalid_request');
    assertError(await register(orgA.owner, { url: target.url, type: 'TEXT' }), 400, 'invalid_request');
    // The declared type must be what the file is: refused and removed.
    assertError(
      await register(orgA.owner, { url: target.url, type: 'AUDIO' }),
      422,
      'asset_type_unsupported',
      'type',
    );
    assert.equal(await t.services.blobs.exists(keyOf(target.url)), false);

    // Bytes that are no media: refused, nothing kept.
    const junk = Buffer.from('this is not a media file at all\n'.repeat(10));
    const junkTarget = await api.presignOk(orgA.owner, {
      fileName: 'j.mp4',
      contentType: 'video/mp4',
      size: junk.length,
    });
    assert.equal((await injectPut(junkTarget.uploadUrl, 'video/mp4', junk)).statusCode, 200);
    assertError(
      await register(orgA.owner, { url: junkTarget.url, type: 'VIDEO' }),
      422,
      'asset_type_unsupported',
    );
    assert.equal(await t.services.blobs.exists(keyOf(junkTarget.url)), false);
    // An unknown project.
    const p = await api.presignOk(orgA.owner, {
      fileName: 'v.mp4',
      contentType: 'video/mp4',
      size: video.length,
    });
    assertError(
      await register(orgA.owner, {
        url: p.url,
        type: 'VIDEO',
        projectId: '00000000-0000-4000-8000-000000000000',
      }),
      404,
      'project_not_found',
    );
  });

  test('presign: body checks and the plan’s file size', async () => {
    assertError(
      await api.presign(orgA.owner, { contentType: 'video/mp4', size: 10 }),
      400,
      'invalid_request',
    );
    assertError(
      await api.presign(orgA.owner, { fileName: 'a', contentType: 'video/mp4', size: '10' }),
      400,
      'invalid_request',
    );
    assertError(
      await api.presign(orgA.owner, { fileName: 'a', contentType: 'video/mp4', size: 0 }),
      400,
      'invalid_request',
    );
    assertError(
      await api.presign(orgA.owner, { fileName: 'a', contentType: 'not a type', size: 10 }),
      400,
      'invalid_request',
      'contentType',
    );
    assertError(
      await api.presign(orgA.owner, { fileName: 'a', contentType: 'video/mp4', size: 5 * 1024 ** 3 + 1 }),
      400,
      'invalid_request',
      'size',
    );
    // free: 100 MiB.
    assertError(
      await api.presign(free.owner, {
        fileName: 'a.mp4',
        contentType: 'video/mp4',
        size: 100 * 1024 ** 2 + 1,
      }),
      422,
      'file_size_exceeds_plan_limit',
      'size',
    );
    assert.equal(
      (await api.presign(free.owner, { fileName: 'a.mp4', contentType: 'video/mp4', size: 100 * 1024 ** 2 }))
        .statusCode,
      201,
    );
    const text = await t.app.inject({
      method: 'POST',
      url: '/v2/assets/upload',
      headers: { ...orgA.owner.headers, 'content-type': 'text/plain' },
      payload: 'hello',
    });
    assertError(text, 415, 'unsupported_media_type');
    const anonymous = await t.app.inject({
      method: 'POST',
      url: '/v2/assets/upload',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ fileName: 'a', contentType: 'video/mp4', size: 10 }),
    });
    assert.equal(anonymous.statusCode, 401);
  });

  test('GET /v2/assets/uploaded finds what this API key stored by SHA-256; download gives a signed URL', async () => {
    const image = await readFile(m.image);
    const target = await api.presignOk(orgA.owner, {
      fileName: 'face.png',
      contentType: 'image/png',
      size: image.length,
    });
    assert.equal((await injectPut(target.uploadUrl, 'image/png', image)).statusCode, 200);
    const reg = await api.register(orgA.owner, { url: target.url, type: 'IMAGE' });
    assert.equal(reg.statusCode, 201, reg.body);
    const id = reg.json().id;
    const digest = sha256(image);

    const found = await api.get(
      orgA.owner,
      `/v2/assets/uploaded?contentSha256=${digest.toUpperCase()}&type=IMAGE`,
    );
    assert.equal(found.statusCode, 200, found.body);
    assert.equal(found.json().asset.id, id, 'the newest asset with that content');
    assert.ok(found.json().asset.url);
    assert.equal(
      (await api.get(orgA.owner, `/v2/assets/uploaded?contentSha256=${digest}`)).json().asset.id,
      id,
    );
    assert.deepEqual(
      (await api.get(orgA.owner, `/v2/assets/uploaded?contentSha256=${digest}&type=VIDEO`)).json(),
      {
        asset: null,
      },
    );
    assert.deepEqual((await api.get(orgB.owner, `/v2/assets/uploaded?contentSha256=${digest}`)).json(), {
      asset: null,
    });
    // The spec scopes the lookup to the API key that stored the asset: another key of the same
    // organization does not find it, and finds its own copy once it stored one.
    const second = await createKey(t.services, orgA.organization.id, { name: 'second key' });
    assert.deepEqual((await api.get(second, `/v2/assets/uploaded?contentSha256=${digest}`)).json(), {
      asset: null,
    });
    const secondTarget = await api.presignOk(second, {
      fileName: 'again.png',
      contentType: 'image/png',
      size: image.length,
    });
    assert.equal((await injectPut(secondTarget.uploadUrl, 'image/png', image)).statusCode, 200);
    const secondReg = await api.register(second, { url: secondTarget.url, type: 'IMAGE' });
    assert.equal(secondReg.statusCode, 201, secondReg.body);
    assert.equal(
      (await api.get(second, `/v2/assets/uploaded?contentSha256=${digest}`)).json().asset.id,
      secondReg.json().id,
    );
    assert.equal(
      (await api.get(orgA.owner, `/v2/assets/uploaded?contentSha256=${digest}`)).json().asset.id,
      id,
      'each key finds what it stored, not the newest of the organization',
    );
    assertError(await api.get(orgA.owner, '/v2/assets/uploaded?contentSha256=abc'), 400, 'invalid_request');
    // Multipart uploads are hashed too.
    const form = await encodeForm([{ name: 'file', file: m.audioLong }]);
    const multi = await t.app.inject({
      method: 'POST',
      url: '/v2/assets/upload',
      headers: { ...orgB.owner.headers, ...form.headers },
      payload: form.payload,
    });
    assert.equal(multi.statusCode, 201, multi.body);
    const audioDigest = sha256(await readFile(m.audioLong));
    assert.equal(
      (await api.get(orgB.owner, `/v2/assets/uploaded?contentSha256=${audioDigest}&type=AUDIO`)).json().asset
        .id,
      multi.json().id,
    );

    const dl = await api.get(orgA.owner, `/v2/assets/${id}/download`);
    assert.equal(dl.statusCode, 200, dl.body);
    assert.match(String(dl.headers['content-type']), /^text\/plain/);
    assert.match(dl.body, /^http:\/\/[^"]+\/v2\/files\/assets\//, 'a bare URL, not JSON');
    const file = await fetchSigned(t.app, dl.body);
    assert.equal(file.statusCode, 200);
    assert.equal(sha256(file.rawPayload), digest);
    assert.match(String(file.headers['content-disposition']), /attachment; filename="face\.png"/);
    assertError(await api.get(orgB.owner, `/v2/assets/${id}/download`), 404, 'asset_not_found');
  });

  test('uploads never registered are swept after their URL expired plus the grace period; assets stay', async () => {
    const image = await readFile(m.image);
    // Registered: an asset, whatever the sweep does.
    const kept = await api.presignOk(orgA.owner, {
      fileName: 'kept.png',
      contentType: 'image/png',
      size: image.length,
    });
    assert.equal((await injectPut(kept.uploadUrl, 'image/png', image)).statusCode, 200);
    const asset = (await api.register(orgA.owner, { url: kept.url, type: 'IMAGE' })).json();
    // Abandoned: uploaded and never registered; announced and never uploaded.
    const left = await api.presignOk(orgA.owner, {
      fileName: 'left.mp4',
      contentType: 'video/mp4',
      size: video.length,
    });
    assert.equal((await injectPut(left.uploadUrl, 'video/mp4', video)).statusCode, 200);
    const unsent = await api.presignOk(orgB.owner, {
      fileName: 'unsent.wav',
      contentType: 'audio/wav',
      size: audio.length,
    });
    const leftKey = keyOf(left.url);
    const unsentKey = keyOf(unsent.url);
    assert.ok(await t.services.blobs.exists(leftKey));

    // Until the grace period has passed, nothing of theirs goes.
    await assetsAt(t, withinGrace(t)).sweepAbandonedUploads();
    assert.ok(await t.services.blobs.exists(leftKey));
    assert.ok(await t.services.store.assets.findUpload(orgA.organization.id, leftKey));
    assert.ok(await t.services.store.assets.findUpload(orgB.organization.id, unsentKey));

    const later = assetsAt(t, pastGrace(t));
    // An upload URL announced by then is not due itself.
    const fresh = await later.presignUpload({
      organization: orgA.organization,
      keyId: orgA.owner.record.id,
      fileName: 'fresh.mp4',
      contentType: 'video/mp4',
      size: 10,
    });
    assert.ok((await later.sweepAbandonedUploads()) >= 2);
    assert.equal(await t.services.blobs.exists(leftKey), false, 'the stored bytes are removed');
    assert.equal(await t.services.store.assets.findUpload(orgA.organization.id, leftKey), null);
    assert.equal(await t.services.store.assets.findUpload(orgB.organization.id, unsentKey), null);
    assert.ok(await t.services.store.assets.findUpload(orgA.organization.id, keyOf(fresh.url)));
    // The asset and its file are untouched; the swept upload can no longer be registered.
    const still = await api.get(orgA.owner, `/v2/assets/${asset.id}`);
    assert.equal(still.statusCode, 200, still.body);
    assert.equal(sha256((await fetchSigned(t.app, still.json().url)).rawPayload), sha256(image));
    assertError(
      await api.register(orgA.owner, { url: left.url, type: 'VIDEO' }),
      400,
      'invalid_request',
      'url',
    );
  });

  test('a registration past the grace period is refused and removes the upload, swept or not', async () => {
    const target = await api.presignOk(orgA.owner, {
      fileName: 'late.mp4',
      contentType: 'video/mp4',
      size: video.length,
    });
    assert.equal((await injectPut(target.uploadUrl, 'video/mp4', video)).statusCode, 200);
    const key = keyOf(target.url);
    const register = (svc: AssetService) =>
      svc.register({
        organization: orgA.organization,
        keyId: orgA.owner.record.id,
        url: target.url,
        type: 'VIDEO',
        tmpDir: t.services.config.tempDir,
      });
    await assert.rejects(register(assetsAt(t, pastGrace(t))), (err: unknown) => {
      assert.ok(err instanceof AppError);
      assert.equal(err.code, 'invalid_request');
      assert.match(err.message, /not registered in time/);
      return true;
    });
    assert.equal(await t.services.blobs.exists(key), false);
    assert.equal(await t.services.store.assets.findUpload(orgA.organization.id, key), null);
  });

  test('a late registration whose blob cannot be removed is still a 400; the sweep removes it later', async () => {
    const target = await api.presignOk(orgA.owner, {
      fileName: 'late-broken.mp4',
      contentType: 'video/mp4',
      size: video.length,
    });
    assert.equal((await injectPut(target.uploadUrl, 'video/mp4', video)).statusCode, 200);
    const key = keyOf(target.url);
    // The real store, but its deletions fail (storage down).
    const real = t.services.blobs;
    const broken = new Proxy(real, {
      get: (target_, prop) =>
        prop === 'delete'
          ? () => Promise.reject(new Error('storage unavailable'))
          : (Reflect.get(target_, prop) as (...a: unknown[]) => unknown).bind(real),
    });
    const late = new AssetService(t.services.store, broken, t.services.logger, {
      uploadGraceMs: t.services.config.uploadSweepGraceMs,
      now: () => Date.now() + pastGrace(t),
    });
    await assert.rejects(
      late.register({
        organization: orgA.organization,
        keyId: orgA.owner.record.id,
        url: target.url,
        type: 'VIDEO',
        tmpDir: t.services.config.tempDir,
      }),
      (err: unknown) => {
        assert.ok(err instanceof AppError);
        assert.equal(err.code, 'invalid_request');
        assert.match(err.message, /not registered in time/);
        return true;
      },
    );
    assert.ok(await t.services.store.assets.findUpload(orgA.organization.id, key), 'left to the sweep');
    await assetsAt(t, pastGrace(t)).sweepAbandonedUploads();
    assert.equal(await t.services.blobs.exists(key), false);
    assert.equal(await t.services.store.assets.findUpload(orgA.organization.id, key), null);
  });

  test('an upload URL is used up by its registration or refusal: a later PUT is 409, nothing kept', async () => {
    const image = await readFile(m.image);
    const target = await api.presignOk(orgA.owner, {
      fileName: 'once.png',
      contentType: 'image/png',
      size: image.length,
    });
    const key = keyOf(target.uploadUrl);
    // Before registration a PUT may be repeated (a retry replaces the bytes).
    for (let i = 0; i < 2; i++)
      assert.equal(
        (await httpPut(here(target.uploadUrl), { 'content-type': 'image/png' }, [image])).status,
        200,
      );
    assert.equal((await api.register(orgA.owner, { url: target.url, type: 'IMAGE' })).statusCode, 201);
    const again = await httpPut(here(target.uploadUrl), { 'content-type': 'image/png' }, [image]);
    assert.equal(again.status, 409, again.body);
    assert.equal(JSON.parse(again.body).errorCode, 'upload_url_used');
    assert.equal(await t.services.blobs.exists(key), false);

    // Refused at registration (not media): used up too.
    const junk = Buffer.from('not media\n'.repeat(20));
    const refused = await api.presignOk(orgA.owner, {
      fileName: 'junk.png',
      contentType: 'image/png',
      size: junk.length,
    });
    assert.equal((await injectPut(refused.uploadUrl, 'image/png', junk)).statusCode, 200);
    assertError(
      await api.register(orgA.owner, { url: refused.url, type: 'IMAGE' }),
      422,
      'asset_type_unsupported',
    );
    assertError(await injectPut(refused.uploadUrl, 'image/png', junk), 409, 'upload_url_used');
    assert.equal(await t.services.blobs.exists(keyOf(refused.uploadUrl)), false);
  });

  test('a PUT still streaming when its upload is registered keeps nothing', async () => {
    const image = await readFile(m.image);
    const target = await api.presignOk(orgA.owner, {
      fileName: 'race.png',
      contentType: 'image/png',
      size: image.length,
    });
    const key = keyOf(target.uploadUrl);
    assert.equal((await injectPut(target.uploadUrl, 'image/png', image)).statusCode, 200);
    // A second PUT of the same bytes, its first half sent: it has passed the check and is storing.
    const body = new PassThrough();
    const late = t.services.assets.receiveUpload(key, 'image/png', () => body);
    body.write(image.subarray(0, 100));
    while (body.readableLength > 0) await new Promise((r) => setImmediate(r));
    assert.equal((await api.register(orgA.owner, { url: target.url, type: 'IMAGE' })).statusCode, 201);
    body.end(image.subarray(100));
    await assert.rejects(late, (err: unknown) => err instanceof AppError && err.code === 'upload_url_used');
    assert.equal(await t.services.blobs.exists(key), false);
  });

  test('open uploads count against an allowance of 50 of the plan’s largest files, under a lock', async () => {
    const small = await createOrgWithKey(t.services, { plan: 'free' });
    const max = 100 * 1024 ** 2;
    const announce = () =>
      api.presign(small.owner, { fileName: 'big.mp4', contentType: 'video/mp4', size: max });
    // Announced in parallel: exactly the allowance passes, whatever the interleaving.
    const replies = await Promise.all(Array.from({ length: 55 }, announce));
    const statuses = replies.map((r) => r.statusCode);
    assert.equal(statuses.filter((c) => c === 201).length, 50, JSON.stringify(statuses));
    const refused = replies.find((r) => r.statusCode !== 201)!;
    const body = assertError(refused, 429, 'upload_limit_reached', 'size');
    assert.ok(Number(refused.headers['retry-after']) > 0);
    assert.equal(body.retryAfter, Number(refused.headers['retry-after']));
    // Once their URLs have expired and the grace has passed, they no longer count (swept or not).
    const later = await assetsAt(t, pastGrace(t)).presignUpload({
      organization: small.organization,
      keyId: small.owner.record.id,
      fileName: 'big.mp4',
      contentType: 'video/mp4',
      size: max,
    });
    assert.ok(later.uploadUrl);
  });

  test('the sweep removes blobs under the upload prefix that no waiting upload owns', async () => {
    const image = await readFile(m.image);
    const waiting = await api.presignOk(orgA.owner, {
      fileName: 'w.png',
      contentType: 'image/png',
      size: image.length,
    });
    assert.equal((await injectPut(waiting.uploadUrl, 'image/png', image)).statusCode, 200);
    // A blob no record owns (what an older version let a PUT after registration leave).
    const stray = `uploads/${orgA.organization.id}/${randomUUID()}`;
    await t.services.blobs.put(stray, Readable.from([image]), { contentType: 'image/png' });
    assert.ok((await t.services.assets.sweepAbandonedUploads()) >= 1);
    assert.equal(await t.services.blobs.exists(stray), false);
    assert.ok(await t.services.blobs.exists(keyOf(waiting.uploadUrl)), 'a waiting upload is kept');
  });

  test('the housekeeping every API and worker process runs sweeps abandoned uploads', async () => {
    // Announced long ago (a clock in the past) and uploaded before its URL expired.
    const past = assetsAt(t, -pastGrace(t));
    const old = await past.presignUpload({
      organization: orgB.organization,
      keyId: orgB.owner.record.id,
      fileName: 'old.wav',
      contentType: 'audio/wav',
      size: audio.length,
    });
    const key = keyOf(old.url);
    await t.services.blobs.put(key, Readable.from([audio]), { contentType: 'audio/wav' });
    const hk = startHousekeeping(t.services);
    try {
      // The sweep runs when housekeeping starts; wait for its effect.
      while (await t.services.store.assets.findUpload(orgB.organization.id, key))
        await new Promise((r) => setTimeout(r, 50));
    } finally {
      await hk.stop();
    }
    assert.equal(await t.services.blobs.exists(key), false);
  });
});

describe(`direct uploads, S3 store (${DB})`, { timeout: 240_000 }, () => {
  const BUCKET = 'lipsync-direct';
  let s3: S3rver;
  let t: TestServices;
  let bg: Background;
  let m: TestMedia;
  let org: TestOrg;
  let other: TestOrg;
  const api = client(() => t);

  before(async () => {
    [s3, m] = await Promise.all([startS3rver([BUCKET]), makeTestMedia()]);
    t = await createTestServices({
      env: { ...LIFECYCLE_ENGINE_ENV, LIPSYNC_RATE_LIMIT_ENABLED: 'false', ...s3.env(BUCKET) },
    });
    org = await createOrgWithKey(t.services, { plan: 'enterprise' });
    other = await createOrgWithKey(t.services, { plan: 'enterprise' });
    bg = startBackground(t.services);
  });
  after(async () => {
    await bg?.stop();
    await t?.cleanup();
    await s3?.stop();
    await m?.cleanup();
  });

  const s3Put = (url: string, contentType: string, body: Buffer) =>
    fetch(url, { method: 'PUT', headers: { 'content-type': contentType }, body });

  test('presigned PUT to the bucket → register → generate', async () => {
    const video = await readFile(m.video);
    const audio = await readFile(m.audioShort);
    const target = await api.presignOk(org.owner, {
      fileName: 'face.mp4',
      contentType: 'video/mp4',
      size: video.length,
    });
    const up = new URL(target.uploadUrl);
    assert.equal(up.origin, s3.endpoint, 'the client uploads to the bucket, not through the API');
    assert.equal(up.pathname, `/${BUCKET}/uploads/${org.organization.id}/${up.pathname.split('/').pop()}`);
    assert.equal(up.searchParams.get('X-Amz-SignedHeaders'), 'content-length;content-type;host');
    assert.equal(up.searchParams.get('X-Amz-Expires'), '3600');
    assert.equal((await s3Put(target.uploadUrl, 'video/mp4', video)).status, 200);
    const read = await fetch(target.url);
    assert.equal(read.status, 200);
    assert.equal(sha256(Buffer.from(await read.arrayBuffer())), sha256(video));

    // Another organization cannot register it.
    assertError(
      await api.register(other.owner, { url: target.url, type: 'VIDEO' }),
      400,
      'invalid_request',
      'url',
    );
    const res = await api.register(org.owner, { url: target.url, type: 'VIDEO' });
    assert.equal(res.statusCode, 201, res.body);
    const asset = res.json();
    assert.equal(asset.type, 'VIDEO');
    assert.equal(asset.size, video.length);
    assert.ok(new URL(asset.url).pathname.startsWith(`/${BUCKET}/assets/${org.organization.id}/`));
    assert.equal((await fetch(target.url)).status, 404, 'the upload object was moved under the asset');
    const found = await api.get(org.owner, `/v2/assets/uploaded?contentSha256=${sha256(video)}&type=VIDEO`);
    assert.equal(found.json().asset.id, asset.id);
    const dl = await api.get(org.owner, `/v2/assets/${asset.id}/download`);
    assert.equal(dl.statusCode, 200);
    const file = await fetch(dl.body);
    assert.equal(file.status, 200);
    assert.equal(sha256(Buffer.from(await file.arrayBuffer())), sha256(video));

    const audioTarget = await api.presignOk(org.owner, {
      fileName: 'a.wav',
      contentType: 'audio/wav',
      size: audio.length,
    });
    assert.equal((await s3Put(audioTarget.uploadUrl, 'audio/wav', audio)).status, 200);
    const audioRes = await api.register(org.owner, { url: audioTarget.url, type: 'AUDIO' });
    assert.equal(audioRes.statusCode, 201, audioRes.body);

    const gen = await postGenerate(t.app, org.owner.headers, {
      model: 'lipsync-2',
      input: [
        { type: 'video', assetId: asset.id },
        { type: 'audio', assetId: audioRes.json().id },
      ],
    });
    assert.equal(gen.statusCode, 201, gen.body);
    const done = await waitTerminal(t.app, org.owner.headers, gen.json().id);
    assert.equal(done.status, 'COMPLETED', JSON.stringify(done));
  });

  test('an object of another size than announced is refused at registration and removed', async () => {
    // AWS refuses such a PUT itself (Content-Length is signed); s3rver does not check signatures, so
    // the registration's own check is what this shows.
    const body = Buffer.alloc(2000, 1);
    const target = await api.presignOk(org.owner, {
      fileName: 'b.mp4',
      contentType: 'video/mp4',
      size: 1000,
    });
    assert.equal((await s3Put(target.uploadUrl, 'video/mp4', body)).status, 200);
    assertError(
      await api.register(org.owner, { url: target.url, type: 'VIDEO' }),
      400,
      'invalid_request',
      'url',
    );
    assert.equal((await fetch(target.url)).status, 404);
    assertError(
      await api.register(org.owner, { url: target.url, type: 'VIDEO' }),
      400,
      'invalid_request',
      'url',
    );
  });

  test('a PUT to the bucket after registration leaves no blob: the sweep removes it', async () => {
    const image = await readFile(m.image);
    const target = await api.presignOk(org.owner, {
      fileName: 'once.png',
      contentType: 'image/png',
      size: image.length,
    });
    assert.equal(new URL(target.uploadUrl).searchParams.get('X-Amz-Expires'), '3600', 'the URL expires');
    const key = decodeURIComponent(new URL(target.uploadUrl).pathname.replace(`/${BUCKET}/`, ''));
    assert.equal((await s3Put(target.uploadUrl, 'image/png', image)).status, 200);
    const waiting = await api.presignOk(org.owner, {
      fileName: 'waiting.png',
      contentType: 'image/png',
      size: image.length,
    });
    const waitingKey = decodeURIComponent(new URL(waiting.uploadUrl).pathname.replace(`/${BUCKET}/`, ''));
    assert.equal((await s3Put(waiting.uploadUrl, 'image/png', image)).status, 200);
    assert.equal((await api.register(org.owner, { url: target.url, type: 'IMAGE' })).statusCode, 201);
    // The bucket cannot refuse a PUT while the presigned URL is valid: the object is back...
    assert.equal((await s3Put(target.uploadUrl, 'image/png', image)).status, 200);
    assert.ok(await t.services.blobs.exists(key));
    // ...until the next sweep, which keeps the upload still waiting to be registered.
    assert.ok((await t.services.assets.sweepAbandonedUploads()) >= 1);
    assert.equal(await t.services.blobs.exists(key), false);
    assert.ok(await t.services.blobs.exists(waitingKey));
    // Registration stays refused; the waiting upload still registers.
    assertError(
      await api.register(org.owner, { url: target.url, type: 'IMAGE' }),
      400,
      'invalid_request',
      'url',
    );
    assert.equal((await api.register(org.owner, { url: waiting.url, type: 'IMAGE' })).statusCode, 201);
  });

  test('an expired presigned upload URL is refused by the bucket', async () => {
    const store = await S3BlobStore.create({
      endpoint: s3.endpoint,
      region: 'us-east-1',
      bucket: BUCKET,
      accessKeyId: S3RVER_ACCESS_KEY_ID,
      secretAccessKey: S3RVER_SECRET_ACCESS_KEY,
      forcePathStyle: true,
      now: () => Date.now() - 2 * 3600_000,
    });
    const url = await store.signedUploadUrl('uploads/expired-test', {
      contentType: 'video/mp4',
      size: 3,
      expiresInSeconds: 3600,
    });
    const res = await s3Put(url, 'video/mp4', Buffer.from('abc'));
    assert.equal(res.status, 403);
    assert.match(await res.text(), /Request has expired/);
    assert.equal(await store.exists('uploads/expired-test'), false);
  });

  test('abandoned uploads are swept from the bucket; registered assets stay', async () => {
    const audio = await readFile(m.audioShort);
    const kept = await api.presignOk(org.owner, {
      fileName: 'k.wav',
      contentType: 'audio/wav',
      size: audio.length,
    });
    assert.equal((await s3Put(kept.uploadUrl, 'audio/wav', audio)).status, 200);
    const asset = await api.register(org.owner, { url: kept.url, type: 'AUDIO' });
    assert.equal(asset.statusCode, 201, asset.body);
    const left = await api.presignOk(org.owner, {
      fileName: 'l.wav',
      contentType: 'audio/wav',
      size: audio.length,
    });
    assert.equal((await s3Put(left.uploadUrl, 'audio/wav', audio)).status, 200);
    assert.equal((await fetch(left.url)).status, 200);
    const key = decodeURIComponent(new URL(left.url).pathname.replace(`/${BUCKET}/`, ''));
    assert.ok(await t.services.store.assets.findUpload(org.organization.id, key));

    assert.ok((await assetsAt(t, pastGrace(t)).sweepAbandonedUploads()) >= 1);
    assert.equal((await fetch(left.url)).status, 404, 'the object is gone from the bucket');
    assert.equal(await t.services.store.assets.findUpload(org.organization.id, key), null);
    const still = await api.get(org.owner, `/v2/assets/${asset.json().id}`);
    assert.equal(still.statusCode, 200);
    const file = await fetch(still.json().url);
    assert.equal(file.status, 200);
    assert.equal(sha256(Buffer.from(await file.arrayBuffer())), sha256(audio));
  });
});
