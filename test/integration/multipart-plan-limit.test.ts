// Multipart POST /v2/generate enforces the plan's file size while the file streams in, as
// POST /v2/assets/upload does: a file over the free plan's 100 MiB stops the upload at the limit with
// 422 file_size_exceeds_plan_limit (the spec's code for "file over plan limit"), the connection is
// closed instead of draining the rest, and no temp file, asset or generation is left behind.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import {
  createOrgWithKey,
  createTestServices,
  fixture,
  type TestOrg,
  type TestServices,
} from '../helpers/index.js';
import { encodeForm } from '../helpers/multipart.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';
const FREE_PLAN_BYTES = 100 * 1024 * 1024;

/** A generate form: text fields, then a `video` file of `size` zero bytes generated as a stream. */
function streamedGenerateForm(fields: Record<string, string>, size: number) {
  const boundary = `----lipsync-plan-${Math.random().toString(16).slice(2)}`;
  let head = '';
  for (const [name, value] of Object.entries(fields)) {
    head += `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`;
  }
  head +=
    `--${boundary}\r\nContent-Disposition: form-data; name="video"; filename="big.mp4"\r\n` +
    'Content-Type: video/mp4\r\n\r\n';
  const tail = `\r\n--${boundary}--\r\n`;
  const chunk = Buffer.alloc(1024 * 1024);
  const progress = { pulled: 0, total: Buffer.byteLength(head) + size + Buffer.byteLength(tail) };
  async function* body() {
    yield Buffer.from(head);
    progress.pulled += Buffer.byteLength(head);
    let left = size;
    while (left > 0) {
      const n = Math.min(left, chunk.length);
      yield n === chunk.length ? chunk : chunk.subarray(0, n);
      progress.pulled += n;
      left -= n;
    }
    yield Buffer.from(tail);
    progress.pulled += Buffer.byteLength(tail);
  }
  return {
    payload: Readable.from(body(), { objectMode: false }),
    headers: { 'content-type': `multipart/form-data; boundary=${boundary}` },
    progress,
  };
}

describe(`multipart generate: the plan's file size (${DB})`, { timeout: 180_000 }, () => {
  let t: TestServices;
  let free: TestOrg;

  before(async () => {
    t = await createTestServices({ env: { LIPSYNC_RATE_LIMIT_ENABLED: 'false' } });
    free = await createOrgWithKey(t.services, { plan: 'free' });
  });
  after(() => t?.cleanup());

  async function leftovers(): Promise<string[]> {
    const out: string[] = [];
    for (const dir of [join(t.dataDir, 'tmp'), join(t.dataDir, 'blobs', '.tmp')]) {
      out.push(...(await readdir(dir).catch(() => [] as string[])));
    }
    return out;
  }

  test('a file over the plan limit is refused while streaming: 422, connection closed, nothing kept', async () => {
    const audio = JSON.stringify([{ type: 'audio', url: 'https://media.invalid/speech.wav' }]);
    const form = streamedGenerateForm(
      { model: 'lipsync-2', input: audio },
      FREE_PLAN_BYTES + 10 * 1024 * 1024,
    );
    const res = await t.app.inject({
      method: 'POST',
      url: '/v2/generate',
      headers: { ...free.owner.headers, ...form.headers, 'idempotency-key': 'too-big-1' },
      payload: form.payload,
    });
    assert.equal(res.statusCode, 422, res.body);
    const body = res.json();
    assert.equal(body.errorCode, 'file_size_exceeds_plan_limit');
    assert.equal(body.statusCode, 422);
    assert.equal(body.field, 'video');
    assert.match(body.message, /free plan/);
    // Refused at the limit, not after reading the whole body.
    assert.equal(res.headers.connection, 'close');
    assert.ok(
      form.progress.pulled < form.progress.total,
      `${form.progress.pulled} of ${form.progress.total} bytes read`,
    );
    assert.deepEqual(await leftovers(), []);
    const assets = await t.app.inject({ method: 'GET', url: '/v2/assets', headers: free.owner.headers });
    assert.equal(assets.json().totalCount, 0);
    const gens = await t.app.inject({ method: 'GET', url: '/v2/generations', headers: free.owner.headers });
    assert.deepEqual(gens.json(), []);
  });

  test('files within the plan limit still make a generation', async () => {
    const { payload, headers } = await encodeForm([
      { name: 'model', value: 'lipsync-2' },
      { name: 'video', file: fixture('media/face_5.mp4') },
      { name: 'audio', file: fixture('media/hello.wav') },
    ]);
    const res = await t.app.inject({
      method: 'POST',
      url: '/v2/generate',
      headers: { ...free.owner.headers, ...headers },
      payload,
    });
    assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(await leftovers(), []);
  });
});
