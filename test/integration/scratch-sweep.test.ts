// The temp folder at start (src/app/scratch.ts): what processes that are gone left (their job folders,
// loose uploads) is removed; what live processes on the same folder use is kept. Real processes stand
// for the owners: one that has exited (as after kill -9) and one that is running.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { OWNERS_DIR, processScratchDir, sweepScratch } from '../../src/app/scratch.js';

const HOUR_MS = 3600_000;

/** A file at `path` whose time, and its folders' up to `root`, is `ageMs` ago (as a dead process left it). */
async function leftover(root: string, rel: string, ageMs: number): Promise<void> {
  const path = join(root, rel);
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, 'x');
  const t = new Date(Date.now() - ageMs);
  const parts = rel.split('/');
  for (let i = parts.length; i > 0; i--) await utimes(join(root, ...parts.slice(0, i)), t, t);
}

async function ownedBy(dir: string, pid: number, ageMs: number): Promise<string> {
  const name = `${hostname()}-${pid}`;
  await leftover(dir, `${OWNERS_DIR}/${name}`, ageMs);
  await leftover(dir, `${name}/job-1/frames.raw`, ageMs);
  return name;
}

describe('the temp folder swept at start', () => {
  let running: ChildProcess;
  let deadPid: number;

  before(async () => {
    const dead = spawn(process.execPath, ['-e', '']);
    await once(dead, 'exit');
    deadPid = dead.pid!;
    running = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    await once(running, 'spawn');
  });
  after(() => {
    running.kill('SIGKILL');
  });

  test("alone: a dead owner's job folder and every older loose entry go; newer ones stay", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'scratch-sweep-'));
    try {
      const deadName = await ownedBy(dir, deadPid, 60_000);
      await leftover(dir, 'upload-a', 60_000);
      await leftover(dir, 'tts-b/speech.wav', 60_000);
      // A previous process with this pid (a restarted container) left a job folder in ours.
      await leftover(processScratchDir(dir), 'job-old/x.raw', 60_000);
      const startedAt = Date.now() - 1000;
      await leftover(dir, 'upload-new', 0);

      const removed = await sweepScratch(dir, HOUR_MS, startedAt);
      assert.equal(removed, 4);
      assert.ok(!existsSync(join(dir, deadName)));
      assert.ok(!existsSync(join(dir, OWNERS_DIR, deadName)));
      const mine = basename(processScratchDir(dir));
      assert.deepEqual((await readdir(dir)).sort(), [OWNERS_DIR, mine, 'upload-new'].sort());
      assert.deepEqual(await readdir(join(dir, mine)), []);
      assert.deepEqual(await readdir(join(dir, OWNERS_DIR)), [`${hostname()}-${process.pid}`]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('with another live owner: its folder stays, loose entries go only past the job timeout', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'scratch-sweep-'));
    try {
      const liveName = await ownedBy(dir, running.pid!, 2 * HOUR_MS);
      const deadName = await ownedBy(dir, deadPid, 60_000);
      await leftover(dir, 'upload-recent', 60_000);
      await leftover(dir, 'upload-ancient', 2 * HOUR_MS);

      const removed = await sweepScratch(dir, HOUR_MS, Date.now());
      assert.equal(removed, 2);
      assert.ok(existsSync(join(dir, liveName, 'job-1', 'frames.raw')), 'the live owner keeps its job');
      assert.ok(existsSync(join(dir, OWNERS_DIR, liveName)));
      assert.ok(!existsSync(join(dir, deadName)));
      assert.ok(existsSync(join(dir, 'upload-recent')), 'it may be an upload of the live owner');
      assert.ok(!existsSync(join(dir, 'upload-ancient')));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a marker of another machine counts as alive', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'scratch-sweep-'));
    try {
      await leftover(dir, `${OWNERS_DIR}/other-host.example-4242`, HOUR_MS);
      await leftover(dir, 'other-host.example-4242/job/f', HOUR_MS);
      await leftover(dir, 'upload-recent', 60_000);
      assert.equal(await sweepScratch(dir, 2 * HOUR_MS, Date.now()), 0);
      assert.ok(existsSync(join(dir, 'other-host.example-4242', 'job', 'f')));
      assert.ok(existsSync(join(dir, 'upload-recent')));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
