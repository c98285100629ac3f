// Credentials stay out of logs and responses: the request log of a signed file URL has its signature
// blanked, API keys never appear, and a media URL with `user:password@` is fetched with those
// credentials but shown without them in every generation response.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createReadStream } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import {
  createOrgWithKey,
  createTestServices,
  fixture,
  type TestOrg,
  type TestServices,
} from '../helpers/index.js';
import { encodeForm } from '../helpers/multipart.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';
const USER = 'media-user';
const PASSWORD = 'media-pass-5ecret';

/** Serves two fixtures, only with HTTP basic auth USER:PASSWORD. */
async function startProtectedMediaServer(): Promise<{ base: string; close(): Promise<void> }> {
  const files: Record<string, [string, string]> = {
    '/face.mp4': [fixture('media/face_5.mp4'), 'video/mp4'],
    '/speech.wav': [fixture('media/hello.wav'), 'audio/wav'],
  };
  const expected = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
  const server: Server = createServer((req, res) => {
    const file = files[req.url ?? ''];
    if (req.headers.authorization !== expected) {
      res.writeHead(401).end();
      return;
    }
    if (!file) {
      res.writeHead(404).end();
      return;
    }
    res.writeHead(200, { 'content-type': file[1] });
    createReadStream(file[0]).pipe(res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    base: `127.0.0.1:${port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

describe(`credentials stay out of logs and responses (${DB})`, { timeout: 120_000 }, () => {
  const lines: string[] = [];
  let t: TestServices;
  let org: TestOrg;
  let media: Awaited<ReturnType<typeof startProtectedMediaServer>>;

  before(async () => {
    const logDestination = new Writable({
      write(chunk: Buffer, _enc, cb) {
        lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
        cb();
      },
    });
    t = await createTestServices({
      env: { LOG_LEVEL: 'info', LIPSYNC_RATE_LIMIT_ENABLED: 'false', LIPSYNC_ALLOW_PRIVATE_URLS: '1' },
      logDestination,
    });
    org = await createOrgWithKey(t.services, { plan: 'enterprise' });
    media = await startProtectedMediaServer();
  });
  after(async () => {
    await t?.cleanup();
    await media?.close();
  });

  test('the request log of a signed file URL has no signature and no API key', async () => {
    const { payload, headers } = await encodeForm([{ name: 'file', file: fixture('media/hello.wav') }]);
    const up = await t.app.inject({
      method: 'POST',
      url: '/v2/assets/upload',
      headers: { ...org.owner.headers, ...headers, authorization: 'Bearer not-used-but-secret' },
      payload,
    });
    assert.equal(up.statusCode, 201, up.body);
    const signed = new URL(up.json().url as string);
    const sig = signed.searchParams.get('sig') as string;
    assert.match(sig, /^[0-9a-f]{64}$/);
    const before = lines.length;
    const file = await t.app.inject({ method: 'GET', url: `${signed.pathname}${signed.search}` });
    assert.equal(file.statusCode, 200);

    const logged = lines.slice(before).join('\n');
    assert.match(logged, /request completed/, 'the request was logged');
    assert.match(logged, /sig=\[redacted\]/);
    const all = lines.join('\n');
    assert.ok(!all.includes(sig), 'the signature is in the log');
    assert.ok(!all.includes(org.owner.key), 'the API key is in the log');
    assert.ok(!all.includes('not-used-but-secret'), 'the authorization header is in the log');
  });

  test('media URL credentials are used for the fetch but never shown', async () => {
    const video = `http://${USER}:${PASSWORD}@${media.base}/face.mp4`;
    const audio = `http://${USER}:${PASSWORD}@${media.base}/speech.wav`;
    const created = await t.app.inject({
      method: 'POST',
      url: '/v2/generate',
      headers: org.owner.headers,
      payload: {
        model: 'lipsync-2',
        input: [
          { type: 'video', url: video },
          { type: 'audio', url: audio },
        ],
      },
    });
    assert.equal(created.statusCode, 201, created.body);
    const id = created.json().id as string;
    const expectInputs = [`http://${media.base}/face.mp4`, `http://${media.base}/speech.wav`];
    const responses = [
      created,
      await t.app.inject({ method: 'GET', url: `/v2/generate/${id}`, headers: org.owner.headers }),
      await t.app.inject({ method: 'GET', url: '/v2/generations', headers: org.owner.headers }),
    ];
    for (const res of responses) {
      assert.equal(res.statusCode, 200 + (res === created ? 1 : 0), res.body);
      assert.ok(!res.body.includes(PASSWORD), `the password is in ${res.body}`);
      assert.ok(!res.body.includes(`${USER}:`), `the user name is in ${res.body}`);
      const g = Array.isArray(res.json()) ? res.json()[0] : res.json();
      assert.deepEqual(
        g.input.map((i: { url: string }) => i.url),
        expectInputs,
      );
    }
    assert.ok(!lines.join('\n').includes(PASSWORD), 'the password is in the log');
  });
});
