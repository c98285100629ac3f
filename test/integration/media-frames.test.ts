// test-database: none
// runFfmpeg (progress, failure, timeout, abort) and the raw frame decoder/encoder the engine stage
// uses, on real ffmpeg.
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { conformedFrames, prepareConform } from '../../src/media/conform.js';
import { MediaProcessError, runFfmpeg } from '../../src/media/ffmpeg.js';
import { decodeFrames, encodeFrames, FramePool, frameBytes } from '../../src/media/frames.js';
import { prefetch } from '../../src/engines/cpu/prefetch.js';
import { probeMedia } from '../../src/media/probe.js';
import { makeTempDir, removeTempDir } from '../../src/media/tempdir.js';
import { runningProcesses } from '../helpers/running-processes.js';
import {
  collect,
  fileFrames,
  frameDiff,
  makeInputs,
  media,
  streams,
  type TestInputs,
} from './media-support.js';

const isProcessError = (reason: string) => (e: unknown) =>
  e instanceof MediaProcessError && e.reason === reason;

describe('runFfmpeg', () => {
  it('reports progress in seconds of output', async () => {
    const seen: number[] = [];
    await runFfmpeg(['-f', 'lavfi', '-i', 'testsrc=size=64x64:rate=25', '-t', '3', '-f', 'null', '-'], {
      onProgress: (s) => seen.push(s),
    });
    assert.ok(seen.length > 0);
    assert.ok(seen.every((s, i) => i === 0 || s >= seen[i - 1]));
    assert.ok(Math.abs((seen.at(-1) ?? 0) - 3) < 0.1, `last ${seen.at(-1)}`);
  });

  it('rejects with the last stderr lines when ffmpeg fails', async () => {
    await assert.rejects(runFfmpeg(['-i', '/nonexistent/input.mp4', '-f', 'null', '-']), (e: unknown) => {
      assert.ok(isProcessError('failed')(e));
      const err = e as MediaProcessError;
      assert.ok(err.exitCode !== 0 && err.exitCode !== null);
      assert.match(err.stderrTail.join('\n'), /No such file or directory/);
      assert.match(err.message, /No such file/);
      return true;
    });
  });

  it('kills ffmpeg on timeout and on abort', async () => {
    // An input that never ends: the call can only settle by stopping ffmpeg, which is then gone.
    const source = 'testsrc=size=64x64:rate=25';
    const endless = ['-f', 'lavfi', '-re', '-i', source, '-f', 'null', '-'];
    await assert.rejects(runFfmpeg(endless, { timeoutMs: 300 }), isProcessError('timeout'));
    assert.deepEqual(runningProcesses('ffmpeg', source), [], 'killed on timeout');
    await assert.rejects(runFfmpeg(endless, { signal: AbortSignal.timeout(300) }), isProcessError('aborted'));
    assert.deepEqual(runningProcesses('ffmpeg', source), [], 'killed on abort');
    await assert.rejects(runFfmpeg(endless, { signal: AbortSignal.abort() }), isProcessError('aborted'));
    assert.deepEqual(runningProcesses('ffmpeg', source), []);
  });
});

describe('raw frames', () => {
  let dir: string;
  let inp: TestInputs;
  before(async () => {
    dir = await makeTempDir('media-frames');
    inp = await makeInputs(dir);
  });
  after(async () => {
    await removeTempDir(dir);
  });

  it('decodes into frames of exactly width*height*3 bytes, at any requested size', async () => {
    const full = await collect(decodeFrames({ inputArgs: ['-i', inp.clip], width: 160, height: 160 }));
    assert.equal(full.length, 50);
    assert.ok(full.every((f) => f.length === 160 * 160 * 3));
    const small = await collect(
      decodeFrames({ inputArgs: ['-i', inp.clip], width: 64, height: 48, maxFrames: 7 }),
    );
    assert.equal(small.length, 7);
    assert.ok(small.every((f) => f.length === 64 * 48 * 3));
  });

  it('stops ffmpeg when the consumer stops early, and applies backpressure', async () => {
    const spec = { inputArgs: ['-i', media('latentsync_demo1.mp4')], width: 1080, height: 1920 };
    const frameBytes = 1080 * 1920 * 3;
    const clip = 'latentsync_demo1.mp4';
    let n = 0;
    for await (const frame of decodeFrames(spec)) {
      assert.equal(frame.length, frameBytes);
      if (++n === 2) break;
    }
    // Leaving the loop stopped the decoder: it did not go on decoding the other 248 frames.
    assert.deepEqual(runningProcesses('ffmpeg', clip), [], 'ffmpeg stopped with the consumer');

    // A paused consumer: Node must not buffer the rest of the video (250 frames, 1.5 GB).
    const it = decodeFrames(spec)[Symbol.asyncIterator]();
    await it.next();
    const before = process.memoryUsage().arrayBuffers;
    await sleep(1500);
    const grown = process.memoryUsage().arrayBuffers - before;
    assert.ok(grown < 4 * frameBytes, `buffered ${(grown / frameBytes).toFixed(1)} frames while paused`);
    assert.equal(runningProcesses('ffmpeg', clip).length, 1, 'the paused decoder is still there');
    await it.return?.(undefined);
    assert.deepEqual(runningProcesses('ffmpeg', clip), [], 'and stopped when the consumer returns');
  });

  it('engine path: conformed frames -> transform -> encodeFrames with the soundtrack', async () => {
    const work = await makeTempDir('engine', dir);
    const prepared = await prepareConform(
      {
        visual: { path: inp.clip, probe: await probeMedia(inp.clip) },
        audio: { path: inp.longWav, probe: await probeMedia(inp.longWav) },
        options: { syncMode: 'loop' },
      },
      work,
    );
    const { plan } = prepared;
    async function* invert(frames: AsyncIterable<Buffer>) {
      for await (const f of frames) {
        const out = Buffer.allocUnsafe(f.length);
        for (let i = 0; i < f.length; i++) out[i] = 255 - f[i];
        yield out;
      }
    }
    const out = join(dir, 'engine.mp4');
    let last = 0;
    const result = await encodeFrames(
      invert(conformedFrames(prepared)),
      {
        width: plan.width,
        height: plan.height,
        fps: plan.fpsText,
        outputPath: out,
        format: 'mp4',
        audioPath: prepared.audioPath,
      },
      { onFrames: (n) => (last = n) },
    );
    assert.equal(result.frames, plan.frameCount);
    assert.equal(last, plan.frameCount);
    const s = await streams(out);
    assert.ok(s.video && s.audio);
    assert.equal(s.video.frames, plan.frameCount);
    assert.equal(s.video.fps, 25);
    assert.ok(Math.abs(s.audio.duration - plan.durationSeconds) <= 0.05);
    const original = await collect(conformedFrames(prepared));
    const encoded = await fileFrames(out, plan.width, plan.height);
    const inverted = Buffer.from(original[10].map((v) => 255 - v));
    assert.ok(frameDiff(encoded[10], inverted) < 4, 'the transformed picture was encoded');
    assert.ok(frameDiff(encoded[10], original[10]) > 30);
    await removeTempDir(work);
  });

  it('yuv420p frames through a frame pool: buffers go round and nothing is overwritten early', async () => {
    // 320x320: a frame is larger than a pipe chunk (64 KiB), so every frame is joined into a buffer.
    const spec = { inputArgs: ['-i', inp.clip], width: 320, height: 320, pixelFormat: 'yuv420p' as const };
    const fresh = await collect(decodeFrames(spec));
    assert.equal(fresh.length, 50);
    assert.equal(fresh[0].length, 320 * 320 * 1.5);

    const pool = new FramePool(frameBytes(spec));
    const seen = new Set<Buffer>();
    async function* middle(frames: AsyncIterable<Buffer>) {
      let i = 0;
      for await (const f of frames) {
        seen.add(f);
        // The pooled decode gives the same bytes as a fresh one.
        assert.ok(f.equals(fresh[i]), `frame ${i} differs`);
        i++;
        yield f;
      }
    }
    const enc = {
      width: 320,
      height: 320,
      pixelFormat: 'yuv420p' as const,
      fps: '25',
      format: 'mp4' as const,
    };
    const pooledOut = join(dir, 'pooled.mp4');
    const freshOut = join(dir, 'fresh.mp4');
    // Read-ahead on both sides, as the engine does: the decoder fills buffers while one is written.
    const frames = prefetch(middle(prefetch(decodeFrames(spec, { pool }), 3)), 2);
    await encodeFrames(frames, { ...enc, outputPath: pooledOut }, { pool });
    await encodeFrames(fresh, { ...enc, outputPath: freshOut });
    assert.ok(seen.size <= 8, `${seen.size} buffers for 50 frames`);
    // Had a buffer been reused before the encoder wrote it, the encoded pictures would differ.
    const a = await collect(decodeFrames({ ...spec, inputArgs: ['-i', pooledOut] }));
    const b = await collect(decodeFrames({ ...spec, inputArgs: ['-i', freshOut] }));
    assert.equal(a.length, 50);
    a.forEach((f, i) => assert.ok(f.equals(b[i]), `encoded frame ${i} differs`));
  });

  it("the FIFO gives the pipe's frames, with a slow consumer and frames smaller than a pipe read", async () => {
    // Reading stops whenever a frame waits, and starts again as the consumer takes it.
    const root = await makeTempDir('fifo-root', dir);
    for (const [width, height] of [
      [720, 1280],
      [64, 48],
    ]) {
      const spec = {
        inputArgs: ['-i', media('latentsync_demo1.mp4')],
        width,
        height,
        pixelFormat: 'yuv420p' as const,
        maxFrames: 12,
      };
      const piped = await collect(decodeFrames(spec, { viaPipe: true }));
      const pool = new FramePool(frameBytes(spec));
      let i = 0;
      for await (const f of decodeFrames(spec, { pool, tmpRoot: root })) {
        assert.ok(f.equals(piped[i]), `${width}x${height} frame ${i} differs`);
        i++;
        await sleep(15);
        pool.give(f);
      }
      assert.equal(i, 12);
    }
    // Each decode removed its FIFO and its folder.
    assert.deepEqual(await readdir(root), []);
  });

  it('a decoder that fails or is stopped early leaves no FIFO behind', async () => {
    const root = await makeTempDir('fifo-root', dir);
    const missing = { inputArgs: ['-i', join(dir, 'missing.mp4')], width: 32, height: 32 };
    await assert.rejects(collect(decodeFrames(missing, { tmpRoot: root })), (e: unknown) => {
      assert.ok(isProcessError('failed')(e));
      assert.match((e as MediaProcessError).stderrTail.join('\n'), /missing\.mp4/);
      return true;
    });
    const endless = {
      inputArgs: ['-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=25'],
      width: 320,
      height: 240,
    };
    let n = 0;
    for await (const f of decodeFrames(endless, { tmpRoot: root })) {
      assert.equal(f.length, 320 * 240 * 3);
      if (++n === 3) break;
    }
    await assert.rejects(
      collect(decodeFrames(endless, { tmpRoot: root, signal: AbortSignal.timeout(300) })),
      isProcessError('aborted'),
    );
  });

  it('refuses frames of the wrong size and reports ffmpeg failures', async () => {
    const spec = {
      width: 32,
      height: 32,
      fps: '25',
      outputPath: join(dir, 'bad.mp4'),
      format: 'mp4' as const,
    };
    await assert.rejects(encodeFrames([Buffer.alloc(32 * 32 * 3), Buffer.alloc(10)], spec), RangeError);
    await assert.rejects(
      encodeFrames([Buffer.alloc(32 * 32 * 3)], { ...spec, audioPath: join(dir, 'missing.wav') }),
      (e: unknown) =>
        isProcessError('failed')(e) && /missing\.wav/.test((e as MediaProcessError).stderrTail.join('\n')),
    );
    async function* failing() {
      yield Buffer.alloc(32 * 32 * 3);
      throw new Error('engine crashed');
    }
    await assert.rejects(encodeFrames(failing(), spec), /engine crashed/);
  });
});
