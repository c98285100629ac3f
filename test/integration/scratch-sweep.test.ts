// The temp folder at start (src/app/scratch.ts): what processes that are gone left (their job folders,
// loose uploads) is removed; what live processes on the same folder use is kept. Real processes stand
// for the owners of this host: one that has exited (as after kill -9) and one that is running; owners
// of other hosts (or of this host's name in another container) are judged by their marker's age.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readdir, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { keepMarkerFresh, OWNERS_DIR, scratchOwnerName, sweepScratch } from '../../src/app/scratch.js';

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

async function ownedBy(dir: string, name: string, ageMs: number): Promise<string> {
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

  test("a dead owner's job folder and loose entries past the job timeout go; newer ones stay", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'scratch-sweep-'));
    try {
      const deadName = await ownedBy(dir, `${hostname()}-${deadPid}-0a1b`, 60_000);
      await leftover(dir, 'upload-a', 2 * HOUR_MS);
      await leftover(dir, 'tts-b/speech.wav', 2 * HOUR_MS);
      // A folder nobody registers any more (a marker lost): by age.
      await leftover(dir, 'somehost-7-ffee/job/x.raw', 2 * HOUR_MS);
      // An operator command (voice clone) writes here without a marker: recent entries stay.
      await leftover(dir, 'clone-recent/voice.wav', 60_000);
      await leftover(dir, 'upload-new', 0);

      const removed = await sweepScratch(dir, HOUR_MS);
      assert.equal(removed, 4);
      assert.ok(!existsSync(join(dir, deadName)));
      assert.ok(!existsSync(join(dir, OWNERS_DIR, deadName)));
      assert.deepEqual((await readdir(dir)).sort(), [OWNERS_DIR, 'clone-recent', 'upload-new'].sort());
      assert.deepEqual(await readdir(join(dir, OWNERS_DIR)), [scratchOwnerName()]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("a live owner of this host keeps its folder, however old its marker's time", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'scratch-sweep-'));
    try {
      // Touched recently: kept (its pid runs); the pid check never removes a live one.
      const liveName = await ownedBy(dir, `${hostname()}-${running.pid!}-c0ffee`, 60_000);
      const removed = await sweepScratch(dir, HOUR_MS);
      assert.equal(removed, 0);
      assert.ok(existsSync(join(dir, liveName, 'job-1', 'frames.raw')), 'the live owner keeps its job');
      assert.ok(existsSync(join(dir, OWNERS_DIR, liveName)));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("another host's owner counts as alive while its marker is fresh, and as gone once stale", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'scratch-sweep-'));
    try {
      const fresh = await ownedBy(dir, 'other-host.example-4242-aa11', 10 * 60_000);
      const stale = await ownedBy(dir, 'old-host.example-4242-bb22', 3 * HOUR_MS);
      assert.equal(await sweepScratch(dir, 2 * HOUR_MS), 1);
      assert.ok(existsSync(join(dir, fresh, 'job-1', 'frames.raw')));
      assert.ok(!existsSync(join(dir, stale)));
      assert.ok(!existsSync(join(dir, OWNERS_DIR, stale)));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("an owner with this host's name and this pid (another container, or this one's predecessor) is told apart by its nonce", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'scratch-sweep-'));
    try {
      const twin = await ownedBy(dir, `${hostname()}-${process.pid}-1234abcd`, 60_000);
      const predecessor = await ownedBy(dir, `${hostname()}-${process.pid}-5678abcd`, 3 * HOUR_MS);
      assert.notEqual(twin, scratchOwnerName());
      assert.equal(await sweepScratch(dir, HOUR_MS), 1);
      assert.ok(existsSync(join(dir, twin, 'job-1', 'frames.raw')), "the twin's running job stays");
      assert.ok(!existsSync(join(dir, predecessor)));
      assert.ok(existsSync(join(dir, OWNERS_DIR, scratchOwnerName())));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('a live process touches its marker until stopped', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'scratch-sweep-'));
    try {
      await sweepScratch(dir, HOUR_MS);
      const marker = join(dir, OWNERS_DIR, scratchOwnerName());
      const old = new Date(Date.now() - 3 * HOUR_MS);
      await utimes(marker, old, old);
      const fresh = keepMarkerFresh(dir, 20);
      try {
        while ((await stat(marker)).mtimeMs <= old.getTime()) await new Promise((r) => setTimeout(r, 10));
      } finally {
        fresh.stop();
      }
      // Another process sweeping now sees it alive.
      assert.ok((await stat(marker)).mtimeMs > Date.now() - HOUR_MS);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
