// test-database: none
// Decoders started ahead of their jobs (src/media/prestarted-decoders.ts): one taken gives exactly the
// frames a decoder started for the job gives, fails and stops as one, is replaced once it has exited,
// and none outlives its process or leaves a folder behind.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { conformedFrames, prepareConform, type PreparedConform } from '../../src/media/conform.js';
import { MediaProcessError } from '../../src/media/ffmpeg.js';
import { decodeFrames, type DecodeSpec } from '../../src/media/frames.js';
import {
  closePrestartedDecoders,
  prestartDecoders,
  prestartedDecoderStats,
} from '../../src/media/prestarted-decoders.js';
import { probeMedia } from '../../src/media/probe.js';
import { makeTempDir, removeTempDir } from '../../src/media/tempdir.js';
import { repoRoot } from '../helpers/paths.js';
import { collect, makeInputs, type TestInputs } from './media-support.js';

/** Alive and not a zombie waiting to be reaped. */
async function running(pid: number): Promise<boolean> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

async function until(check: () => boolean | Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((r) => setTimeout(r, 20));
}

const waiting = (n: number) => () => prestartedDecoderStats().idle.length === n;
const decoderDirs = async (root: string) =>
  (await readdir(root)).filter((name) => name.startsWith('lipsync-decoder-'));

describe('prestarted decoders', () => {
  let dir: string;
  let root: string;
  let inp: TestInputs;
  let prepared: PreparedConform;
  before(async () => {
    dir = await makeTempDir('media-prestarted');
    root = join(dir, 'decoders');
    inp = await makeInputs(dir);
    prepared = await prepareConform(
      {
        visual: { path: inp.clip, probe: await probeMedia(inp.clip) },
        audio: { path: inp.shortWav, probe: await probeMedia(inp.shortWav) },
      },
      dir,
    );
    assert.deepEqual(prepared.video.inputArgs, ['-an', '-i', inp.clip], 'the picture is read as it is');
  });
  after(async () => {
    await closePrestartedDecoders();
    await removeTempDir(dir);
  });

  /** Frames from a decoder started for them, then from a prestarted one. */
  async function coldThenWarm(decode: () => AsyncIterable<Buffer>): Promise<[Buffer[], Buffer[]]> {
    await closePrestartedDecoders();
    const cold = await collect(decode());
    prestartDecoders({ count: 1, root });
    await until(waiting(1));
    const taken = prestartedDecoderStats().taken;
    const warm = await collect(decode());
    assert.equal(prestartedDecoderStats().taken, taken + 1, 'a prestarted decoder was used');
    return [cold, warm];
  }

  it('gives exactly the frames of a decoder started for the job', async () => {
    const { plan } = prepared;
    assert.equal(plan.frameCount, 30);
    const cases: [string, () => AsyncIterable<Buffer>, number][] = [];
    for (const pixelFormat of ['yuv420p', 'rgb24'] as const) {
      cases.push([`conformed ${pixelFormat}`, () => conformedFrames(prepared, { pixelFormat }), 30]);
      // Resized by the output options (-s) of a decoder started for the job.
      const spec: DecodeSpec = {
        inputArgs: ['-an', '-i', inp.clip],
        filterComplex: { graph: '[0:v:0]hflip[vout]', output: 'vout' },
        width: 100,
        height: 76,
        pixelFormat,
        maxFrames: 12,
      };
      cases.push([`resized ${pixelFormat}`, () => decodeFrames(spec, { tmpRoot: dir }), 12]);
    }
    const scaled = { pixelFormat: 'rgb24' as const, size: { width: 96, height: 72 } };
    cases.push(['conformed and scaled', () => conformedFrames(prepared, scaled), 30]);
    for (const [name, decode, count] of cases) {
      const [cold, warm] = await coldThenWarm(decode);
      assert.equal(cold.length, count, name);
      assert.equal(warm.length, count, name);
      warm.forEach((f, i) => assert.ok(f.equals(cold[i]), `frame ${i} of ${name}`));
    }
  });

  it('is replaced once a taken one has exited; its folder goes with it', async () => {
    prestartDecoders({ count: 1, root });
    await until(waiting(1));
    const [before] = prestartedDecoderStats().idle;
    await collect(conformedFrames(prepared));
    await until(waiting(1));
    const [after] = prestartedDecoderStats().idle;
    assert.notEqual(after, before);
    assert.equal((await decoderDirs(root)).length, 1, 'only the waiting one has a folder');
  });

  it('one killed while waiting is replaced; one whose folder was swept leaves the job its own', async () => {
    prestartDecoders({ count: 1, root });
    await until(waiting(1));
    const [killed] = prestartedDecoderStats().idle;
    const lost = prestartedDecoderStats().lost;
    process.kill(killed, 'SIGKILL');
    await until(() => prestartedDecoderStats().lost === lost + 1);
    await until(waiting(1));
    const [swept] = prestartedDecoderStats().idle;
    assert.notEqual(swept, killed);

    // Another process's stale-temp sweep removed its folder: the take fails and the decode starts its own.
    for (const name of await decoderDirs(root)) await removeTempDir(join(root, name));
    const taken = prestartedDecoderStats().taken;
    assert.equal((await collect(conformedFrames(prepared))).length, 30);
    assert.equal(prestartedDecoderStats().taken, taken);
    // The unusable one is let go, and another takes its place.
    await until(async () => !(await running(swept)));
    await until(waiting(1));
  });

  it('fails as a decoder started for the job does, with its message', async () => {
    prestartDecoders({ count: 1, root });
    await until(waiting(1));
    const junk = join(dir, 'not-a-video');
    await writeFile(junk, 'this is not a video');
    const spec: DecodeSpec = {
      inputArgs: ['-an', '-i', junk],
      filterComplex: { graph: '[0:v:0]null[vout]', output: 'vout' },
      width: 64,
      height: 64,
      maxFrames: 5,
    };
    const taken = prestartedDecoderStats().taken;
    await assert.rejects(collect(decodeFrames(spec)), (e: unknown) => {
      assert.ok(e instanceof MediaProcessError && e.reason === 'failed', String(e));
      assert.match(e.message, /Invalid data/);
      return true;
    });
    assert.equal(prestartedDecoderStats().taken, taken + 1);
  });

  it('stops on abort, and when the reader stops early', async () => {
    prestartDecoders({ count: 1, root });
    await until(waiting(1));
    const [pid] = prestartedDecoderStats().idle;
    const controller = new AbortController();
    const frames = conformedFrames(prepared, { signal: controller.signal });
    await frames.next();
    controller.abort();
    await assert.rejects(
      collect(frames),
      (e: unknown) => e instanceof MediaProcessError && e.reason === 'aborted',
    );
    assert.equal(await running(pid), false);

    await until(waiting(1));
    const [next] = prestartedDecoderStats().idle;
    for await (const frame of conformedFrames(prepared)) {
      assert.ok(frame.length > 0);
      break;
    }
    assert.equal(await running(next), false, 'breaking off killed it');
  });

  it('is not used for a decode its fixed arguments cannot do', async () => {
    prestartDecoders({ count: 1, root });
    await until(waiting(1));
    const taken = prestartedDecoderStats().taken;
    const seek = await collect(
      decodeFrames({
        inputArgs: ['-ss', '0.5', '-an', '-i', inp.clip],
        filterComplex: { graph: '[0:v:0]null[vout]', output: 'vout' },
        width: 32,
        height: 32,
        maxFrames: 3,
      }),
    );
    const noCount = await collect(
      decodeFrames({ inputArgs: ['-an', '-i', inp.clip], width: 32, height: 32 }),
    );
    assert.equal(seek.length, 3);
    assert.equal(noCount.length, 50);
    assert.equal(prestartedDecoderStats().taken, taken);
  });

  it('closing lets every waiting one go and removes their folders', async () => {
    prestartDecoders({ count: 2, root });
    await until(waiting(2));
    const pids = prestartedDecoderStats().idle;
    await closePrestartedDecoders();
    assert.equal(prestartedDecoderStats().idle.length, 0);
    for (const pid of pids) assert.equal(await running(pid), false);
    assert.deepEqual(await decoderDirs(root), []);
    // Closed, the decode starts its own.
    assert.equal((await collect(conformedFrames(prepared))).length, 30);
  });

  for (const helper of [true, false]) {
    it(`none outlives its process, killed or ending on its own (spawn helper ${helper ? 'on' : 'off'})`, async () => {
      const spawnModule = pathToFileURL(join(repoRoot, 'src', 'processes', 'spawn.ts')).href;
      const module = pathToFileURL(join(repoRoot, 'src', 'media', 'prestarted-decoders.ts')).href;
      for (const ending of ['SIGKILL', 'on its own'] as const) {
        const script = `
          const { useSpawnHelper } = await import(${JSON.stringify(spawnModule)});
          const { prestartDecoders, prestartedDecoderStats } = await import(${JSON.stringify(module)});
          useSpawnHelper(${helper});
          prestartDecoders({ count: 2, root: ${JSON.stringify(root)} });
          while (prestartedDecoderStats().idle.length < 2) await new Promise((r) => setTimeout(r, 20));
          console.log(JSON.stringify(prestartedDecoderStats().idle));
          ${ending === 'SIGKILL' ? 'setInterval(() => undefined, 1000);' : ''}
        `;
        const parent = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
          cwd: repoRoot,
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        const [line] = (await once(parent.stdout.setEncoding('utf8'), 'data')) as [string];
        const pids = JSON.parse(line) as number[];
        assert.equal(pids.length, 2);
        if (ending === 'SIGKILL') parent.kill('SIGKILL');
        // Ending on its own: waiting decoders do not keep the process alive.
        await once(parent, 'exit');
        for (const pid of pids) await until(async () => !(await running(pid)));
      }
    });
  }
});
