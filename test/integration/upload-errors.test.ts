// A file that is not media, uploaded as an asset or inside a multipart generation, is refused with a
// message written for users: no server path, no tool name, no stderr. What ffprobe said goes to the
// server log.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import {
  createOrgWithKey,
  createTestServices,
  fixture,
  type TestOrg,
  type TestServices,
} from '../helpers/index.js';
import { assertNoLeaks } from '../helpers/error-leaks.js';
import { encodeForm, type FormPart } from '../helpers/multipart.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';
/** Text that ffprobe refuses ("Invalid data found when processing input"), named like a video. */
const NOT_MEDIA = Buffer.from('this is a shopping list, not a video\n'.repeat(40));

describe(`a non-media upload's error holds no internals (${DB})`, { timeout: 120_000 }, () => {
  const lines: string[] = [];
  let t: TestServices;
  let org: TestOrg;

  before(async () => {
    const logDestination = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        cb();
      },
    });
    t = await createTestServices({
      env: { LOG_LEVEL: 'info', LIPSYNC_RATE_LIMIT_ENABLED: 'false' },
      logDestination,
    });
    org = await createOrgWithKey(t.services, { plan: 'enterprise' });
  });
  after(async () => {
    await t?.cleanup();
  });

  async function post(url: string, parts: FormPart[]) {
    const { payload, headers } = await encodeForm(parts);
    return t.app.inject({ method: 'POST', url, headers: { ...org.owner.headers, ...headers }, payload });
  }

  function assertPlainRefusal(res: { statusCode: number; body: string; json(): any }): void {
    assert.equal(res.statusCode, 422, res.body);
    const body = res.json();
    assert.equal(body.errorCode, 'asset_type_unsupported');
    assert.match(body.message, /not a readable audio, video or image file/);
    assertNoLeaks(body, [t.dataDir]);
  }

  test('POST /v2/assets/upload', async () => {
    const logged = lines.length;
    assertPlainRefusal(
      await post('/v2/assets/upload', [{ name: 'file', file: NOT_MEDIA, filename: 'a.mp4' }]),
    );
    // The detail is not lost: the log has ffprobe's words.
    const detail = lines.slice(logged).find((l) => l.includes('not readable media'));
    assert.ok(detail, 'the refusal is logged');
    assert.match(detail, /Invalid data found/);
  });

  test('POST /v2/generate with a multipart form', async () => {
    assertPlainRefusal(
      await post('/v2/generate', [
        { name: 'model', value: 'lipsync-2' },
        { name: 'video', file: NOT_MEDIA, filename: 'face.mp4' },
        { name: 'audio', file: fixture('media/hello.wav') },
      ]),
    );
  });
});
