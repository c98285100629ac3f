// Receiving a request is bounded in time (LIPSYNC_REQUEST_TIMEOUT_SECONDS, LIPSYNC_HEADERS_TIMEOUT_SECONDS):
// a client that trickles its body or its headers byte by byte gets 408 request_timeout in the spec's
// error body and the connection is closed before it finishes. Answering is not bounded: a long-poll
// held longer than the request timeout still answers. Real listening server, raw sockets.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { connect, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import {
  createOrgWithKey,
  createTestServices,
  fixture,
  type TestOrg,
  type TestServices,
} from '../helpers/index.js';
import { uploadAssetFile } from '../helpers/multipart.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';

interface Trickle {
  /** Everything the server sent. */
  response: string;
  /** Bytes of the request sent before the server closed the connection. */
  sent: number;
  total: number;
}

/** Sends `head` at once, then `rest` one byte every `everyMs` until done or the server closes. */
function trickle(port: number, head: string, rest: string, everyMs = 100): Promise<Trickle> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(port, '127.0.0.1');
    let response = '';
    let sent = 0;
    let timer: NodeJS.Timeout | undefined;
    let closed = false;
    socket.setEncoding('utf8');
    socket.on('data', (d: string) => (response += d));
    socket.on('error', (err: NodeJS.ErrnoException) => {
      // A reset after the server's answer counts as the close we wait for.
      if (err.code !== 'ECONNRESET' && err.code !== 'EPIPE') reject(err);
    });
    socket.on('close', () => {
      closed = true;
      clearTimeout(timer);
      resolve({ response, sent, total: rest.length });
    });
    socket.on('connect', () => {
      socket.write(head);
      const next = () => {
        if (closed) return;
        if (sent >= rest.length) return; // complete: wait for the answer and the close
        socket.write(rest[sent]);
        sent++;
        timer = setTimeout(next, everyMs);
      };
      next();
    });
  });
}

function parseResponse(raw: string): { status: number; headers: string; body: any } {
  const end = raw.indexOf('\r\n\r\n');
  assert.ok(end > 0, `no HTTP response in ${JSON.stringify(raw)}`);
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(raw)?.[1]);
  return { status, headers: raw.slice(0, end), body: JSON.parse(raw.slice(end + 4)) };
}

describe(`request and connection timeouts (${DB})`, { timeout: 120_000 }, () => {
  let t: TestServices;
  let org: TestOrg;
  let port: number;

  before(async () => {
    t = await createTestServices({
      env: {
        LIPSYNC_RATE_LIMIT_ENABLED: 'false',
        LIPSYNC_REQUEST_TIMEOUT_SECONDS: '1',
        LIPSYNC_HEADERS_TIMEOUT_SECONDS: '1',
      },
    });
    org = await createOrgWithKey(t.services, { plan: 'enterprise' });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as AddressInfo).port;
  });
  after(() => t?.cleanup());

  test('a body trickled byte by byte is cut off with 408 request_timeout before it completes', async () => {
    const body = JSON.stringify({ name: `slow ${'x'.repeat(200)}` });
    const head =
      'POST /v2/projects HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
      `x-api-key: ${org.owner.key}\r\ncontent-type: application/json\r\n` +
      `content-length: ${Buffer.byteLength(body)}\r\n\r\n`;
    const r = await trickle(port, head, body);
    assert.ok(r.sent < r.total, `the connection was closed after ${r.sent} of ${r.total} body bytes`);
    const res = parseResponse(r.response);
    assert.equal(res.status, 408, r.response);
    assert.match(res.headers, /connection: close/i);
    assert.equal(res.body.statusCode, 408);
    assert.equal(res.body.errorCode, 'request_timeout');
    assert.equal(typeof res.body.message, 'string');
    assert.equal(typeof res.body.suggestion, 'string');
    // Nothing was created.
    const list = await t.app.inject({ method: 'GET', url: '/v2/projects', headers: org.owner.headers });
    assert.deepEqual(list.json(), []);
  });

  test('headers trickled byte by byte are cut off with 408 as well', async () => {
    const head = 'GET /v2/projects HTTP/1.1\r\nHost: 127.0.0.1\r\n';
    const rest = `x-api-key: ${org.owner.key}\r\nx-slow: ${'y'.repeat(200)}\r\n\r\n`;
    const r = await trickle(port, head, rest);
    assert.ok(r.sent < r.total, `the connection was closed after ${r.sent} of ${r.total} header bytes`);
    const res = parseResponse(r.response);
    assert.equal(res.status, 408, r.response);
    assert.equal(res.body.errorCode, 'request_timeout');
  });

  test('a request sent promptly is answered as usual', async () => {
    const body = JSON.stringify({ name: 'prompt' });
    const res = await fetch(`http://127.0.0.1:${port}/v2/projects`, {
      method: 'POST',
      headers: { ...org.owner.headers, 'content-type': 'application/json' },
      body,
    });
    assert.equal(res.status, 201);
  });

  test('a long-poll held longer than the request timeout still answers', async () => {
    const upload = async (path: string) =>
      (await uploadAssetFile(t.app, org.owner.headers, path)).id as string;
    const [video, audio] = [
      await upload(fixture('media/face_5.mp4')),
      await upload(fixture('media/hello.wav')),
    ];
    const created = await t.app.inject({
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
    assert.equal(created.statusCode, 201, created.body);
    // No worker runs here: the generation stays PENDING and the wait runs to its timeout (3 s > 1 s).
    const res = await fetch(`http://127.0.0.1:${port}/v2/generate/${created.json().id}?wait=true&timeout=3`, {
      headers: org.owner.headers,
    });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-wait-timeout-seconds'), '3');
    assert.equal(((await res.json()) as { status: string }).status, 'PENDING');
  });
});
