// test-database: none
// The CPU lip-sync engine end to end on real media: a fixture talking-face clip driven by a different
// speech file (decoder -> engine -> encoder, as the pipeline runs it), then measured with the quality
// tools: the mouth must follow the new audio (sync score), everything outside the lower face must stay
// as it was (PSNR), and silent audio must keep the mouth at the source's closed level. The report
// carries the realism meters.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { normaliseOptions } from '../../src/domain/generation-request.js';
import type { EngineReport } from '../../src/engines/engine.js';
import { CpuEngine } from '../../src/engines/cpu/index.js';
import type { ComparedMeters } from '../../src/engines/cpu/meters.js';
import {
  loudnessPerFrame,
  measureMouth,
  psnrOutsideLowerFace,
  syncScore,
  type MouthMeasure,
} from '../../src/engines/cpu/quality.js';
import { EngineRegistry } from '../../src/engines/registry.js';
import { runFfmpeg } from '../../src/media/ffmpeg.js';
import { decodeFrames, encodeFrames, type PixelFormat } from '../../src/media/frames.js';
import { makeTempDir, removeTempDir } from '../../src/media/tempdir.js';
import { meanDiff } from '../helpers/frames.js';
import { fixture } from '../helpers/paths.js';

const VIDEO = fixture('media/face_3.mp4');
const SPEECH = fixture('media/speech_short.wav');
const SIZE = 590;
const FPS = 25;
const SECONDS = 4;
const FRAMES = SECONDS * FPS;

/** Conformed audio as the pipeline makes it: 48 kHz stereo PCM WAV, cut to the clip. */
async function conformAudio(input: string[], out: string): Promise<void> {
  await runFfmpeg([
    ...input,
    '-t',
    String(SECONDS),
    '-ac',
    '2',
    '-ar',
    '48000',
    '-c:a',
    'pcm_s16le',
    '-f',
    'wav',
    out,
  ]);
}

async function runEngine(
  audioPath: string,
  outPath: string,
  pixelFormat: PixelFormat = 'rgb24',
): Promise<EngineReport> {
  const run = new CpuEngine().start({
    frames: decodeFrames({
      inputArgs: ['-i', VIDEO],
      width: SIZE,
      height: SIZE,
      pixelFormat,
      maxFrames: FRAMES,
    }),
    pixelFormat,
    width: SIZE,
    height: SIZE,
    fps: FPS,
    frameCount: FRAMES,
    audioPath,
    activeSpans: null,
    options: normaliseOptions({}, 'lipsync-2'),
    settings: {},
    signal: new AbortController().signal,
  });
  const res = await encodeFrames(run.frames, {
    width: SIZE,
    height: SIZE,
    pixelFormat,
    fps: String(FPS),
    outputPath: outPath,
    format: 'mp4',
    audioPath,
    durationSeconds: SECONDS,
  });
  assert.equal(res.frames, FRAMES);
  return run.report();
}

interface Decode {
  inputArgs: string[];
  filterComplex?: { graph: string; output: string };
}

/** Runs the engine on decoded frames and returns its output frames (in memory) and report. */
async function engineFrames(
  decode: Decode,
  width: number,
  height: number,
  frames: number,
  audioPath: string,
  extra: {
    activeSpans?: { start: number; end: number }[] | null;
    options?: Record<string, unknown>;
    pixelFormat?: PixelFormat;
  } = {},
): Promise<{ out: Buffer[]; report: EngineReport }> {
  const pixelFormat = extra.pixelFormat;
  const run = new CpuEngine().start({
    frames: decodeFrames({ ...decode, width, height, pixelFormat, maxFrames: frames }),
    pixelFormat,
    width,
    height,
    fps: FPS,
    frameCount: frames,
    audioPath,
    activeSpans: extra.activeSpans ?? null,
    options: normaliseOptions(extra.options ?? {}, 'lipsync-2'),
    settings: {},
    signal: new AbortController().signal,
  });
  const out: Buffer[] = [];
  for await (const f of run.frames) out.push(Buffer.from(f));
  return { out, report: run.report() };
}

async function inputFrames(
  decode: Decode,
  width: number,
  height: number,
  frames: number,
  pixelFormat?: PixelFormat,
): Promise<Buffer[]> {
  const all: Buffer[] = [];
  for await (const f of decodeFrames({ ...decode, width, height, pixelFormat, maxFrames: frames }))
    all.push(Buffer.from(f));
  return all;
}

function quantile(values: number[], p: number): number {
  const v = values.filter(Number.isFinite).sort((a, b) => a - b);
  return v[Math.min(v.length - 1, Math.max(0, Math.round(p * (v.length - 1))))];
}

describe('CPU engine on a fixture face clip', { timeout: 600_000 }, () => {
  let dir: string;
  let speech: string;
  let silence: string;
  let source: MouthMeasure;

  before(async () => {
    dir = await makeTempDir('engine-cpu-test');
    speech = join(dir, 'speech.wav');
    silence = join(dir, 'silence.wav');
    await conformAudio(['-i', SPEECH], speech);
    await conformAudio(['-f', 'lavfi', '-i', 'anullsrc=r=48000:cl=stereo'], silence);
    source = await measureMouth(
      VIDEO,
      { width: SIZE, height: SIZE, fps: FPS, durationSeconds: SECONDS },
      FRAMES,
    );
  });
  after(async () => {
    if (dir) await removeTempDir(dir);
  });

  it('is registered as the `cpu` engine', () => {
    const reg = new EngineRegistry({ 'lipsync-2': { engine: 'cpu' } });
    const b = reg.for('lipsync-2');
    assert.equal(b.engine.id, 'cpu');
    assert.equal(b.engine.passthrough, false);
  });

  for (const pixelFormat of ['rgb24', 'yuv420p'] as const) {
    it(`moves the mouth with a different speech and leaves the rest of the picture alone (${pixelFormat} frames)`, async (t) => {
      const out = join(dir, `speech-${pixelFormat}.mp4`);
      const report = await runEngine(speech, out, pixelFormat);
      assert.equal(report.engine, 'cpu');
      assert.equal(report.framesTotal, FRAMES);
      assert.equal(report.framesWithFace, FRAMES);
      assert.ok((report.medianFaceSize as number) > 100);
      assert.ok(
        (report.mouthAudioCorrelation as number) > 0.6,
        `engine agreement ${report.mouthAudioCorrelation}`,
      );
      // The realism meters (meters.ts) on one frame pair in 6: frames 0, 6, ..., 96 and the frame
      // before each; the edge of the re-drawn region is no more visible than the source's own there.
      const meters = report.meters as ComparedMeters & { everyFrames: number; ms: number };
      t.diagnostic(`meters ${JSON.stringify(meters)}`);
      assert.equal(meters.everyFrames, 6);
      assert.equal(meters.output.frames, 17);
      assert.equal(meters.source.frames, 17);
      assert.equal(meters.output.jitterPairs, 16);
      assert.ok(meters.output.jitter! > 0 && meters.source.jitter! > 0);
      assert.ok(
        meters.jitterVsSource! > 0.5 && meters.jitterVsSource! < 3,
        `jitter x${meters.jitterVsSource}`,
      );
      assert.ok(meters.seamVsSource! > 0.9 && meters.seamVsSource! < 1.1, `seam x${meters.seamVsSource}`);
      assert.ok(meters.output.seam! > 0.3 && meters.output.seam! < 2, `seam ${meters.output.seam}`);
      assert.ok(meters.output.openFrames > 0, 'the speech opens the mouth in some metered frames');
      assert.ok(meters.output.darkHoleShare! >= 0 && meters.output.darkHoleShare! <= 1);

      const measured = await measureMouth(out);
      const db = await loudnessPerFrame(speech, FPS, measured.opening.length);
      const sync = syncScore(measured.opening, db);
      const own = syncScore(source.opening, await loudnessPerFrame(VIDEO, FPS, source.opening.length));
      const psnr = await psnrOutsideLowerFace(out, VIDEO, measured);
      t.diagnostic(
        `sync ${sync.score.toFixed(3)} (lag ${sync.lag}); source with its own audio ${own.score.toFixed(3)}`,
      );
      t.diagnostic(`PSNR outside the lower face ${psnr.psnr.toFixed(2)} dB over ${psnr.frames} frames`);
      assert.equal(sync.framesWithFace, FRAMES);
      assert.ok(sync.score > 0.5, `sync score ${sync.score}`);
      assert.ok(sync.score > own.score, `sync ${sync.score} vs the source's own ${own.score}`);
      assert.ok(psnr.psnr >= 35, `PSNR ${psnr.psnr}`);
      assert.equal(psnr.frames, FRAMES);
    });
  }

  it('passes frames without a face through untouched', async () => {
    const decode = { inputArgs: ['-f', 'lavfi', '-i', 'testsrc=size=320x240:rate=25'] };
    const { out, report } = await engineFrames(decode, 320, 240, 25, speech);
    const ref = await inputFrames(decode, 320, 240, 25);
    assert.equal(report.framesTotal, 25);
    assert.equal(report.framesWithFace, 0);
    assert.equal(out.length, 25);
    out.forEach((f, i) => assert.ok(f.equals(ref[i]), `frame ${i} changed`));
  });

  for (const pixelFormat of ['rgb24', 'yuv420p'] as const) {
    it(`re-draws only inside the active spans (${pixelFormat} frames)`, async () => {
      const frames = 40;
      const decode = { inputArgs: ['-i', VIDEO] };
      const { out, report } = await engineFrames(decode, SIZE, SIZE, frames, speech, {
        activeSpans: [{ start: 0, end: 0.8 }],
        pixelFormat,
      });
      const ref = await inputFrames(decode, SIZE, SIZE, frames, pixelFormat);
      assert.equal(report.framesWithFace, frames);
      // 0.8 s = 20 frames: the re-drawn mouth fades out over the last frames of the span, then nothing changes.
      for (let i = 20; i < frames; i++)
        assert.ok(out[i].equals(ref[i]), `frame ${i} changed outside the span`);
      const changed = out.slice(0, 20).filter((f, i) => !f.equals(ref[i])).length;
      assert.ok(changed >= 12, `${changed} frames re-drawn inside the span`);
    });
  }

  it('animates the largest face, or the one an active-speaker hint points at', async () => {
    // Two faces side by side: face_3 large on the left (x < 360), face_5 small on the right.
    const graph = `[0:v]scale=360:360,setsar=1[a];[1:v]scale=220:220,setsar=1,pad=220:360:0:70[b];[a][b]hstack=inputs=2,fps=${FPS}[v]`;
    const inputArgs = ['-i', VIDEO, '-i', fixture('media/face_5.mp4')];
    const decode = { inputArgs, filterComplex: { graph, output: 'v' } };
    const w = 580;
    const h = 360;
    const frames = 25;
    const ref = await inputFrames(decode, w, h, frames);
    const sides = (out: Buffer[]) => {
      let left = 0;
      let right = 0;
      out.forEach((f, i) => {
        left += meanDiff(f, ref[i], w, 0, 360);
        right += meanDiff(f, ref[i], w, 360, w);
      });
      return { left, right };
    };
    const run = (hint?: Record<string, unknown>) =>
      engineFrames(decode, w, h, frames, speech, { options: hint ? { active_speaker_detection: hint } : {} });

    const largest = await run();
    assert.equal(largest.report.framesWithFace, frames);
    assert.ok((largest.report.warnings as string[]).some((x) => x.includes('several faces')));
    const a = sides(largest.out);
    assert.ok(a.left > 0 && a.right === 0, `default: left ${a.left}, right ${a.right}`);

    const pointed = await run({ auto_detect: false, frame_number: 0, coordinates: [470, 180] });
    const b = sides(pointed.out);
    assert.ok(b.right > 0 && b.left === 0, `point: left ${b.left}, right ${b.right}`);

    const boxed = await run({
      auto_detect: false,
      bounding_boxes: Array.from({ length: frames }, () => [365, 75, 575, 285]),
    });
    const c = sides(boxed.out);
    assert.ok(c.right > 0 && c.left === 0, `boxes: left ${c.left}, right ${c.right}`);
  });

  it('tracks faces on a worker thread exactly as on the calling thread', async () => {
    const decode = { inputArgs: ['-i', VIDEO] };
    const run = (settings: Record<string, unknown>) =>
      new CpuEngine().start({
        frames: decodeFrames({ ...decode, width: SIZE, height: SIZE, maxFrames: 30 }),
        width: SIZE,
        height: SIZE,
        fps: FPS,
        frameCount: 30,
        audioPath: speech,
        activeSpans: null,
        options: normaliseOptions({}, 'lipsync-2'),
        settings,
        signal: new AbortController().signal,
      });
    const collect = async (r: ReturnType<typeof run>) => {
      const out: Buffer[] = [];
      for await (const f of r.frames) out.push(Buffer.from(f));
      // The time the meters took is the one figure that differs from run to run.
      const report = r.report();
      return { out, report: { ...report, meters: { ...(report.meters as object), ms: 0 } } };
    };
    const threaded = await collect(run({}));
    const inline = await collect(run({ trackerThread: false }));
    assert.equal(threaded.out.length, 30);
    assert.equal(threaded.report.framesWithFace, 30);
    assert.deepEqual(threaded.report, inline.report);
    threaded.out.forEach((f, i) => assert.ok(f.equals(inline.out[i]), `frame ${i} differs`));
    // A second job reuses the pooled worker and gets the same result again.
    const again = await collect(run({}));
    again.out.forEach((f, i) => assert.ok(f.equals(threaded.out[i]), `frame ${i} differs on reuse`));
  });

  it('stops when the job is aborted', async () => {
    const ac = new AbortController();
    const run = new CpuEngine().start({
      frames: decodeFrames(
        { inputArgs: ['-i', VIDEO], width: SIZE, height: SIZE, maxFrames: FRAMES },
        { signal: ac.signal },
      ),
      width: SIZE,
      height: SIZE,
      fps: FPS,
      frameCount: FRAMES,
      audioPath: speech,
      activeSpans: null,
      options: normaliseOptions({}, 'lipsync-2'),
      settings: {},
      signal: ac.signal,
    });
    let seen = 0;
    await assert.rejects(async () => {
      for await (const _frame of run.frames) {
        if (++seen === 5) ac.abort(new Error('stop'));
      }
    });
    assert.ok(seen >= 5 && seen < FRAMES, `${seen} frames before stopping`);
  });

  it('keeps the mouth at the source closed level when the audio is silent', async (t) => {
    const out = join(dir, 'silence.mp4');
    const report = await runEngine(silence, out);
    assert.equal(report.framesWithFace, FRAMES);
    assert.equal(report.lipMotionGenerated, false);
    assert.ok((report.warnings as string[]).some((w) => w.includes('no speech')));
    const measured = await measureMouth(out);
    const closed = quantile(source.opening, 0.1);
    const talking = quantile(source.opening, 0.6);
    const outMedian = quantile(measured.opening, 0.5);
    const outHigh = quantile(measured.opening, 0.9);
    t.diagnostic(
      `source closed ${closed.toFixed(3)}, talking ${talking.toFixed(3)}; silent output median ${outMedian.toFixed(3)}, p90 ${outHigh.toFixed(3)}`,
    );
    assert.ok(talking > closed + 0.03, 'the source clip talks');
    assert.ok(outMedian <= closed + 0.015, `median opening ${outMedian} vs closed ${closed}`);
    assert.ok(outHigh < talking, `p90 opening ${outHigh} vs talking ${talking}`);
  });
});
