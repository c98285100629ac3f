// Graceful shutdown of an API instance, with a real `lipsync serve` process (LIPSYNC_ROLE=api): at
// SIGTERM /readyz answers 503 at once; the open long-polls (a generation's wait and a remote worker's
// claim) answer their current state while the instance still serves new requests (the drain), each
// answer closing its connection; then the listener closes, idle keep-alive connections are closed, an
// upload in flight still finishes, and the process exits 0. Nothing waits on the clock: each step
// waits for the event before it, and every request gets a whole HTTP answer (no reset).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { encodeForm } from '../helpers/multipart.js';
import {
  createDeployment,
  runCliJson,
  startServer,
  type TestDeployment,
  type TestServer,
} from '../helpers/index.js';
import { LIFECYCLE_ENGINE_ENV, makeTestMedia, type TestMedia } from '../integration/generations-support.js';
import { cliOrg, createGeneration, uploadOverHttp, type E2eOrg } from './generations-support.js';
import { HANG_GUARD_MS } from './worker-processes.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';

interface Answer {
  readonly status: number;
  readonly headers: http.IncomingHttpHeaders;
  readonly body: string;
}

/** One request on a connection of its own; rejects on a reset or refused connection. */
function request(
  url: string,
  opts: {
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    agent?: http.Agent;
  } = {},
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      url,
      { method: opts.method ?? 'GET', headers: opts.headers, agent: opts.agent ?? false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d: string) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(opts.body);
  });
}

/** Resolves once the server's log shows the request with this id arrived (at LOG_LEVEL=debug). */
async function arrived(server: TestServer, requestId: string): Promise<void> {
  const end = Date.now() + HANG_GUARD_MS;
  while (
    !server
      .stdout()
      .split('\n')
      .some((l) => l.includes(`"reqId":"${requestId}"`))
  ) {
    if (server.process.exitCode !== null) assert.fail(`the server exited\n${server.stderr()}`);
    if (Date.now() > end) assert.fail(`request ${requestId} never reached the server\n${server.stdout()}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe(`graceful shutdown of an API instance (${DB})`, { timeout: 240_000 }, () => {
  let dep: TestDeployment;
  let m: TestMedia;
  let server: TestServer | null = null;

  before(async () => {
    [dep, m] = await Promise.all([createDeployment({ env: { ...LIFECYCLE_ENGINE_ENV } }), makeTestMedia()]);
  });
  after(async () => {
    await server?.stop();
    await dep?.cleanup();
    await m?.cleanup();
  });

  test('SIGTERM: not ready at once, long-polls answered during the drain, in-flight requests finish, exit 0', async () => {
    server = await startServer({
      env: {
        ...dep.env,
        // debug: each request's `request received` line shows when it arrived (arrived() above).
        LOG_LEVEL: 'debug',
        LIPSYNC_ROLE: 'api',
        // Longer than the steps below take, shorter than the generation's 10 s long-poll: an answer
        // that comes while the listener is still open was not left to its timeout.
        LIPSYNC_SHUTDOWN_DRAIN_SECONDS: '6',
        LIPSYNC_SHUTDOWN_TIMEOUT_SECONDS: '120',
      },
    });
    const s = server;
    const exited = new Promise<number | null>((resolve) => s.process.once('exit', (code) => resolve(code)));
    const org: E2eOrg = await cliOrg({ ...dep.env });
    const worker = await runCliJson(['worker-token', 'create', '--name', 'drain-test'], {
      env: { ...dep.env },
    });
    const [video, audio] = await Promise.all([
      uploadOverHttp(s, org, m.video),
      uploadOverHttp(s, org, m.audioShort),
    ]);
    // No worker runs anywhere: the generation stays queued, its long-poll would wait out its timeout.
    const id = await createGeneration(s, org, {
      model: 'lipsync-2',
      input: [
        { type: 'video', assetId: video },
        { type: 'audio', assetId: audio },
      ],
    });
    assert.equal((await request(`${s.url}/readyz`)).status, 200);

    // An idle keep-alive connection, kept by the agent after its answer.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const idle = await new Promise<{ answer: Answer; closed: Promise<void> }>((resolve, reject) => {
      const req = http.request(`${s.url}/healthz`, { agent }, (res) => {
        res.resume();
        res.on('end', () =>
          resolve({
            answer: { status: res.statusCode!, headers: res.headers, body: '' },
            closed: new Promise((r) => req.socket!.once('close', () => r())),
          }),
        );
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(idle.answer.status, 200);
    assert.equal(idle.answer.headers.connection, 'keep-alive');

    // The long-polls: a generation's wait (up to 10 s) and a worker's claim for a kind nobody queued
    // (up to 25 s).
    const longPoll = request(`${s.url}/v2/generate/${id}?wait=true&timeout=10`, {
      headers: { ...org.headers, 'x-request-id': 'drain-long-poll' },
    });
    const claim = request(`${s.url}/v2/workers/claim`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${String(worker.token)}`,
        'content-type': 'application/json',
        'x-request-id': 'drain-claim',
      },
      body: JSON.stringify({ kinds: ['transcription'], name: 'drain-test', waitSeconds: 25 }),
    });
    // An upload in flight: its body is sent in two halves, the second only after the listener closed.
    const form = await encodeForm([{ name: 'file', file: m.audioShort, type: 'audio/wav' }]);
    const half = Math.floor(form.payload.length / 2);
    let sendRest: () => void = () => undefined;
    const upload = new Promise<Answer>((resolve, reject) => {
      const req = http.request(
        `${s.url}/v2/assets/upload`,
        {
          method: 'POST',
          agent: false,
          headers: {
            ...org.headers,
            ...form.headers,
            'content-length': String(form.payload.length),
            'x-request-id': 'drain-upload',
          },
        },
        (res) => {
          let body = '';
          res.setEncoding('utf8');
          res.on('data', (d: string) => (body += d));
          res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
        },
      );
      req.on('error', reject);
      req.write(form.payload.subarray(0, half));
      sendRest = () => req.end(form.payload.subarray(half));
    });
    // Awaited below; a failure before that must not surface as an unhandled rejection.
    for (const p of [longPoll, claim, upload]) p.catch(() => undefined);
    await Promise.all(['drain-long-poll', 'drain-claim', 'drain-upload'].map((r) => arrived(s, r)));

    s.process.kill('SIGTERM');

    // The long-polls answer their current state, as usual bodies, and close their connections.
    const polled = await longPoll;
    assert.equal(polled.status, 200, polled.body);
    const g = JSON.parse(polled.body) as { id: string; status: string };
    assert.equal(g.id, id);
    assert.equal(g.status, 'PENDING');
    assert.equal(polled.headers.connection, 'close');
    const claimed = await claim;
    assert.equal(claimed.status, 204, claimed.body);
    assert.equal(claimed.body, '');
    assert.equal(claimed.headers['retry-after'], '1', 'a draining instance says when to ask again');
    assert.equal(claimed.headers.connection, 'close');

    // Still draining (the listener is open): not ready, yet new requests are served.
    const notReady = await request(`${s.url}/readyz`);
    assert.equal(notReady.status, 503, notReady.body);
    const r = JSON.parse(notReady.body) as Record<string, any>;
    assert.equal(r.errorCode, 'controller_dependency_error');
    assert.deepEqual(r.checks, { database: 'ok', blobStore: 'ok', server: 'shutting_down' });
    assert.equal(notReady.headers.connection, 'close');
    const plain = await request(`${s.url}/v2/generate/${id}`, { headers: org.headers });
    assert.equal(plain.status, 200, plain.body);
    assert.equal((JSON.parse(plain.body) as { status: string }).status, 'PENDING');
    assert.equal(plain.headers.connection, 'close');
    // A long-poll that arrives while draining answers at once too (here, before the listener closes).
    const late = await request(`${s.url}/v2/generate/${id}?wait=true&timeout=10`, { headers: org.headers });
    assert.equal(late.status, 200, late.body);
    assert.equal((await request(`${s.url}/healthz`)).status, 200, 'the listener was still open after it');

    // The drain ends: the listener closes (new connections are refused) while the upload is unfinished.
    const end = Date.now() + HANG_GUARD_MS;
    for (;;) {
      const refused = await request(`${s.url}/healthz`).then(
        () => false,
        (err: NodeJS.ErrnoException) => {
          // A probe that connected as the listener closed is cut before its request was read (the
          // close ends connections that have no request yet): it was never a request in flight.
          // The next probe is refused.
          if (err.code === 'ECONNRESET') return false;
          assert.equal(err.code, 'ECONNREFUSED', String(err));
          return true;
        },
      );
      if (refused) break;
      if (Date.now() > end) assert.fail('the listener did not close');
      await new Promise((res) => setTimeout(res, 50));
    }
    // The idle keep-alive connection is closed by the server, and the process still waits for the upload.
    await idle.closed;
    assert.equal(s.process.exitCode, null, 'the process waits for the request in flight');
    sendRest();
    const uploaded = await upload;
    assert.equal(uploaded.status, 201, uploaded.body);
    assert.match((JSON.parse(uploaded.body) as { id: string }).id, /^[0-9a-f-]{36}$/);

    assert.equal(await exited, 0, s.stderr());
    agent.destroy();
    const logs = s.stdout();
    assert.match(logs, /"msg":"draining: not ready, long-polls answered"/);
    assert.match(logs, /"msg":"server stopped"/);
    assert.doesNotMatch(logs, /unexpected failure|shutdown took longer/);
  });
});
