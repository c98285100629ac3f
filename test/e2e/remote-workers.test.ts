// Remote workers end to end: an API-only server (LIPSYNC_ROLE=api) and two `lipsync worker --server URL
// --token T` processes, each with its own data folder and no DATABASE_URL, no signing secret. They
// run generations through the worker protocol only; one killed with SIGKILL in the middle of a long
// job loses its lease, the API process's watchdog requeues the job and the other worker completes it;
// a revoked worker token is refused at once; a job token opens its own job's input only; a direct
// upload (presigned PUT) is a remote generation's input.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { access, mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createDeployment,
  runCliJson,
  startServer,
  type TestDeployment,
  type TestServer,
} from '../helpers/index.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { createServices } from '../../src/app/container.js';
import type { Services } from '../../src/services/index.js';
import { S3BlobStore } from '../../src/storage/s3-blob-store.js';
import {
  LIFECYCLE_ENGINE_ENV,
  makeTestMedia,
  probeFile,
  type TestMedia,
} from '../integration/generations-support.js';
import {
  api,
  cliOrg,
  createGeneration,
  downloadOutput,
  uploadOverHttp,
  waitDone,
  type E2eOrg,
} from './generations-support.js';
import {
  allOutput,
  descendants,
  exitOf,
  HANG_GUARD_MS,
  startWorker,
  type WorkerProcess,
} from './worker-processes.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';
const STORAGE = process.env.TEST_STORAGE || 'local';

// On the PostgreSQL pass of scripts/test.sh (TEST_STORAGE=s3) this is the deployment of
// docs/deployment.md: API on PostgreSQL + S3, two remote workers, one killed mid-job.
describe(`remote workers over HTTP (${DB}, ${STORAGE})`, { timeout: 300_000 }, () => {
  let dep: TestDeployment;
  let apiServer: TestServer;
  let m: TestMedia;
  let out: string;
  let org: E2eOrg;
  let db: Services;
  let video: string;
  let short: string;
  let tone61: string;
  const workerDirs: string[] = [];
  const workers: WorkerProcess[] = [];
  const tokens: { id: string; token: string }[] = [];

  before(async () => {
    [dep, m, out] = await Promise.all([
      createDeployment({ env: { ...LIFECYCLE_ENGINE_ENV } }),
      makeTestMedia(),
      mkdtemp(join(tmpdir(), 'lipsync-remote-out-')),
    ]);
    apiServer = await startServer({
      env: {
        ...dep.env,
        LIPSYNC_ROLE: 'api',
        LIPSYNC_JOB_LEASE_SECONDS: '3',
        LIPSYNC_ALLOW_PRIVATE_URLS: 'true',
      },
    });
    org = await cliOrg({ ...dep.env });
    [video, short, tone61] = await Promise.all([
      uploadOverHttp(apiServer, org, m.video),
      uploadOverHttp(apiServer, org, m.audioShort),
      uploadOverHttp(apiServer, org, m.audio61),
    ]);
    db = await createServices(loadConfig({ ...dep.env, LOG_LEVEL: 'silent' }), createLogger('silent'));
    for (const name of ['remote-1', 'remote-2', 'manual']) {
      const t = await runCliJson(['worker-token', 'create', '--name', name, '--json'], {
        env: { ...dep.env },
      });
      assert.match(String(t.token), /^lwt_/);
      tokens.push({ id: String(t.id), token: String(t.token) });
    }
    for (let i = 0; i < 2; i++) {
      const dir = await mkdtemp(join(tmpdir(), `lipsync-remote-worker-${i + 1}-`));
      workerDirs.push(dir);
      // Only what a remote machine would have: its data folder, the engine choice, the log level.
      const w = startWorker(
        `remote worker ${i + 1}`,
        {
          ...LIFECYCLE_ENGINE_ENV,
          LOG_LEVEL: 'info',
          LIPSYNC_DATA_DIR: dir,
          LIPSYNC_ARTICULATION_RECOGNIZE: '0',
          LIPSYNC_WORKER_TOKEN: tokens[i]!.token,
        },
        ['--server', apiServer.url, '--kinds', 'generation'],
      );
      workers.push(w);
    }
    await Promise.all(workers.map((w) => w.ready()));
  });
  after(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await apiServer?.stop();
    await db?.close();
    await dep?.cleanup();
    await m?.cleanup();
    for (const d of [out, ...workerDirs]) if (d) await rm(d, { recursive: true, force: true });
  });

  const body = (audio: string, options: Record<string, unknown> = {}) => ({
    model: 'lipsync-2',
    input: [
      { type: 'video', assetId: video },
      { type: 'audio', assetId: audio },
    ],
    options,
  });

  async function assertOutput(id: string, seconds: number): Promise<void> {
    const { path, url } = await downloadOutput(apiServer, org, id, out);
    const p = await probeFile(path);
    assert.ok(p.video && p.audio, JSON.stringify(p));
    assert.ok(Math.abs((p.duration ?? 0) - seconds) < 0.15, `duration ${p.duration}, want ${seconds}`);
    await assertStoredWhereExpected(id, url);
  }

  /** The output is in the deployment's store: the S3 bucket on S3 (never the API's data folder). */
  async function assertStoredWhereExpected(id: string, url: string): Promise<void> {
    const key = (await db.store.generations.findAny(id))!.outputKey!;
    assert.ok(await db.blobs.exists(key), `${key} is not in the store`);
    const localFile = join(dep.dataDir, 'blobs', key);
    if (dep.storage === 's3') {
      assert.ok(db.blobs instanceof S3BlobStore, 'the deployment stores in S3');
      // downloadOutput fetched this URL: the bucket itself served the output.
      assert.ok(url.startsWith(`${dep.s3!.endpoint}/${dep.s3!.bucket}/${key}?`), url);
      await assert.rejects(access(localFile), `${localFile} exists on local disk`);
    } else {
      assert.ok(url.startsWith(`${apiServer.url}/v2/files/${key}?`), url);
      await access(localFile);
    }
  }

  test('generations complete on remote workers that hold no database', async () => {
    // No database worker runs anywhere: the API-only process itself delivers the webhook.
    const hooks: string[] = [];
    const receiver = createServer((req, res) => {
      let b = '';
      req.on('data', (c: Buffer) => (b += c.toString()));
      req.on('end', () => {
        hooks.push(b);
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    const ids = await Promise.all(
      [0, 1, 2].map((i) =>
        createGeneration(apiServer, org, { ...body(short), ...(i === 0 ? { webhookUrl: hookUrl } : {}) }),
      ),
    );
    try {
      const end = Date.now() + 60_000;
      await waitDone(apiServer, org, ids[0]!, 120_000);
      while (!hooks.some((h) => JSON.parse(h).id === ids[0])) {
        if (Date.now() > end) assert.fail('the API-only server delivered no webhook');
        await new Promise((r) => setTimeout(r, 100));
      }
    } finally {
      await new Promise((r) => receiver.close(r));
    }
    for (const id of ids) {
      const g = await waitDone(apiServer, org, id, 120_000);
      assert.equal(g.status, 'COMPLETED', `${JSON.stringify(g)}\n${allOutput(workers)}`);
      await assertOutput(id, 1.5);
      const job = (await db.store.jobs.findBySubject('generation', id))!;
      assert.equal(job.attempts, 1);
    }
    const ran = workers.flatMap((w) =>
      w
        .logs()
        .filter((l) => l.msg === 'job completed')
        .map((l) => l.subjectId),
    );
    assert.deepEqual(new Set(ran), new Set(ids), allOutput(workers));
    for (const dir of workerDirs) {
      assert.ok(!(await readdir(dir)).some((f) => f.startsWith('lipsync.sqlite')), `${dir} has a database`);
    }
  });

  test('a direct upload (PUT to the store, then registered) is the input of a remote generation', async () => {
    const audio = await readFile(m.audioShort);
    const announced = await api(apiServer, org, 'POST', '/v2/assets/upload', {
      fileName: 'direct.wav',
      contentType: 'audio/wav',
      size: audio.length,
    });
    assert.equal(announced.status, 201, announced.text);
    const { uploadUrl, url } = announced.json as { uploadUrl: string; url: string };
    // On S3 the bytes go straight to the bucket, never through the API.
    assert.ok(uploadUrl.startsWith(apiServer.filesBase), `${uploadUrl} is not under ${apiServer.filesBase}`);
    const put = await fetch(uploadUrl, {
      method: 'PUT',
      headers: { 'content-type': 'audio/wav' },
      body: audio,
    });
    assert.equal(put.status, 200, await put.text());
    const registered = await api(apiServer, org, 'POST', '/v2/assets', { url, type: 'AUDIO' });
    assert.equal(registered.status, 201, registered.text);
    const id = await createGeneration(apiServer, org, body(registered.json.id as string));
    const g = await waitDone(apiServer, org, id, 120_000);
    assert.equal(g.status, 'COMPLETED', `${JSON.stringify(g)}\n${allOutput(workers)}`);
    await assertOutput(id, 1.5);
  });

  test('a remote worker killed mid-job: the lease expires and the other worker completes the job', async () => {
    const id = await createGeneration(
      apiServer,
      org,
      body(tone61, { sync_mode: 'loop', output_resolution: [640, 640] }),
    );
    const end = Date.now() + HANG_GUARD_MS;
    for (;;) {
      const r = await api(apiServer, org, 'GET', `/v2/generate/${id}?include=progress`);
      assert.notEqual(r.json.status, 'COMPLETED', 'the job finished before it could be interrupted');
      if (r.json.status === 'PROCESSING' && r.json.progress_percent > 0) break;
      if (Date.now() > end) assert.fail(`generation ${id} never reported progress\n${allOutput(workers)}`);
      await new Promise((res) => setTimeout(res, 100));
    }
    const job = (await db.store.jobs.findBySubject('generation', id))!;
    assert.equal(job.status, 'running');
    assert.match(job.lockedBy ?? '', /^remote:/);
    const holder = workers.find((w) => w.owner && job.lockedBy!.endsWith(`:${w.owner}`));
    assert.ok(holder, `locked_by ${job.lockedBy} is none of ${workers.map((w) => w.owner).join(', ')}`);
    const survivor = workers.find((w) => w !== holder)!;
    const kids = descendants(holder.pid);
    process.kill(holder.pid, 'SIGKILL');
    for (const k of kids) {
      try {
        process.kill(k, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    assert.equal((await exitOf(holder)).signal, 'SIGKILL');

    const g = await waitDone(apiServer, org, id, 180_000);
    assert.equal(g.status, 'COMPLETED', `${JSON.stringify(g)}\n${allOutput(workers)}`);
    await assertOutput(id, 61);
    const done = (await db.store.jobs.findBySubject('generation', id))!;
    assert.equal(done.attempts, 2, 'claimed by the killed worker, then by the other one');
    assert.ok(
      survivor.logs().some((l) => l.msg === 'job completed' && l.jobId === job.id && l.attempt === 2),
      `the other worker did not complete the second attempt\n${survivor.output()}`,
    );
    // Nothing of the dead attempt is left in the server's store: only the completing attempt's files.
    const gen = (await db.store.generations.findAny(id))!;
    const keep = gen.outputKey!.slice(0, gen.outputKey!.lastIndexOf('/') + 1);
    const left = await db.blobs.list(`jobs/${job.id}/`);
    assert.ok(left.length > 0 && left.every((k) => k.startsWith(keep)), JSON.stringify({ keep, left }));
    const usage = await db.store.db.kysely
      .selectFrom('usage_records')
      .select(['seconds'])
      .where('generation_id', '=', id)
      .execute();
    assert.equal(usage.length, 1, 'billed once');
  });

  test('a job token opens its own job only; a revoked worker token is refused at once', async () => {
    // Stop the remaining worker so that this test's claims are its own.
    await Promise.all(workers.map((w) => w.stop()));
    const manual = tokens[2]!;
    const auth = { authorization: `Bearer ${manual.token}`, 'content-type': 'application/json' };
    const claim = async () => {
      const res = await fetch(`${apiServer.url}/v2/workers/claim`, {
        method: 'POST',
        headers: auth,
        body: JSON.stringify({ kinds: ['generation'], waitSeconds: 10 }),
      });
      assert.equal(res.status, 200, await res.clone().text());
      return (await res.json()) as { job: { id: string }; jobToken: string; inputs: Record<string, string> };
    };
    await createGeneration(apiServer, org, body(short));
    await createGeneration(apiServer, org, body(short));
    const a = await claim();
    const b = await claim();
    const input = (jobId: string, jobToken: string) =>
      fetch(`${apiServer.url}/v2/workers/jobs/${jobId}/input`, {
        headers: { authorization: auth.authorization, 'x-job-token': jobToken },
      });
    assert.equal((await input(a.job.id, b.jobToken)).status, 403, "job B's token on job A's input");
    assert.equal((await input(b.job.id, a.jobToken)).status, 403, "job A's token on job B's input");
    const own = await input(a.job.id, a.jobToken);
    assert.equal(own.status, 200);
    const url = Object.values(((await own.json()) as { inputs: Record<string, string> }).inputs)[0]!;
    assert.equal((await fetch(url)).status, 200, 'the signed input URL downloads without any key');

    const revoked = await runCliJson(['worker-token', 'revoke', manual.id, '--json'], {
      env: { ...dep.env },
    });
    assert.equal(revoked.status, 'revoked');
    const beat = await fetch(`${apiServer.url}/v2/workers/jobs/${a.job.id}/heartbeat`, {
      method: 'POST',
      headers: { ...auth, 'x-job-token': a.jobToken },
      body: '{}',
    });
    assert.equal(beat.status, 401, 'refused on the very next call');
    const me = await fetch(`${apiServer.url}/v2/workers/me`, {
      headers: { authorization: auth.authorization },
    });
    assert.equal(me.status, 401);
    const list = await runCliJson(['worker-token', 'list', '--json'], { env: { ...dep.env } });
    assert.equal(
      (list.tokens as { id: string; status: string }[]).find((t) => t.id === manual.id)?.status,
      'revoked',
    );
  });
});
