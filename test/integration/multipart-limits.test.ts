// The multipart parser limits of the spec (files 3, fields 32, parts 35, 1 MiB per field, per-file
// size) on POST /v2/assets/upload: 413 generation_input_validation_failed, and no temp file left behind.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  createOrgWithKey,
  createTestServices,
  fixture,
  type TestOrg,
  type TestServices,
} from '../helpers/index.js';
import { encodeForm, streamedZeroFileForm, type FormPart } from '../helpers/multipart.js';

const MAX_UPLOAD = 200_000;

describe(`multipart limits (${process.env.TEST_DATABASE ?? 'sqlite'})`, () => {
  let t: TestServices;
  let org: TestOrg;

  before(async () => {
    t = await createTestServices({
      env: { LIPSYNC_RATE_LIMIT_ENABLED: 'false', LIPSYNC_MAX_UPLOAD_BYTES: String(MAX_UPLOAD) },
    });
    org = await createOrgWithKey(t.services);
  });
  after(() => t.cleanup());

  async function send(parts: FormPart[]) {
    const { payload, headers } = await encodeForm(parts);
    return t.app.inject({
      method: 'POST',
      url: '/v2/assets/upload',
      headers: { ...org.owner.headers, ...headers },
      payload,
    });
  }

  /** Files in the upload temp folder and the blob store's temp folder. */
  async function leftovers(): Promise<string[]> {
    const out: string[] = [];
    for (const dir of [join(t.dataDir, 'tmp'), join(t.dataDir, 'blobs', '.tmp')]) {
      out.push(...(await readdir(dir).catch(() => [] as string[])));
    }
    return out;
  }

  async function assertLimit(res: { statusCode: number; body: string; json(): any }) {
    assert.equal(res.statusCode, 413, res.body);
    const body = res.json();
    assert.equal(body.errorCode, 'generation_input_validation_failed');
    assert.equal(body.statusCode, 413);
    assert.match(body.message, /limit/i);
    assert.match(body.suggestion, new RegExp(`${MAX_UPLOAD} bytes`));
    assert.deepEqual(await leftovers(), []);
  }

  const small = (name: string): FormPart => ({ name, file: fixture('media/hello.wav') });

  test('within the limits the upload works (the baseline of the cases below)', async () => {
    const parts: FormPart[] = [small('file')];
    for (let i = 0; i < 3; i++) parts.push({ name: `extra${i}`, value: 'x' });
    const res = await send(parts);
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(await leftovers(), []);
  });

  test('four files are 413', async () => {
    await assertLimit(await send([small('file'), small('video'), small('audio'), small('image')]));
  });

  test('33 fields are 413', async () => {
    const parts: FormPart[] = [small('file')];
    for (let i = 0; i < 33; i++) parts.push({ name: `f${i}`, value: 'v' });
    await assertLimit(await send(parts));
  });

  test('a field over 1 MiB is 413', async () => {
    await assertLimit(await send([{ name: 'name', value: 'a'.repeat(1024 * 1024 + 1) }, small('file')]));
  });

  test('a file over the configured upload size is 413, streamed or buffered, leaving no temp file', async () => {
    await assertLimit(await send([{ name: 'file', file: fixture('media/face_1.mp4') }]));
    const { payload, headers } = streamedZeroFileForm('file', MAX_UPLOAD + 1);
    await assertLimit(
      await t.app.inject({
        method: 'POST',
        url: '/v2/assets/upload',
        headers: { ...org.owner.headers, ...headers },
        payload,
      }),
    );
  });

  test('a truncated body is 400 and leaves no temp file', async () => {
    const { payload, headers } = await encodeForm([small('file')]);
    const res = await t.app.inject({
      method: 'POST',
      url: '/v2/assets/upload',
      headers: { ...org.owner.headers, ...headers },
      payload: payload.subarray(0, payload.length - 40),
    });
    assert.equal(res.statusCode, 400, res.body);
    assert.equal(res.json().errorCode, 'invalid_request');
    assert.deepEqual(await leftovers(), []);
  });
});
