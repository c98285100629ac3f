// /v2/assets: upload real media (type found by probing), get, list with filters and cursors, delete,
// and the organization boundary.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createOrgWithKey,
  createTestServices,
  fixture,
  type TestKey,
  type TestOrg,
  type TestServices,
} from '../helpers/index.js';
import { encodeForm, streamedZeroFileForm, type FormPart } from '../helpers/multipart.js';

describe(`assets (${process.env.TEST_DATABASE ?? 'sqlite'})`, () => {
  let t: TestServices;
  let orgA: TestOrg;
  let orgB: TestOrg;
  let scratch: string;
  let png: string;

  before(async () => {
    t = await createTestServices({ env: { LIPSYNC_RATE_LIMIT_ENABLED: 'false' } });
    orgA = await createOrgWithKey(t.services, { plan: 'enterprise' });
    orgB = await createOrgWithKey(t.services, { plan: 'enterprise' });
    scratch = await mkdtemp(join(tmpdir(), 'lipsync-assets-'));
    png = join(scratch, 'red.png');
    const r = spawnSync('ffmpeg', [
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      'color=red:s=64x48',
      '-frames:v',
      '1',
      png,
    ]);
    assert.equal(r.status, 0, String(r.stderr));
  });
  after(async () => {
    await t.cleanup();
    await rm(scratch, { recursive: true, force: true });
  });

  async function upload(who: TestKey, parts: FormPart[]) {
    const { payload, headers } = await encodeForm(parts);
    return t.app.inject({
      method: 'POST',
      url: '/v2/assets/upload',
      headers: { ...who.headers, ...headers },
      payload,
    });
  }
  async function uploadOk(who: TestKey, parts: FormPart[]) {
    const res = await upload(who, parts);
    assert.equal(res.statusCode, 201, res.body);
    return res.json();
  }
  const get = (who: TestKey, url: string) => t.app.inject({ method: 'GET', url, headers: who.headers });

  test('a video upload is probed: type, format, size, duration and picture size', async () => {
    const a = await uploadOk(orgA.owner, [{ name: 'file', file: fixture('media/face_1.mp4') }]);
    assert.match(a.id, /^[0-9a-f-]{36}$/);
    assert.equal(a.type, 'VIDEO');
    assert.equal(a.format, 'mp4');
    assert.equal(a.name, 'face_1.mp4');
    assert.equal(a.size, (await stat(fixture('media/face_1.mp4'))).size);
    assert.equal(a.width, 700);
    assert.equal(a.height, 700);
    assert.ok(Math.abs(a.durationSeconds - 6.131) < 0.01, String(a.durationSeconds));
    assert.equal(a.visibility, 'ORGANIZATION');
    assert.equal(a.inputType, 'UPLOAD');
    assert.equal(a.projectId, null);
    assert.equal(a.organizationId, orgA.organization.id);
    assert.equal(a.createdAt, a.updatedAt);
    assert.ok(a.url.startsWith(`${t.services.config.publicUrl}/v2/files/assets/${orgA.organization.id}/`));
    assert.match(a.url, /\?expires=\d+&sig=[0-9a-f]{64}$/);
    const expires = Number(new URL(a.url).searchParams.get('expires'));
    assert.ok(Math.abs(expires - (Date.now() / 1000 + 7 * 24 * 3600)) < 60, 'valid for seven days');
  });

  test('audio and image uploads; the type comes from the content, not the name or field', async () => {
    const audio = await uploadOk(orgA.owner, [
      { name: 'video', file: fixture('media/audio_1.wav'), filename: 'looks-like-a.mp4', type: 'video/mp4' },
      { name: 'name', value: 'Speech one' },
      { name: 'visibility', value: 'user' },
    ]);
    assert.equal(audio.type, 'AUDIO');
    assert.equal(audio.format, 'wav');
    assert.equal(audio.name, 'Speech one');
    assert.equal(audio.visibility, 'USER');
    assert.ok(Math.abs(audio.durationSeconds - 5.0155) < 0.01);
    assert.equal(audio.width, undefined);
    const image = await uploadOk(orgA.owner, [{ name: 'image', file: png }]);
    assert.equal(image.type, 'IMAGE');
    assert.equal(image.format, 'png');
    assert.equal(image.width, 64);
    assert.equal(image.height, 48);
    assert.equal(image.durationSeconds, undefined);
  });

  test('an unreadable file is 422 asset_type_unsupported and nothing is stored', async () => {
    const before = (await get(orgA.owner, '/v2/assets?limit=100')).json().totalCount;
    const res = await upload(orgA.owner, [
      { name: 'file', file: Buffer.from('this is not media at all\n'.repeat(50)), filename: 'clip.mp4' },
    ]);
    assert.equal(res.statusCode, 422, res.body);
    assert.equal(res.json().errorCode, 'asset_type_unsupported');
    assert.equal((await get(orgA.owner, '/v2/assets?limit=100')).json().totalCount, before);
  });

  test('form problems: no file, two files, bad visibility, foreign project, not multipart', async () => {
    let res = await upload(orgA.owner, [{ name: 'name', value: 'x' }]);
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().field, 'file');
    res = await upload(orgA.owner, [
      { name: 'video', file: fixture('media/face_2.mp4') },
      { name: 'audio', file: fixture('media/hello.wav') },
    ]);
    assert.equal(res.statusCode, 400);
    res = await upload(orgA.owner, [{ name: 'other', file: fixture('media/hello.wav') }]);
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().field, 'other');
    res = await upload(orgA.owner, [
      { name: 'file', file: fixture('media/hello.wav') },
      { name: 'visibility', value: 'PUBLIC' },
    ]);
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().field, 'visibility');
    const projB = (await t.services.projects.create(orgB.organization.id, 'B only')).id;
    res = await upload(orgA.owner, [
      { name: 'projectId', value: projB },
      { name: 'file', file: fixture('media/hello.wav') },
    ]);
    assert.equal(res.statusCode, 404);
    assert.equal(res.json().errorCode, 'project_not_found');
    // JSON is the direct-upload form (assets-direct-upload.test.ts): checked against its own schema.
    res = await t.app.inject({
      method: 'POST',
      url: '/v2/assets/upload',
      headers: orgA.owner.headers,
      payload: { file: 'x' },
    });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json().errorCode, 'invalid_request');
    res = await t.app.inject({
      method: 'POST',
      url: '/v2/assets/upload',
      headers: { ...orgA.owner.headers, 'content-type': 'text/plain' },
      payload: 'x',
    });
    assert.equal(res.statusCode, 415);
    assert.equal(res.json().errorCode, 'unsupported_media_type');
  });

  test('a file over the plan limit is 422 file_size_exceeds_plan_limit', async () => {
    const free = await createOrgWithKey(t.services, { plan: 'free' });
    const { payload, headers } = streamedZeroFileForm('file', 100 * 1024 * 1024 + 1);
    const res = await t.app.inject({
      method: 'POST',
      url: '/v2/assets/upload',
      headers: { ...free.owner.headers, ...headers },
      payload,
    });
    assert.equal(res.statusCode, 422, res.body);
    assert.equal(res.json().errorCode, 'file_size_exceeds_plan_limit');
  });

  test('get: own assets only; malformed and foreign ids are 404 asset_not_found', async () => {
    const a = await uploadOk(orgA.owner, [{ name: 'file', file: fixture('media/hello.wav') }]);
    const own = await get(orgA.owner, `/v2/assets/${a.id}`);
    assert.equal(own.statusCode, 200);
    assert.equal(own.json().id, a.id);
    assert.equal(own.json().size, a.size);
    for (const url of [`/v2/assets/${a.id}`, '/v2/assets/not-a-uuid']) {
      const res = await get(orgB.owner, url);
      assert.equal(res.statusCode, 404);
      assert.equal(res.json().errorCode, 'asset_not_found');
    }
    const del = await t.app.inject({
      method: 'DELETE',
      url: `/v2/assets/${a.id}`,
      headers: orgB.owner.headers,
    });
    assert.equal(del.statusCode, 404);
    const listB = (await get(orgB.owner, '/v2/assets')).json();
    assert.ok(listB.items.every((x: { id: string }) => x.id !== a.id));
  });

  test('delete removes the record and the blob', async () => {
    const a = await uploadOk(orgA.owner, [{ name: 'file', file: fixture('media/hello.wav') }]);
    const rec = await t.services.assets.get(orgA.organization.id, a.id);
    assert.ok(await t.services.blobs.exists(rec.storageKey));
    const del = await t.app.inject({
      method: 'DELETE',
      url: `/v2/assets/${a.id}`,
      headers: orgA.owner.headers,
    });
    assert.equal(del.statusCode, 200, del.body);
    assert.equal(del.json().id, a.id);
    assert.equal((await get(orgA.owner, `/v2/assets/${a.id}`)).statusCode, 404);
    assert.equal(await t.services.blobs.exists(rec.storageKey), false);
    const file = await t.app.inject({ method: 'GET', url: a.url.slice(t.services.config.publicUrl.length) });
    assert.equal(file.statusCode, 404);
    assert.equal(file.json().errorCode, 'file_not_found');
  });

  test("an asset's content is read through the store (a temporary copy for tools, or a range)", async () => {
    const a = await uploadOk(orgA.owner, [{ name: 'file', file: fixture('media/hello.wav') }]);
    const r = await t.services.assets.get(orgA.organization.id, a.id);
    const copy = join(t.dataDir, `copy-${a.id}.wav`);
    await t.services.blobs.download(r.storageKey, copy);
    assert.equal((await stat(copy)).size, a.size);
    await rm(copy);
    const chunks: Buffer[] = [];
    for await (const c of await t.services.blobs.open(r.storageKey, { start: 0, end: 3 }))
      chunks.push(c as Buffer);
    assert.equal(Buffer.concat(chunks).toString('latin1'), 'RIFF');
    await assert.rejects(t.services.assets.get(orgB.organization.id, a.id), { code: 'asset_not_found' });
  });
});
