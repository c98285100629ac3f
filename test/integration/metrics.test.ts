// GET /metrics, /healthz and /readyz on a real database: the scrape parses as Prometheus text and its
// counters move with real requests, real generations (passthrough engine, real ffmpeg) and real webhook
// deliveries; LIPSYNC_METRICS_TOKEN guards the scrape; readiness fails for a closed database, a blob
// store that errors, a server that is not listening and one that is shutting down or draining; a
// draining instance answers open long-polls (a generation's wait, a worker's claim) at once; the
// remote-workers gauge follows the worker tokens that call. (The real process's SIGTERM:
// test/e2e/graceful-shutdown.test.ts; worker processes' listeners: test/e2e/worker-metrics.test.ts.)
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { rm, symlink } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { createOrgWithKey, createTestServices, type TestOrg, type TestServices } from '../helpers/index.js';
import { parsePrometheusText, sampleValue, type Family } from '../helpers/prometheus-text.js';
import { startBackground, type Background } from '../../src/app/runtime.js';
import { READINESS_PROBE_KEY } from '../../src/http/routes/health.js';
import type { App } from '../../src/http/app.js';
import { WorkerTokenService } from '../../src/services/worker-tokens.js';
import {
  LIFECYCLE_ENGINE_ENV,
  makeTestMedia,
  postGenerate,
  startMediaServer,
  uploadAsset,
  waitTerminal,
  type MediaServer,
  type TestMedia,
} from './generations-support.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';
const TOKEN = 'metrics-token-for-the-test-0123456789';

type Families = Map<string, Family>;

async function scrape(app: App, headers: Record<string, string> = {}): Promise<Families> {
  const res = await app.inject({ method: 'GET', url: '/metrics', headers });
  assert.equal(res.statusCode, 200, res.body);
  assert.match(String(res.headers['content-type']), /^text\/plain; version=0\.0\.4; charset=utf-8$/);
  return parsePrometheusText(res.body);
}

const requests = (f: Families, method: string, route: string, status: number): number =>
  sampleValue(f, 'lipsync_http_request_duration_seconds_count', {
    method,
    route,
    status_code: String(status),
  }) ?? 0;

/** Every route label value the request histogram has. */
const routesSeen = (f: Families): Set<string> =>
  new Set(f.get('lipsync_http_request_duration_seconds')!.samples.map((s) => s.labels.route!));

async function until(what: string, ok: () => Promise<boolean>, deadlineMs = 30_000): Promise<void> {
  const end = Date.now() + deadlineMs;
  while (!(await ok())) {
    if (Date.now() > end) assert.fail(`${what}: not within ${deadlineMs} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

async function getJson(
  url: string,
): Promise<{ status: number; connection: string | null; body: Record<string, any> }> {
  const res = await fetch(url);
  return {
    status: res.status,
    connection: res.headers.get('connection'),
    body: (await res.json()) as Record<string, any>,
  };
}

describe(`metrics and probes (${DB})`, { timeout: 240_000 }, () => {
  let t: TestServices;
  let m: TestMedia;
  let receiver: MediaServer;
  let org: TestOrg;
  let background: Background | null = null;

  before(async () => {
    [t, m, receiver] = await Promise.all([
      createTestServices({
        env: {
          ...LIFECYCLE_ENGINE_ENV,
          LIPSYNC_RATE_LIMIT_ENABLED: 'false',
          // The webhook receiver is this machine's own test server.
          LIPSYNC_ALLOW_PRIVATE_URLS: 'true',
        },
      }),
      makeTestMedia(),
      startMediaServer(),
    ]);
    org = await createOrgWithKey(t.services);
  });
  after(async () => {
    await background?.stop();
    await t?.cleanup();
    await m?.cleanup();
    await receiver?.close();
  });

  test('the scrape counts requests by route pattern, jobs, their run time, the engine and webhooks', async () => {
    const video = await uploadAsset(t.app, org.owner.headers, m.video);
    const audio = await uploadAsset(t.app, org.owner.headers, m.audioShort);
    const before = await scrape(t.app);

    for (let i = 0; i < 3; i++) {
      const res = await t.app.inject({ method: 'GET', url: '/v2/projects', headers: org.owner.headers });
      assert.equal(res.statusCode, 200, res.body);
    }
    const missing = await t.app.inject({ method: 'GET', url: '/no/such/route-7f3a' });
    assert.equal(missing.statusCode, 404);

    const generate = async (webhookUrl: string) => {
      const res = await postGenerate(t.app, org.owner.headers, {
        model: 'lipsync-2',
        input: [
          { type: 'video', assetId: video },
          { type: 'audio', assetId: audio },
        ],
        webhookUrl,
      });
      assert.equal(res.statusCode, 201, res.body);
      return res.json().id as string;
    };
    const delivered = await generate(receiver.route('/hook-ok', { status: 204 }));
    const retried = await generate(receiver.route('/hook-busy', { status: 503 }));

    // No worker yet: both jobs wait in the queue, and the gauge reads the database.
    const queued = await scrape(t.app);
    assert.equal(sampleValue(queued, 'lipsync_jobs', { kind: 'generation', status: 'queued' }), 2);
    assert.equal(sampleValue(queued, 'lipsync_jobs', { kind: 'generation', status: 'running' }), 0);
    assert.equal(sampleValue(queued, 'lipsync_jobs', { kind: 'tts', status: 'queued' }), 0);

    background = startBackground(t.services);
    for (const id of [delivered, retried]) {
      assert.equal((await waitTerminal(t.app, org.owner.headers, id)).status, 'COMPLETED');
    }
    const finished = (f: Families) =>
      sampleValue(f, 'lipsync_jobs_finished_total', { kind: 'generation', outcome: 'completed' }) ?? 0;
    const webhooks = (f: Families, outcome: string) =>
      sampleValue(f, 'lipsync_webhook_deliveries_total', { outcome }) ?? 0;
    let after = before;
    await until('both jobs counted and both webhooks tried', async () => {
      after = await scrape(t.app);
      return (
        finished(after) - finished(before) === 2 &&
        webhooks(after, 'delivered') > webhooks(before, 'delivered') &&
        webhooks(after, 'retry') > webhooks(before, 'retry')
      );
    });

    // HTTP: by route pattern and status; the scrapes themselves are not counted.
    assert.equal(
      requests(after, 'GET', '/v2/projects', 200) - requests(before, 'GET', '/v2/projects', 200),
      3,
    );
    assert.equal(
      requests(after, 'POST', '/v2/generate', 201) - requests(before, 'POST', '/v2/generate', 201),
      2,
    );
    assert.equal(requests(after, 'GET', 'unmatched', 404) - requests(before, 'GET', 'unmatched', 404), 1);
    assert.ok(requests(after, 'GET', '/v2/generate/:id', 200) >= 2, 'the long-polls, by their pattern');
    const routes = routesSeen(after);
    for (const raw of ['/metrics', '/no/such/route-7f3a', `/v2/generate/${delivered}`]) {
      assert.ok(![...routes].some((r) => r.includes(raw)), `no series for ${raw}: ${[...routes].join(' ')}`);
    }
    const latencySum = sampleValue(after, 'lipsync_http_request_duration_seconds_sum', {
      method: 'GET',
      route: '/v2/projects',
      status_code: '200',
    });
    assert.ok(latencySum! > 0);

    // Jobs: finished by kind and outcome, their run time, and nothing left queued or running.
    const runs = (f: Families, suffix: string) =>
      sampleValue(f, `lipsync_job_run_duration_seconds${suffix}`, {
        kind: 'generation',
        outcome: 'completed',
      }) ?? 0;
    assert.equal(runs(after, '_count') - runs(before, '_count'), 2);
    const runSeconds = runs(after, '_sum') - runs(before, '_sum');
    // in seconds, from each job's own first start to its end
    let recorded = 0;
    for (const id of [delivered, retried]) {
      const job = await t.services.store.jobs.findBySubject('generation', id);
      assert.ok(job?.startedAt != null && job.finishedAt != null, `job of ${id}`);
      recorded += (job.finishedAt - job.startedAt) / 1000;
    }
    assert.ok(runSeconds > 0, `run time ${runSeconds} s`);
    assert.ok(
      Math.abs(runSeconds - recorded) < 1e-6,
      `run time ${runSeconds} s, the jobs record ${recorded} s`,
    );
    assert.equal(sampleValue(after, 'lipsync_jobs', { kind: 'generation', status: 'queued' }), 0);
    assert.equal(sampleValue(after, 'lipsync_jobs', { kind: 'generation', status: 'running' }), 0);
    assert.equal(
      sampleValue(after, 'lipsync_jobs_finished_total', { kind: 'generation', outcome: 'failed' }),
      0,
    );

    // The engine step: one observation per generation, frames over seconds.
    const fps = (f: Families, suffix: string) =>
      sampleValue(f, `lipsync_engine_frames_per_second${suffix}`, { engine: 'passthrough' }) ?? 0;
    assert.equal(fps(after, '_count') - fps(before, '_count'), 2);
    assert.ok(fps(after, '_sum') > 0);

    // Webhooks: the 204 receiver once, the 503 one tried again later, none given up.
    assert.equal(webhooks(after, 'delivered') - webhooks(before, 'delivered'), 1);
    assert.equal(webhooks(after, 'failed'), 0);
    assert.equal(receiver.hits.get('/hook-ok'), 1);

    // The process's default metrics share the registry.
    assert.ok((sampleValue(after, 'process_cpu_user_seconds_total') ?? 0) > 0);
    assert.equal(after.get('nodejs_heap_size_used_bytes')?.type, 'gauge');
  });

  test('LIPSYNC_METRICS_TOKEN: the scrape needs Authorization: Bearer <token>', async () => {
    const open = await t.app.inject({ method: 'GET', url: '/metrics' });
    assert.equal(open.statusCode, 200, 'without a token configured the scrape is open');

    const guarded = await createTestServices({ shareDatabaseWith: t, env: { LIPSYNC_METRICS_TOKEN: TOKEN } });
    try {
      const refused = [
        {},
        { authorization: `Bearer ${TOKEN}x` },
        { authorization: `Bearer ${TOKEN.slice(0, -1)}` },
        { authorization: `Basic ${Buffer.from(`metrics:${TOKEN}`).toString('base64')}` },
        { authorization: TOKEN },
        org.owner.headers, // an API key does not open it
      ];
      for (const headers of refused) {
        const res = await guarded.app.inject({ method: 'GET', url: '/metrics', headers });
        assert.equal(res.statusCode, 401, JSON.stringify(headers));
        const body = res.json();
        assert.equal(body.statusCode, 401);
        assert.equal(body.errorCode, 'unauthorized');
        assert.equal(typeof body.message, 'string');
        assert.equal(typeof body.suggestion, 'string');
        assert.equal(res.headers['www-authenticate'], 'Bearer realm="metrics"');
        assert.doesNotMatch(res.body, new RegExp(TOKEN));
      }
      const scraped = await scrape(guarded.app, { authorization: `Bearer ${TOKEN}` });
      await scrape(guarded.app, { authorization: `bearer ${TOKEN}` }); // the scheme is case-insensitive
      assert.ok(scraped.has('lipsync_jobs_finished_total'));
      assert.ok(!routesSeen(scraped).has('/metrics'), 'refused scrapes are not counted either');
      // The probes stay open.
      assert.equal((await guarded.app.inject({ method: 'GET', url: '/healthz' })).statusCode, 200);
    } finally {
      await guarded.cleanup();
    }
  });

  test('/healthz answers while the process is up; /readyz checks the server, database and blob store', async () => {
    const live = await t.app.inject({ method: 'GET', url: '/healthz' });
    assert.equal(live.statusCode, 200);
    assert.deepEqual(live.json(), { status: 'ok' });

    // Built but not listening (inject only): not ready.
    const idle = await t.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(idle.statusCode, 503, idle.body);
    assert.equal(idle.json().errorCode, 'controller_dependency_error');
    assert.deepEqual(idle.json().checks, { database: 'ok', blobStore: 'ok', server: 'not_listening' });
    assert.match(idle.json().message, /server not listening/);

    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const ready = await getJson(`${base}/readyz`);
    assert.equal(ready.status, 200);
    assert.deepEqual(ready.body, {
      status: 'ready',
      checks: { database: 'ok', blobStore: 'ok', server: 'ok' },
    });

    // The blob store errors on the probe key (a symbolic link that points at itself: ELOOP).
    const loop = join(t.dataDir, 'blobs', READINESS_PROBE_KEY.split('/')[0]!);
    await symlink(loop, loop);
    try {
      const broken = await getJson(`${base}/readyz`);
      assert.equal(broken.status, 503);
      assert.equal(broken.body.statusCode, 503);
      assert.equal(broken.body.errorCode, 'controller_dependency_error');
      assert.deepEqual(broken.body.checks, { database: 'ok', blobStore: 'failed', server: 'ok' });
      assert.equal((await getJson(`${base}/healthz`)).status, 200, 'liveness does not depend on storage');
    } finally {
      await rm(loop, { force: true });
    }
    assert.equal((await getJson(`${base}/readyz`)).status, 200);
  });

  test('/healthz answers while the rate-limit store (Redis) is unreachable; other routes do not', async () => {
    const unused = createServer();
    await new Promise<void>((r) => unused.listen(0, '127.0.0.1', r));
    const port = (unused.address() as AddressInfo).port;
    await new Promise((r) => unused.close(r));
    const d = await createTestServices({
      shareDatabaseWith: t,
      env: { REDIS_URL: `redis://127.0.0.1:${port}`, LIPSYNC_RATE_LIMIT_ENABLED: 'true' },
    });
    try {
      const live = await d.app.inject({ method: 'GET', url: '/healthz' });
      assert.equal(live.statusCode, 200, live.body);
      assert.equal(live.headers['x-ratelimit-limit'], undefined, 'the liveness probe is not rate-limited');
      const api = await d.app.inject({ method: 'GET', url: '/v2/projects', headers: org.owner.headers });
      assert.equal(api.statusCode, 500, 'with the rate-limit store down the API itself cannot answer');
    } finally {
      await d.cleanup();
    }
  });

  test('/readyz: 503 when the database is closed', async () => {
    const d = await createTestServices({ shareDatabaseWith: t });
    try {
      const base = await d.app.listen({ port: 0, host: '127.0.0.1' });
      assert.equal((await getJson(`${base}/readyz`)).status, 200);
      await d.services.db.close();
      const res = await getJson(`${base}/readyz`);
      assert.equal(res.status, 503);
      assert.equal(res.body.errorCode, 'controller_dependency_error');
      assert.deepEqual(res.body.checks, { database: 'failed', blobStore: 'ok', server: 'ok' });
      assert.match(res.body.message, /database failed/);
      assert.equal(
        (await getJson(`${base}/healthz`)).status,
        200,
        'liveness does not depend on the database',
      );
    } finally {
      await d.cleanup();
    }
  });

  test('/readyz: 503 shutting_down for a probe in flight when the server starts closing', async () => {
    let closing: Promise<void> | null = null;
    const d = await createTestServices({
      shareDatabaseWith: t,
      // A shutdown that begins while the probe is being answered (SIGTERM at that moment).
      configureApp: (app) => {
        app.addHook('onRequest', async (request) => {
          if (request.url !== '/readyz' || closing) return;
          closing = app.close();
          // The server stops listening only after the close hooks ran (then it waits for this request).
          while (app.server.listening) await new Promise((r) => setTimeout(r, 5));
        });
      },
    });
    try {
      const base = await d.app.listen({ port: 0, host: '127.0.0.1' });
      const res = await getJson(`${base}/readyz`);
      assert.equal(res.status, 503);
      assert.equal(res.body.errorCode, 'controller_dependency_error');
      assert.deepEqual(res.body.checks, { database: 'ok', blobStore: 'ok', server: 'shutting_down' });
      assert.equal(res.connection, 'close', 'the answer does not keep its connection (and the close) open');
      assert.ok(closing, 'the close began during the request');
      await closing;
    } finally {
      await d.cleanup();
    }
  });

  test('draining: /readyz 503 at once, open long-polls answer their state, answers close connections', async () => {
    // No worker here: the generation stays queued and its long-poll would wait out its timeout.
    await background?.stop();
    background = null;
    const d = await createTestServices({
      shareDatabaseWith: t,
      env: { LIPSYNC_RATE_LIMIT_ENABLED: 'false' },
    });
    try {
      const base = await d.app.listen({ port: 0, host: '127.0.0.1' });
      const { token } = await new WorkerTokenService(d.services.store.db.kysely).create('drain');
      const video = await uploadAsset(d.app, org.owner.headers, m.video);
      const audio = await uploadAsset(d.app, org.owner.headers, m.audioShort);
      const created = await postGenerate(d.app, org.owner.headers, {
        model: 'lipsync-2',
        input: [
          { type: 'video', assetId: video },
          { type: 'audio', assetId: audio },
        ],
      });
      assert.equal(created.statusCode, 201, created.body);
      const id = created.json().id as string;
      const before = await getJson(`${base}/readyz`);
      assert.equal(before.status, 200);
      assert.notEqual(before.connection, 'close');

      const waitersBefore = d.services.bus.waiterCount();
      const longPoll = fetch(`${base}/v2/generate/${id}?wait=true&timeout=10`, {
        headers: org.owner.headers,
      });
      const claim = fetch(`${base}/v2/workers/claim`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ kinds: ['transcription'], waitSeconds: 25 }),
      });
      // Both are held open: the generation's waiter is on the bus, the claim counts its worker.
      await until('the long-poll waits', async () => d.services.bus.waiterCount() > waitersBefore);
      await until('the claim is open', async () => d.services.remoteWorkers.connected() === 1);

      d.services.drain.begin();
      const polled = await longPoll;
      assert.equal(polled.status, 200);
      assert.equal(((await polled.json()) as { status: string }).status, 'PENDING');
      assert.equal(polled.headers.get('connection'), 'close');
      const claimed = await claim;
      assert.equal(claimed.status, 204);
      assert.equal(claimed.headers.get('retry-after'), '1');
      // Nothing is left holding a request open: the close completes.
      await d.app.close();
    } finally {
      await d.cleanup();
    }
  });

  test('draining: /readyz says shutting_down while the listener still serves', async () => {
    const d = await createTestServices({ shareDatabaseWith: t });
    try {
      const base = await d.app.listen({ port: 0, host: '127.0.0.1' });
      d.services.drain.begin();
      const res = await getJson(`${base}/readyz`);
      assert.equal(res.status, 503);
      assert.deepEqual(res.body.checks, { database: 'ok', blobStore: 'ok', server: 'shutting_down' });
      assert.match(res.body.message, /server shutting down/);
      assert.equal(res.connection, 'close');
      const live = await getJson(`${base}/healthz`);
      assert.equal(live.status, 200, 'still live and serving');
      assert.equal(live.connection, 'close');
    } finally {
      await d.cleanup();
    }
  });

  test('lipsync_remote_workers_connected: worker tokens heard from within a lease period', async () => {
    const d = await createTestServices({
      shareDatabaseWith: t,
      env: { LIPSYNC_JOB_LEASE_SECONDS: '2', LIPSYNC_RATE_LIMIT_ENABLED: 'false' },
    });
    try {
      const tokens = new WorkerTokenService(d.services.store.db.kysely);
      const [a, b] = [await tokens.create('gpu-a'), await tokens.create('gpu-b')];
      const connected = async () => sampleValue(await scrape(d.app), 'lipsync_remote_workers_connected');
      assert.equal(await connected(), 0);
      assert.equal((await scrape(d.app)).get('lipsync_remote_workers_connected')?.type, 'gauge');
      const me = (token: string) =>
        d.app.inject({ method: 'GET', url: '/v2/workers/me', headers: { authorization: `Bearer ${token}` } });
      assert.equal((await me(a.token)).statusCode, 200);
      assert.equal((await me(a.token)).statusCode, 200);
      assert.equal(await connected(), 1, 'one token, however many calls');
      assert.equal((await me(b.token)).statusCode, 200);
      assert.equal(await connected(), 2);
      assert.equal((await me('lwt_not-a-token')).statusCode, 401);
      assert.equal(await connected(), 2, 'a refused token is nobody');
      await until('silent workers leave after a lease period', async () => (await connected()) === 0);
    } finally {
      await d.cleanup();
    }
  });

  test('the test parser refuses malformed exposition text', () => {
    const bad = [
      'no_newline 1',
      'bad-name 1\n',
      'x{a="1} 1\n',
      'x{a="\\q"} 1\n',
      'x 1 2 3\n',
      'x one\n',
      'x{a="1"} 1\nx{a="1"} 2\n',
      '# TYPE x counter\nx -1\n',
      '# TYPE x gauge\nx 1\n# TYPE y gauge\ny 1\nx{a="b"} 2\n',
      '# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_sum 1\nh_count 1\n',
      '# TYPE h histogram\nh_bucket{le="1"} 1\nh_sum 1\nh_count 1\n',
      '# TYPE h histogram\nh_bucket{le="+Inf"} 2\nh_sum 1\nh_count 1\n',
    ];
    for (const text of bad) assert.throws(() => parsePrometheusText(text), Error, JSON.stringify(text));
    const good = parsePrometheusText(
      '# HELP x A \\\\ help\\nline.\n# TYPE x counter\nx{a="q\\"uote",b="new\\nline",} 1.5e3 1700000000000\n',
    );
    assert.equal(good.get('x')?.help, 'A \\ help\nline.');
    assert.equal(sampleValue(good, 'x', { a: 'q"uote', b: 'new\nline' }), 1500);
  });
});
