// Crash recovery end to end: `kill -9` the server (and its ffmpeg children, as a dying machine would)
// while a long generation is PROCESSING with others queued, restart it on the same data folder and
// database with a short lease, and check that every generation ends COMPLETED with a valid output and
// was completed (billed) exactly once.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createDeployment, startServer, type TestDeployment, type TestServer } from '../helpers/index.js';
import { loadConfig } from '../../src/config.js';
import { createLogger } from '../../src/logger.js';
import { createServices } from '../../src/app/container.js';
import type { Services } from '../../src/services/index.js';
import {
  AUDIO_SHORT_SECONDS,
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
  waitDone,
  type E2eOrg,
} from './generations-support.js';

const DB = process.env.TEST_DATABASE ?? 'sqlite';

/** The pids of a process's descendants (ffmpeg children of a worker). */
function descendants(pid: number): number[] {
  let out = '';
  try {
    out = execFileSync('ps', ['-o', 'pid=', '--ppid', String(pid)], { encoding: 'utf8' });
  } catch {
    return []; // ps exits 1 when there are none
  }
  const kids = out
    .split('\n')
    .map((s) => Number(s.trim()))
    .filter((n) => n > 0);
  return kids.flatMap((k) => [k, ...descendants(k)]);
}

describe(`crash recovery (${DB})`, { timeout: 300_000 }, () => {
  let dep: TestDeployment;
  let first: TestServer | null = null;
  let second: TestServer | null = null;
  let m: TestMedia;
  let out: string;
  let org: E2eOrg;
  let db: Services;

  before(async () => {
    [dep, m, out] = await Promise.all([
      createDeployment({
        env: { ...LIFECYCLE_ENGINE_ENV, LIPSYNC_JOB_LEASE_SECONDS: '2', LIPSYNC_WORKER_CONCURRENCY: '1' },
      }),
      makeTestMedia(),
      mkdtemp(join(tmpdir(), 'lipsync-crash-out-')),
    ]);
  });
  after(async () => {
    await first?.stop();
    await second?.stop();
    await db?.close();
    await dep?.cleanup();
    await m?.cleanup();
    if (out) await rm(out, { recursive: true, force: true });
  });

  test('kill -9 during a generation, restart: nothing is lost and nothing is completed twice', async () => {
    first = await startServer({ env: { ...dep.env } });
    org = await cliOrg({ ...dep.env });
    const video = await uploadOverHttp(first, org, m.video);
    const long = await uploadOverHttp(first, org, m.audio61);
    const short = await uploadOverHttp(first, org, m.audioShort);
    // 61 s of looped output at 640x640: long enough to be caught in the middle
    const longId = await createGeneration(first, org, {
      model: 'lipsync-2',
      input: [
        { type: 'video', assetId: video },
        { type: 'audio', assetId: long },
      ],
      options: { sync_mode: 'loop', output_resolution: [640, 640] },
    });
    const queued: string[] = [];
    for (let i = 0; i < 2; i++) {
      queued.push(
        await createGeneration(first, org, {
          model: 'lipsync-2',
          input: [
            { type: 'video', assetId: video },
            { type: 'audio', assetId: short },
          ],
        }),
      );
    }
    // wait until the long one is PROCESSING and has reported progress
    let progress = 0;
    for (let i = 0; i < 300 && progress <= 0; i++) {
      const r = await api(first, org, 'GET', `/v2/generate/${longId}?include=progress`);
      assert.equal(r.status, 200);
      assert.notEqual(r.json.status, 'COMPLETED', 'the job finished before it could be interrupted');
      if (r.json.status === 'PROCESSING') progress = r.json.progress_percent;
      if (progress <= 0) await new Promise((res) => setTimeout(res, 100));
    }
    assert.ok(progress > 0 && progress < 100, `progress ${progress}`);
    for (const id of queued)
      assert.equal((await api(first, org, 'GET', `/v2/generate/${id}`)).json.status, 'PENDING');

    // the crash: the server and everything it started die at once
    const pid = first.process.pid!;
    const kids = descendants(pid);
    const exited = new Promise((r) => first!.process.once('exit', r));
    process.kill(pid, 'SIGKILL');
    for (const k of kids) {
      try {
        process.kill(k, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await exited;
    assert.equal(first.process.signalCode, 'SIGKILL');

    db = await createServices(loadConfig({ ...dep.env, LOG_LEVEL: 'silent' }), createLogger('silent'));
    const before = (await db.store.generations.findAny(longId))!;
    assert.equal(before.status, 'PROCESSING', 'the crashed job is left PROCESSING under a dead lease');
    const beforeJob = (await db.store.jobs.findBySubject('generation', longId))!;
    assert.equal(beforeJob.status, 'running');
    assert.equal(beforeJob.attempts, 1);

    second = await startServer({ env: { ...dep.env } });
    const all = [longId, ...queued];
    for (const id of all) {
      const g = await waitDone(second, org, id, 180_000);
      assert.equal(g.status, 'COMPLETED', JSON.stringify(g));
      const expected = id === longId ? 61 : AUDIO_SHORT_SECONDS;
      const file = await downloadOutput(second, org, id, out);
      const p = await probeFile(file.path);
      assert.ok(Math.abs(p.duration - expected) < 0.15, `${id}: ${p.duration} s, expected ${expected}`);
      assert.ok(p.video && p.audio);
      if (id === longId) {
        assert.equal(p.video.width, 640);
        assert.equal(p.video.height, 640);
      }
    }
    const after = (await db.store.jobs.findBySubject('generation', longId))!;
    assert.equal(after.attempts, 2, 'claimed once by the dead server and once after the restart');
    assert.equal(after.leaseToken, null);
    assert.equal(after.status, 'completed');
    // no output of any attempt but the one that completed is left in the store
    const blobs = await db.blobs.list(`jobs/${after.id}/`);
    const g = (await db.store.generations.findAny(longId))!;
    assert.deepEqual(blobs, [g.outputKey].sort());
    // exactly once: one usage record per generation, none lost
    const usage = await db.store.db.kysely
      .selectFrom('usage_records')
      .select(['generation_id', 'seconds'])
      .where('organization_id', '=', org.id)
      .execute();
    assert.deepEqual(usage.map((u) => u.generation_id).sort(), [...all].sort());
    assert.ok(Math.abs(Number(usage.find((u) => u.generation_id === longId)!.seconds) - 61) < 0.15);
    // nothing is left PENDING or PROCESSING
    const active = await db.store.generations.countActive(org.id);
    assert.equal(active, 0);
    // the restarted server logged the requeue of the expired lease
    assert.match(second.stdout(), /lease expired; job requeued/);
  });
});
