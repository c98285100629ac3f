// DELETE /v2/assets/{id} while a generation still needs the asset: 409 asset_in_use as long as a
// PENDING or PROCESSING generation uses it (the record and the blob stay), 200 once the generation has
// ended (record and blob removed); another organization's asset is 404 either way.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  createOrgWithKey,
  createTestServices,
  fixture,
  type TestOrg,
  type TestServices,
} from '../helpers/index.js';
import { encodeForm } from '../helpers/multipart.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';

describe(`delete an asset in use (${DB})`, { timeout: 120_000 }, () => {
  let t: TestServices;
  let org: TestOrg;
  let other: TestOrg;

  before(async () => {
    t = await createTestServices({ env: { LIPSYNC_RATE_LIMIT_ENABLED: 'false' } });
    org = await createOrgWithKey(t.services, { plan: 'enterprise' });
    other = await createOrgWithKey(t.services, { plan: 'enterprise' });
  });
  after(() => t?.cleanup());

  async function upload(path: string): Promise<{ id: string; key: string }> {
    const { payload, headers } = await encodeForm([{ name: 'file', file: path }]);
    const res = await t.app.inject({
      method: 'POST',
      url: '/v2/assets/upload',
      headers: { ...org.owner.headers, ...headers },
      payload,
    });
    assert.equal(res.statusCode, 201, res.body);
    const id = res.json().id as string;
    const record = await t.services.store.assets.find(org.organization.id, id);
    assert.ok(record);
    return { id, key: record.storageKey };
  }

  const del = (who: TestOrg, id: string) =>
    t.app.inject({ method: 'DELETE', url: `/v2/assets/${id}`, headers: who.owner.headers });

  async function generate(video: string, audio: string): Promise<string> {
    const res = await t.app.inject({
      method: 'POST',
      url: '/v2/generate',
      headers: org.owner.headers,
      payload: {
        model: 'lipsync-2',
        input: [
          { type: 'video', assetId: video },
          { type: 'audio', assetId: audio },
        ],
      },
    });
    assert.equal(res.statusCode, 201, res.body);
    return res.json().id as string;
  }

  const setStatus = (id: string, status: string) =>
    t.services.store.db.kysely.updateTable('generations').set({ status }).where('id', '=', id).execute();

  async function assertKept(asset: { id: string; key: string }): Promise<void> {
    const got = await t.app.inject({
      method: 'GET',
      url: `/v2/assets/${asset.id}`,
      headers: org.owner.headers,
    });
    assert.equal(got.statusCode, 200, got.body);
    assert.ok(await t.services.blobs.exists(asset.key), 'the blob is still there');
  }

  test('409 asset_in_use while PENDING and PROCESSING; 200 and gone once the generation ended', async () => {
    const video = await upload(fixture('media/face_5.mp4'));
    const audio = await upload(fixture('media/hello.wav'));
    const gen = await generate(video.id, audio.id);

    for (const status of ['PENDING', 'PROCESSING']) {
      await setStatus(gen, status);
      for (const asset of [video, audio]) {
        const res = await del(org, asset.id);
        assert.equal(res.statusCode, 409, res.body);
        const body = res.json();
        assert.equal(body.errorCode, 'asset_in_use');
        assert.equal(body.statusCode, 409);
        assert.equal(body.field, 'id');
        assert.equal(typeof body.suggestion, 'string');
        await assertKept(asset);
      }
      // Another organization learns nothing: 404, as for any foreign asset.
      const foreign = await del(other, video.id);
      assert.equal(foreign.statusCode, 404);
      assert.equal(foreign.json().errorCode, 'asset_not_found');
    }

    await setStatus(gen, 'COMPLETED');
    for (const asset of [video, audio]) {
      const res = await del(org, asset.id);
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.json().id, asset.id);
      const got = await t.app.inject({
        method: 'GET',
        url: `/v2/assets/${asset.id}`,
        headers: org.owner.headers,
      });
      assert.equal(got.statusCode, 404);
      assert.equal(await t.services.blobs.exists(asset.key), false, 'the blob was removed');
      assert.equal((await del(org, asset.id)).statusCode, 404, 'a second delete is 404');
    }
  });

  test('an asset used only by finished generations, or by none, can be deleted', async () => {
    const video = await upload(fixture('media/face_5.mp4'));
    const audio = await upload(fixture('media/hello.wav'));
    const unused = await upload(fixture('media/hello.wav'));
    const gen = await generate(video.id, audio.id);
    // The other asset of the same organization is not "in use" because a generation is active.
    assert.equal((await del(org, unused.id)).statusCode, 200);
    await setStatus(gen, 'FAILED');
    assert.equal((await del(org, audio.id)).statusCode, 200);
    await setStatus(gen, 'CANCELED');
    assert.equal((await del(org, video.id)).statusCode, 200);
  });
});
