// Several `lipsync worker` processes on one queue, end to end: an API-only server (LIPSYNC_ROLE=api) and
// real worker processes on the same data folder and database. Workers race for the queue and every job
// runs exactly once; a worker stopped with SIGTERM in the middle of a job hands it back (the attempt is
// refunded) and another worker completes it; a worker killed with SIGKILL loses its lease, a watchdog
// (another worker's or the API's) requeues the job, and the other worker completes it (a second attempt,
// billed once, no file of the dead attempt left behind).
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createDeployment, startServer, type TestDeployment, type TestServer } from '../helpers/index.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { createServices } from '../../src/app/container.js';
import type { Services } from '../../src/services/index.js';
import {
  AUDIO_SHORT_SECONDS,
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
  startWorkers,
  type WorkerProcess,
} from './worker-processes.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';

/** What a worker logs when a run did not end as the one run of its job. */
const BAD_RUN_MESSAGES = new Set([
  'lease lost; the run stopped and wrote nothing',
  'job finished elsewhere; its output was discarded',
  'job failed',
  'job failure recorded',
]);

describe(`several worker processes on one queue (${DB})`, { timeout: 300_000 }, () => {
  let dep: TestDeployment;
  let apiServer: TestServer;
  let m: TestMedia;
  let out: string;
  let org: E2eOrg;
  let db: Services;
  let video: string;
  let short: string;
  let tone61: string;
  let workers: WorkerProcess[] = [];

  before(async () => {
    [dep, m, out] = await Promise.all([
      createDeployment({ env: { ...LIFECYCLE_ENGINE_ENV } }),
      makeTestMedia(),
      mkdtemp(join(tmpdir(), 'lipsync-workers-out-')),
    ]);
    apiServer = await startServer({ env: { ...dep.env, LIPSYNC_ROLE: 'api' } });
    org = await cliOrg({ ...dep.env });
    [video, short, tone61] = await Promise.all([
      uploadOverHttp(apiServer, org, m.video),
      uploadOverHttp(apiServer, org, m.audioShort),
      uploadOverHttp(apiServer, org, m.audio61),
    ]);
    db = await createServices(loadConfig({ ...dep.env, LOG_LEVEL: 'silent' }), createLogger('silent'));
  });
  after(async () => {
    await Promise.all(workers.map((w) => w.stop()));
    await apiServer?.stop();
    await db?.close();
    await dep?.cleanup();
    await m?.cleanup();
    if (out) await rm(out, { recursive: true, force: true });
  });

  /** Stops this test's workers (SIGTERM) before the next test starts its own. */
  async function stopWorkers(): Promise<void> {
    await Promise.all(workers.map((w) => w.stop()));
    workers = [];
  }

  const shortBody = () => ({
    model: 'lipsync-2',
    input: [
      { type: 'video', assetId: video },
      { type: 'audio', assetId: short },
    ],
  });
  /** 61 s of looped output at 640x640: surely still running when it is interrupted. */
  const longBody = () => ({
    model: 'lipsync-2',
    input: [
      { type: 'video', assetId: video },
      { type: 'audio', assetId: tone61 },
    ],
    options: { sync_mode: 'loop', output_resolution: [640, 640] },
  });

  async function usageRows(generationId: string) {
    return db.store.db.kysely
      .selectFrom('usage_records')
      .select(['generation_id', 'seconds'])
      .where('generation_id', '=', generationId)
      .execute();
  }

  /** Polls (include=progress) until the generation is PROCESSING with progress reported. */
  async function waitProcessing(id: string): Promise<number> {
    const end = Date.now() + HANG_GUARD_MS;
    for (;;) {
      const r = await api(apiServer, org, 'GET', `/v2/generate/${id}?include=progress`);
      assert.equal(r.status, 200, r.text);
      assert.notEqual(r.json.status, 'COMPLETED', 'the job finished before it could be interrupted');
      assert.ok(['PENDING', 'PROCESSING'].includes(r.json.status), r.text);
      if (r.json.status === 'PROCESSING' && r.json.progress_percent > 0) return r.json.progress_percent;
      if (Date.now() > end) assert.fail(`generation ${id} never reported progress\n${allOutput(workers)}`);
      await new Promise((res) => setTimeout(res, 100));
    }
  }

  /** The running job of a generation and the worker whose lease it is under. */
  async function holderOf(id: string) {
    const job = (await db.store.jobs.findBySubject('generation', id))!;
    assert.equal(job.status, 'running', JSON.stringify(job));
    const holder = workers.find((w) => w.owner === job.lockedBy);
    assert.ok(holder, `locked_by ${job.lockedBy} is none of ${workers.map((w) => w.owner).join(', ')}`);
    assert.equal(job.lockedBy!.split(':').at(-2), String(holder.pid), 'locked_by names the pid');
    return { job, holder, other: workers.filter((w) => w !== holder) };
  }

  /**
   * The files left in the deployment's temporary folder. The owner markers and the processes' own
   * (empty) job folders are not leftovers (src/app/scratch.ts).
   */
  async function tempEntries(): Promise<string[]> {
    const root = join(dep.dataDir, 'tmp');
    const entries = await readdir(root, { recursive: true, withFileTypes: true }).catch(() => []);
    return entries
      .filter((e) => !e.isDirectory())
      .map((e) => relative(root, join(e.parentPath ?? e.path, e.name)))
      .filter((p) => !p.startsWith('.owners'));
  }

  /** The output is downloadable, has video and audio and lasts `seconds`. */
  async function assertOutput(id: string, seconds: number): Promise<void> {
    const p = await probeFile((await downloadOutput(apiServer, org, id, out)).path);
    assert.ok(p.video && p.audio, JSON.stringify(p));
    assert.ok(Math.abs(p.duration - seconds) < 0.15, `${id}: ${p.duration} s, expected ${seconds}`);
  }

  test('three workers race for eight generations: each runs exactly once, and the work is shared', async () => {
    workers = await startWorkers(3, { ...dep.env });
    try {
      const ids = await Promise.all(
        Array.from({ length: 8 }, () => createGeneration(apiServer, org, shortBody())),
      );
      for (const id of ids) {
        const g = await waitDone(apiServer, org, id, 120_000);
        assert.equal(g.status, 'COMPLETED', `${JSON.stringify(g)}\n${allOutput(workers)}`);
      }

      for (const id of ids) {
        const job = (await db.store.jobs.findBySubject('generation', id))!;
        assert.equal(job.status, 'completed');
        assert.equal(job.attempts, 1, `${id} was claimed ${job.attempts} times\n${allOutput(workers)}`);
        assert.equal(job.leaseToken, null);
        assert.equal(job.lockedBy, null);
        assert.equal(job.lastError, null);
        const usage = await usageRows(id);
        assert.equal(usage.length, 1, `${id}: ${usage.length} usage records`);
        assert.ok(Math.abs(Number(usage[0].seconds) - AUDIO_SHORT_SECONDS) < 0.15, String(usage[0].seconds));
        // one run, by one worker, from start to completion
        const started = workers.flatMap((w) =>
          w.logs().filter((l) => l.msg === 'job started' && l.subjectId === id),
        );
        const completed = workers.flatMap((w) =>
          w.logs().filter((l) => l.msg === 'job completed' && l.subjectId === id),
        );
        assert.equal(started.length, 1, `${id} started ${started.length} times\n${allOutput(workers)}`);
        assert.equal(completed.length, 1, `${id} completed ${completed.length} times`);
      }
      const runs = workers.flatMap((w) => w.logs().filter((l) => l.msg === 'job started'));
      assert.equal(runs.length, ids.length, 'no run other than these');
      // no run lost its lease, was discarded or failed (warnings such as a busy database are fine)
      for (const w of workers) {
        const bad = w
          .logs()
          .filter(
            (l) => Number(l.level) >= 50 || (l.jobId !== undefined && BAD_RUN_MESSAGES.has(String(l.msg))),
          );
        assert.deepEqual(bad, [], `${w.name}\n${w.output()}`);
      }
      // the API (LIPSYNC_ROLE=api) ran none of them
      assert.doesNotMatch(apiServer.stdout(), /"msg":"job started"/);

      // the queue was shared: more than one process ran jobs
      const busy = workers.filter((w) => w.logs().some((l) => l.msg === 'job started'));
      assert.ok(
        busy.length >= 2,
        `only ${busy.map((w) => w.name).join(', ')} ran jobs\n${allOutput(workers)}`,
      );
      const ownersSeen = new Set(busy.map((w) => w.owner));
      assert.equal(ownersSeen.size, busy.length, 'each worker process has its own owner id');
    } finally {
      await stopWorkers();
    }
  });

  test('SIGTERM mid-job: the worker exits 0 and hands the job back; another completes it, billed once', async () => {
    workers = await startWorkers(2, { ...dep.env });
    try {
      const id = await createGeneration(apiServer, org, longBody());
      const progress = await waitProcessing(id);
      assert.ok(progress > 0 && progress < 100, `progress ${progress}`);
      const { job, holder, other } = await holderOf(id);
      assert.equal(job.attempts, 1);
      const kids = descendants(holder.pid);

      holder.child.kill('SIGTERM');
      const exit = await exitOf(holder);
      assert.deepEqual(exit, { code: 0, signal: null }, holder.output());
      assert.ok(
        holder.logs().some((l) => l.msg === 'job handed back at shutdown' && l.jobId === job.id),
        `no hand-back logged\n${holder.output()}`,
      );
      assert.ok(!holder.logs().some((l) => l.msg === 'job completed'), holder.output());
      // the ffmpeg processes of the stopped run do not outlive it
      const alive = kids.filter((k) => {
        try {
          process.kill(k, 0);
          return true;
        } catch {
          return false;
        }
      });
      assert.deepEqual(alive, [], `children of the stopped worker still running: ${alive.join(', ')}`);

      const g = await waitDone(apiServer, org, id, 180_000);
      assert.equal(g.status, 'COMPLETED', `${JSON.stringify(g)}\n${allOutput(workers)}`);
      await assertOutput(id, 61);

      const done = (await db.store.jobs.findBySubject('generation', id))!;
      assert.equal(done.status, 'completed');
      assert.equal(done.attempts, 1, 'the interrupted attempt was refunded');
      assert.equal(done.lastError, null);
      const usage = await usageRows(id);
      assert.equal(usage.length, 1, `${usage.length} usage records`);
      assert.ok(Math.abs(Number(usage[0].seconds) - 61) < 0.15, String(usage[0].seconds));
      // the other worker ran it to the end
      const [survivor] = other;
      assert.ok(
        survivor.logs().some((l) => l.msg === 'job completed' && l.jobId === job.id),
        `the other worker did not complete the job\n${allOutput(workers)}`,
      );
      // only the completed output is left of the job's attempts
      const gen = (await db.store.generations.findAny(id))!;
      assert.deepEqual(await db.blobs.list(`jobs/${job.id}/`), [gen.outputKey]);
      // neither run left temporary files behind (the stopped one removed its own on the way out)
      assert.deepEqual(await tempEntries(), []);
    } finally {
      await stopWorkers();
    }
  });

  test('kill -9 mid-job with a short lease: the watchdog requeues it, another worker completes it, billed once', async () => {
    workers = await startWorkers(2, { ...dep.env, LIPSYNC_JOB_LEASE_SECONDS: '2' });
    try {
      const id = await createGeneration(apiServer, org, longBody());
      await waitProcessing(id);
      const { job, holder, other } = await holderOf(id);
      assert.equal(job.attempts, 1);

      // the worker and everything it started die at once, as on a dying machine
      const kids = descendants(holder.pid);
      process.kill(holder.pid, 'SIGKILL');
      for (const k of kids) {
        try {
          process.kill(k, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      const exit = await exitOf(holder);
      assert.equal(exit.signal, 'SIGKILL');

      const g = await waitDone(apiServer, org, id, 180_000);
      assert.equal(g.status, 'COMPLETED', `${JSON.stringify(g)}\n${allOutput(workers)}`);
      await assertOutput(id, 61);

      const done = (await db.store.jobs.findBySubject('generation', id))!;
      assert.equal(done.status, 'completed');
      assert.equal(done.attempts, 2, 'claimed by the killed worker, then by the other one');
      assert.equal(done.leaseToken, null);
      const usage = await usageRows(id);
      assert.equal(usage.length, 1, `${usage.length} usage records`);
      assert.ok(Math.abs(Number(usage[0].seconds) - 61) < 0.15, String(usage[0].seconds));
      const [survivor] = other;
      // the API process runs the housekeeping too, so either watchdog may be the one that requeues it
      const requeued = (l: { msg?: unknown; jobId?: unknown }) =>
        l.msg === 'lease expired; job requeued' && l.jobId === job.id;
      const apiLogs = apiServer
        .stdout()
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { msg?: unknown; jobId?: unknown });
      assert.ok(
        survivor.logs().some(requeued) || apiLogs.some(requeued),
        `no watchdog requeued the job\n${survivor.output()}\n${apiServer.stdout()}`,
      );
      assert.ok(
        survivor.logs().some((l) => l.msg === 'job completed' && l.jobId === job.id && l.attempt === 2),
        `the other worker did not complete the second attempt\n${survivor.output()}`,
      );
      // nothing of the dead attempt is left: only the completed output
      const gen = (await db.store.generations.findAny(id))!;
      assert.deepEqual(await db.blobs.list(`jobs/${job.id}/`), [gen.outputKey]);
    } finally {
      await stopWorkers();
    }
  });
});
