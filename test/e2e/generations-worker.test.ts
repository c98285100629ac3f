// A separate `lipsync worker` process on the same database as an API started with LIPSYNC_ROLE=api:
// the API alone never processes anything; the worker does, and a long-poll on the API wakes as soon
// as the worker finishes (LISTEN/NOTIFY on PostgreSQL, the shared watcher on SQLite).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  lipsyncBin,
  createDeployment,
  repoRoot,
  startServer,
  type TestDeployment,
  type TestServer,
} from '../helpers/index.js';
import {
  AUDIO_LONG_SECONDS,
  makeTestMedia,
  probeFile,
  type TestMedia,
  LIFECYCLE_ENGINE_ENV,
} from '../integration/generations-support.js';
import {
  api,
  cliOrg,
  createGeneration,
  downloadOutput,
  uploadOverHttp,
  type E2eOrg,
} from './generations-support.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';
const CONFIG_VARS = /^(PORT|HOST|DATABASE_URL|REDIS_URL|LOG_LEVEL|LIPSYNC_.*)$/;

interface WorkerProcess {
  readonly child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

function startWorker(env: Record<string, string>): WorkerProcess {
  const base: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) if (v !== undefined && !CONFIG_VARS.test(k)) base[k] = v;
  const child = spawn(process.execPath, [lipsyncBin(), 'worker'], {
    cwd: repoRoot,
    env: { ...base, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout?.setEncoding('utf8').on('data', (d: string) => (out += d));
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (out += d));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return {
    child,
    output: () => out,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(t);
    },
  };
}

describe(`API and a separate worker process (${DB})`, { timeout: 240_000 }, () => {
  let dep: TestDeployment;
  let apiServer: TestServer;
  let worker: WorkerProcess | null = null;
  let m: TestMedia;
  let out: string;
  let org: E2eOrg;

  before(async () => {
    [dep, m, out] = await Promise.all([
      createDeployment({ env: LIFECYCLE_ENGINE_ENV }),
      makeTestMedia(),
      mkdtemp(join(tmpdir(), 'lipsync-worker-out-')),
    ]);
    apiServer = await startServer({ env: { ...dep.env, LIPSYNC_ROLE: 'api' } });
    org = await cliOrg({ ...dep.env });
  });
  after(async () => {
    await worker?.stop();
    await apiServer?.stop();
    await dep?.cleanup();
    await m?.cleanup();
    if (out) await rm(out, { recursive: true, force: true });
  });

  test('the worker process runs what the API accepted; a long-poll on the API wakes when it finishes', async () => {
    const video = await uploadOverHttp(apiServer, org, m.video);
    const audio = await uploadOverHttp(apiServer, org, m.audioLong);
    const body = {
      model: 'lipsync-2',
      input: [
        { type: 'video', assetId: video },
        { type: 'audio', assetId: audio },
      ],
      options: { sync_mode: 'bounce' },
    };
    const waiting = await createGeneration(apiServer, org, body);
    // the API alone processes nothing: a wait over real HTTP ends PENDING (that it is held until its
    // timer, and woken by a change, is shown on the event bus in test/integration/generations-read)
    const held = await api(apiServer, org, 'GET', `/v2/generate/${waiting}?wait=true&timeout=2`);
    assert.equal(held.json.status, 'PENDING');
    assert.equal(held.headers.get('x-wait-timeout-seconds'), '2');

    worker = startWorker({ ...dep.env });
    // a long-poll that is already waiting when the worker finishes is woken by the change
    let g = (await api(apiServer, org, 'GET', `/v2/generate/${waiting}?wait=true&timeout=10`)).json;
    // a guard against a hang only
    for (let polls = 1; g.status !== 'COMPLETED' && polls < 6; polls++) {
      g = (await api(apiServer, org, 'GET', `/v2/generate/${waiting}?wait=true&timeout=10`)).json;
    }
    assert.equal(g.status, 'COMPLETED', `${JSON.stringify(g)}\nworker output:\n${worker.output()}`);

    // now with the worker idle: submit and long-poll at once
    const second = await createGeneration(apiServer, org, body);
    const res = await api(apiServer, org, 'GET', `/v2/generate/${second}?wait=true&timeout=10`);
    assert.equal(res.status, 200);
    assert.equal(res.json.status, 'COMPLETED', `${res.text}\nworker output:\n${worker.output()}`);
    assert.equal(res.headers.get('x-wait-mode'), 'long_poll');

    for (const id of [waiting, second]) {
      const p = await probeFile((await downloadOutput(apiServer, org, id, out)).path);
      assert.ok(Math.abs(p.duration - AUDIO_LONG_SECONDS) < 0.15, String(p.duration));
      assert.ok(p.video && p.audio);
      // the worker did the work, the API did not
      assert.match(worker.output(), new RegExp(`"subjectId":"${id}".*"msg":"job completed"`));
      assert.doesNotMatch(
        apiServer.stdout(),
        new RegExp(`"subjectId":"${id}".*"msg":"job (started|completed)"`),
      );
    }
  });
});
