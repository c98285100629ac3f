// Webhooks end to end: a real receiver on a local port verifies Webhook-Signature with the secret that
// `lipsync org secret ID --json` prints, refuses the first delivery with 500, and sees the retry; the
// delivery log (webhook_attempts) and the server log show both attempts. A canceled generation reports
// status FAILED with finalStatus CANCELED.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac, timingSafeEqual } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import {
  createDeployment,
  runCliJson,
  startServer,
  type TestDeployment,
  type TestServer,
} from '../helpers/index.js';
import { loadConfig } from '../../src/config.js';
import { nextRetryDelayMs } from '../../src/domain/webhooks.js';
import { createLogger } from '../../src/logger.js';
import { createServices } from '../../src/app/container.js';
import type { Services } from '../../src/services/index.js';
import {
  makeTestMedia,
  probeFile,
  type TestMedia,
  LIFECYCLE_ENGINE_ENV,
} from '../integration/generations-support.js';
import {
  api,
  cliOrg,
  createGeneration,
  uploadOverHttp,
  waitDone,
  type E2eOrg,
} from './generations-support.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';

interface Delivery {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  answered: number;
}

/** Our own check of the documented scheme: t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<raw body>">. */
function signatureValid(secret: string, body: string, header: string | undefined): boolean {
  const m = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? '');
  if (!m) return false;
  if (Math.abs(Date.now() / 1000 - Number(m[1])) > 300) return false;
  const expected = createHmac('sha256', secret).update(`${m[1]}.${body}`).digest();
  return timingSafeEqual(expected, Buffer.from(m[2], 'hex'));
}

describe(`webhooks end to end (${DB})`, { timeout: 240_000 }, () => {
  let dep: TestDeployment;
  let server: TestServer;
  let receiver: Server;
  let hookBase: string;
  let m: TestMedia;
  let org: E2eOrg;
  let secret: string;
  let db: Services;
  const deliveries: Delivery[] = [];
  /** Paths that answer 500 on their first delivery. */
  const failFirst = new Set<string>();

  before(async () => {
    [dep, m] = await Promise.all([
      createDeployment({
        env: { ...LIFECYCLE_ENGINE_ENV, LIPSYNC_ALLOW_PRIVATE_URLS: '1', LIPSYNC_JOB_LEASE_SECONDS: '2' },
      }),
      makeTestMedia(),
    ]);
    receiver = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = req.url ?? '/';
        const seen = deliveries.filter((d) => d.path === path).length;
        const answered = failFirst.has(path) && seen === 0 ? 500 : 200;
        deliveries.push({
          path,
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          answered,
        });
        res.writeHead(answered).end(answered === 200 ? 'ok' : 'try again');
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    hookBase = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    server = await startServer({ env: { ...dep.env } });
    org = await cliOrg({ ...dep.env });
    const s = await runCliJson(['org', 'secret', org.id], { env: { ...dep.env } });
    assert.equal(s.organizationId, org.id);
    secret = String(s.secret);
    assert.ok(secret.length >= 16);
    db = await createServices(loadConfig({ ...dep.env, LOG_LEVEL: 'silent' }), createLogger('silent'));
  });
  after(async () => {
    await server?.stop();
    await db?.close();
    receiver?.closeAllConnections();
    await new Promise<void>((r) => (receiver ? receiver.close(() => r()) : r()));
    await dep?.cleanup();
    await m?.cleanup();
  });

  async function waitForDeliveries(path: string, n: number, ms = 30_000): Promise<Delivery[]> {
    const end = Date.now() + ms;
    for (;;) {
      const got = deliveries.filter((d) => d.path === path);
      if (got.length >= n) return got;
      if (Date.now() > end) assert.fail(`${got.length} deliveries to ${path}, expected ${n}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  test('a completed generation is delivered, signed; a 500 is retried and both attempts are logged', async () => {
    const video = await uploadOverHttp(server, org, m.video);
    const audio = await uploadOverHttp(server, org, m.audioShort);
    failFirst.add('/hook/completed');
    const id = await createGeneration(server, org, {
      model: 'lipsync-2',
      input: [
        { type: 'video', assetId: video },
        { type: 'audio', assetId: audio },
      ],
      webhookUrl: `${hookBase}/hook/completed`,
    });
    const g = await waitDone(server, org, id);
    assert.equal(g.status, 'COMPLETED', JSON.stringify(g));
    // Shown with the path after its first segment masked (receivers keep secrets there).
    assert.equal(g.webhookUrl, `${hookBase}/hook/***`);

    const [first, second] = await waitForDeliveries('/hook/completed', 2);
    assert.equal(first.answered, 500);
    assert.equal(second.answered, 200);
    for (const d of [first, second]) {
      assert.equal(d.headers['content-type'], 'application/json');
      assert.ok(
        signatureValid(secret, d.body, d.headers['webhook-signature'] as string),
        d.headers['webhook-signature'] as string,
      );
      assert.ok(!signatureValid(`${secret}x`, d.body, d.headers['webhook-signature'] as string));
      assert.ok(!signatureValid(secret, `${d.body} `, d.headers['webhook-signature'] as string));
      const payload = JSON.parse(d.body);
      assert.equal(payload.id, id);
      assert.equal(payload.status, 'COMPLETED');
      assert.equal(payload.finalStatus, 'COMPLETED');
      assert.equal(payload.model, 'lipsync-2');
      assert.ok(payload.outputDuration > 1);
      assert.match(payload.outputUrl, /^http/);
    }
    // one delivery, two attempts: same Webhook-Id, attempt numbers 1 and 2 (the retry's backoff is
    // checked on the delivery log below)
    assert.equal(first.headers['webhook-id'], second.headers['webhook-id']);
    assert.equal(first.headers['webhook-attempt'], '1');
    assert.equal(second.headers['webhook-attempt'], '2');

    // the output URL in the webhook is a working download credential
    const payload = JSON.parse(second.body);
    const file = await fetch(payload.outputUrl);
    assert.equal(file.status, 200);
    const path = join(m.dir, `webhook-output-${id}.mp4`);
    await writeFile(path, Buffer.from(await file.arrayBuffer()));
    const p = await probeFile(path);
    assert.ok(p.video && p.audio);

    // the delivery log
    const log = await db.store.webhooks.listForSubject(id);
    assert.equal(log.deliveries.length, 1);
    assert.equal(log.deliveries[0].status, 'delivered');
    assert.equal(log.deliveries[0].attempts, 2);
    assert.deepEqual(
      log.attempts.map((a) => [a.attempt, a.statusCode]),
      [
        [1, 500],
        [2, 200],
      ],
    );
    assert.match(String(log.attempts[0].error), /500/);
    assert.equal(log.attempts[1].error, null);
    // the retry waited for its backoff: attempted no earlier than the least first-retry delay
    const retriedAfter = Date.parse(log.attempts[1].attemptedAt) - Date.parse(log.attempts[0].attemptedAt);
    assert.ok(
      retriedAfter >= nextRetryDelayMs(0, () => 0),
      `retried ${retriedAfter} ms after the first attempt`,
    );
    // the same log through the API
    const viaApi = await api(server, org, 'GET', `/v2/generations/${id}/webhook-deliveries`);
    assert.equal(viaApi.status, 200, viaApi.text);
    assert.equal(viaApi.json.length, 1);
    assert.equal(viaApi.json[0].status, 'delivered');
    assert.deepEqual(
      viaApi.json[0].attempts.map((a: { attempt: number; statusCode: number }) => [a.attempt, a.statusCode]),
      [
        [1, 500],
        [2, 200],
      ],
    );
    // and the server log
    const lines = server
      .stdout()
      .split('\n')
      .filter((l) => l.includes(id) && l.includes('webhook'))
      .map((l) => JSON.parse(l) as { msg: string; attempt: number; statusCode: number });
    assert.ok(
      lines.some((l) => l.attempt === 1 && l.statusCode === 500 && /retry/.test(l.msg)),
      JSON.stringify(lines),
    );
    assert.ok(
      lines.some((l) => l.attempt === 2 && l.statusCode === 200 && /delivered/.test(l.msg)),
      JSON.stringify(lines),
    );
    // no further deliveries once accepted
    await new Promise((r) => setTimeout(r, 1500));
    assert.equal(deliveries.filter((d) => d.path === '/hook/completed').length, 2);
  });

  test('a generation canceled while processing reports FAILED with finalStatus CANCELED', async () => {
    const video = await uploadOverHttp(server, org, m.video);
    const long = await uploadOverHttp(server, org, m.audio61);
    const id = await createGeneration(server, org, {
      model: 'lipsync-2',
      input: [
        { type: 'video', assetId: video },
        { type: 'audio', assetId: long },
      ],
      options: { sync_mode: 'loop' },
      webhookUrl: `${hookBase}/hook/canceled`,
    });
    for (let i = 0; i < 100; i++) {
      const r = await api(server, org, 'GET', `/v2/generate/${id}`);
      if (r.json.status !== 'PENDING') break;
      await new Promise((res) => setTimeout(res, 100));
    }
    const c = await runCliJson(['generation', 'cancel', id], { env: { ...dep.env } });
    assert.equal(c.id, id);
    const g = await waitDone(server, org, id);
    assert.equal(g.status, 'CANCELED', JSON.stringify(g));
    const [d] = await waitForDeliveries('/hook/canceled', 1);
    assert.ok(signatureValid(secret, d.body, d.headers['webhook-signature'] as string));
    const payload = JSON.parse(d.body);
    assert.equal(payload.id, id);
    assert.equal(payload.status, 'FAILED');
    assert.equal(payload.finalStatus, 'CANCELED');
    assert.equal(payload.errorCode, 'generation_canceled');
    assert.equal(payload.outputUrl, null);
  });
});
