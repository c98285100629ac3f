// Metrics of worker processes, with real processes: an API-only server, a database worker
// (`lipsync worker`) and a remote worker (`lipsync worker --server`), each worker with its own metrics
// listener (LIPSYNC_METRICS_PORT). A generation runs on each worker in turn; the worker's scrape
// (parsed strictly) shows its run, its engine speed and its process metrics; the database worker
// also counts the settle it wrote, the remote worker does not (the server does); the server counts
// the remote worker as connected while it works and no longer once it stopped. LIPSYNC_METRICS_TOKEN
// guards the workers' listeners as it guards the API's.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createDeployment,
  freePort,
  runCliJson,
  startServer,
  type TestDeployment,
  type TestServer,
} from '../helpers/index.js';
import { parsePrometheusText, sampleValue, type Family } from '../helpers/prometheus-text.js';
import { LIFECYCLE_ENGINE_ENV, makeTestMedia, type TestMedia } from '../integration/generations-support.js';
import { cliOrg, createGeneration, uploadOverHttp, waitDone, type E2eOrg } from './generations-support.js';
import { allOutput, exitOf, HANG_GUARD_MS, startWorker, type WorkerProcess } from './worker-processes.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';
const TOKEN = 'worker-metrics-token-0123456789abcdef';

type Families = Map<string, Family>;

async function scrape(base: string, token: string | null = TOKEN): Promise<Families> {
  const res = await fetch(`${base}/metrics`, {
    headers: token ? { authorization: `Bearer ${token}` } : {},
  });
  const text = await res.text();
  assert.equal(res.status, 200, text);
  assert.match(String(res.headers.get('content-type')), /^text\/plain; version=0\.0\.4; charset=utf-8$/);
  return parsePrometheusText(text);
}

/** Scrapes until the listener answers (it starts with the process). */
async function firstScrape(base: string, w: WorkerProcess): Promise<Families> {
  const end = Date.now() + HANG_GUARD_MS;
  for (;;) {
    try {
      return await scrape(base);
    } catch (err) {
      if (w.child.exitCode !== null || Date.now() > end) throw new Error(`${String(err)}\n${w.output()}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

async function until(what: string, ok: () => Promise<boolean>): Promise<void> {
  const end = Date.now() + HANG_GUARD_MS;
  while (!(await ok())) {
    if (Date.now() > end) assert.fail(`${what}: not within ${HANG_GUARD_MS} ms`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

const gen = { kind: 'generation', outcome: 'completed' };
const value = (f: Families, name: string, labels: Record<string, string> = {}): number =>
  sampleValue(f, name, labels) ?? 0;

describe(`metrics of worker processes (${DB})`, { timeout: 300_000 }, () => {
  let dep: TestDeployment;
  let m: TestMedia;
  let api: TestServer;
  let org: E2eOrg;
  let video: string;
  let audio: string;
  let remoteDir: string;
  const workers: WorkerProcess[] = [];

  before(async () => {
    [dep, m, remoteDir] = await Promise.all([
      createDeployment({ env: { ...LIFECYCLE_ENGINE_ENV } }),
      makeTestMedia(),
      mkdtemp(join(tmpdir(), 'lipsync-remote-metrics-')),
    ]);
    api = await startServer({
      env: {
        ...dep.env,
        LIPSYNC_ROLE: 'api',
        // A short lease: a stopped remote worker leaves the gauge soon.
        LIPSYNC_JOB_LEASE_SECONDS: '3',
        LIPSYNC_METRICS_TOKEN: TOKEN,
      },
    });
    org = await cliOrg({ ...dep.env });
    [video, audio] = await Promise.all([
      uploadOverHttp(api, org, m.video),
      uploadOverHttp(api, org, m.audioShort),
    ]);
  });
  after(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await api?.stop();
    await dep?.cleanup();
    await m?.cleanup();
    if (remoteDir) await rm(remoteDir, { recursive: true, force: true });
  });

  const generate = () =>
    createGeneration(api, org, {
      model: 'lipsync-2',
      input: [
        { type: 'video', assetId: video },
        { type: 'audio', assetId: audio },
      ],
    });

  test('a database worker serves its registry: the run, the settle, the engine speed, the process', async () => {
    const port = await freePort();
    const w = startWorker(
      'database worker',
      {
        ...dep.env,
        LIPSYNC_METRICS_PORT: String(port),
        LIPSYNC_METRICS_HOST: '127.0.0.1',
        LIPSYNC_METRICS_TOKEN: TOKEN,
      },
      ['--kinds', 'generation'],
    );
    workers.push(w);
    await w.ready();
    const base = `http://127.0.0.1:${port}`;
    const before = await firstScrape(base, w);
    assert.equal(value(before, 'lipsync_jobs_finished_total', gen), 0);
    assert.equal(value(before, 'lipsync_worker_runs_total', gen), 0, 'the series exists from the start');
    assert.ok(before.has('lipsync_jobs'), 'a worker on the database has the job gauge');
    assert.ok(!before.has('lipsync_remote_workers_connected'), 'a worker serves no remote workers');

    // The token rule of the API's /metrics.
    const refused = await fetch(`${base}/metrics`);
    assert.equal(refused.status, 401);
    assert.equal(refused.headers.get('www-authenticate'), 'Bearer realm="metrics"');
    assert.equal(((await refused.json()) as { errorCode: string }).errorCode, 'unauthorized');
    const wrong = await fetch(`${base}/metrics`, { headers: { authorization: `Bearer ${TOKEN}x` } });
    assert.equal(wrong.status, 401);
    const live = await fetch(`${base}/healthz`);
    assert.equal(live.status, 200);
    assert.deepEqual(await live.json(), { status: 'ok' });
    assert.equal((await fetch(`${base}/v2/projects`)).status, 404, 'the listener serves nothing else');

    const apiBefore = await scrape(api.url);
    const id = await generate();
    const g = await waitDone(api, org, id);
    assert.equal(g.status, 'COMPLETED', `${JSON.stringify(g)}\n${allOutput([w])}`);

    let after = before;
    await until('the worker counted the job', async () => {
      after = await scrape(base);
      return value(after, 'lipsync_jobs_finished_total', gen) === 1;
    });
    assert.equal(value(after, 'lipsync_job_run_duration_seconds_count', gen), 1);
    assert.ok(value(after, 'lipsync_job_run_duration_seconds_sum', gen) > 0);
    assert.equal(value(after, 'lipsync_worker_runs_total', gen), 1);
    assert.equal(value(after, 'lipsync_worker_run_duration_seconds_count', gen), 1);
    assert.ok(value(after, 'lipsync_worker_run_duration_seconds_sum', gen) > 0);
    assert.equal(value(after, 'lipsync_worker_runs_total', { kind: 'generation', outcome: 'failed' }), 0);
    assert.equal(value(after, 'lipsync_engine_frames_per_second_count', { engine: 'passthrough' }), 1);
    assert.ok(value(after, 'lipsync_engine_frames_per_second_sum', { engine: 'passthrough' }) > 0);
    assert.ok(value(after, 'process_cpu_user_seconds_total') > 0);
    assert.equal(after.get('nodejs_heap_size_used_bytes')?.type, 'gauge');
    // The settle was written (and counted) by the worker, not by the API process.
    const apiAfter = await scrape(api.url);
    assert.equal(
      value(apiAfter, 'lipsync_jobs_finished_total', gen),
      value(apiBefore, 'lipsync_jobs_finished_total', gen),
    );

    await w.stop();
    assert.equal((await exitOf(w)).code, 0, w.output());
    await assert.rejects(fetch(`${base}/healthz`), 'the listener closed with the process');
  });

  test('a remote worker serves its runs and engine speed; the server counts it as connected', async () => {
    const t = await runCliJson(['worker-token', 'create', '--name', 'metrics-remote'], {
      env: { ...dep.env },
    });
    const port = await freePort();
    // Only what a remote machine has: no database, no storage settings, no signing secret.
    const w = startWorker(
      'remote worker',
      {
        ...LIFECYCLE_ENGINE_ENV,
        LOG_LEVEL: 'info',
        LIPSYNC_DATA_DIR: remoteDir,
        LIPSYNC_ARTICULATION_RECOGNIZE: '0',
        LIPSYNC_WORKER_TOKEN: String(t.token),
        LIPSYNC_METRICS_PORT: String(port),
        LIPSYNC_METRICS_HOST: '127.0.0.1',
      },
      ['--server', api.url, '--kinds', 'generation'],
    );
    workers.push(w);
    await w.ready();
    const base = `http://127.0.0.1:${port}`;
    const before = await scrape(base, null); // no token configured on this worker: open
    assert.equal(value(before, 'lipsync_worker_runs_total', gen), 0);
    assert.ok(!before.has('lipsync_jobs'), 'no database, no job gauge');

    // It holds a claim open on the server: connected.
    await until('the server sees the remote worker', async () => {
      return value(await scrape(api.url), 'lipsync_remote_workers_connected') === 1;
    });
    const apiBefore = await scrape(api.url);
    const id = await generate();
    const g = await waitDone(api, org, id);
    assert.equal(g.status, 'COMPLETED', `${JSON.stringify(g)}\n${allOutput([w])}`);

    let after = before;
    await until('the remote worker counted its run', async () => {
      after = await scrape(base, null);
      return value(after, 'lipsync_worker_runs_total', gen) === 1;
    });
    assert.equal(value(after, 'lipsync_worker_run_duration_seconds_count', gen), 1);
    assert.ok(value(after, 'lipsync_worker_run_duration_seconds_sum', gen) > 0);
    assert.equal(value(after, 'lipsync_engine_frames_per_second_count', { engine: 'passthrough' }), 1);
    assert.ok(value(after, 'process_resident_memory_bytes') > 0);
    // The job settled on the server: counted there, not here.
    assert.equal(value(after, 'lipsync_jobs_finished_total', gen), 0);
    const apiAfter = await scrape(api.url);
    assert.equal(
      value(apiAfter, 'lipsync_jobs_finished_total', gen) -
        value(apiBefore, 'lipsync_jobs_finished_total', gen),
      1,
    );
    assert.equal(value(apiAfter, 'lipsync_remote_workers_connected'), 1);
    const claims = (f: Families, status: number) =>
      value(f, 'lipsync_http_request_duration_seconds_count', {
        method: 'POST',
        route: '/v2/workers/claim',
        status_code: String(status),
      });
    assert.ok(claims(apiAfter, 200) - claims(apiBefore, 200) >= 1, 'the claim that got the job');

    await w.stop();
    assert.equal((await exitOf(w)).code, 0, w.output());
    await until('a stopped remote worker leaves the gauge (after a lease period)', async () => {
      return value(await scrape(api.url), 'lipsync_remote_workers_connected') === 0;
    });
  });
});
