// test-database: none
// Conform options on real media: segments (original sound kept outside them), still images, speedup,
// output resolution, fps, mov, progress and abort, and the full-size fixtures.
import assert from 'node:assert/strict';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { conform, conformedFrames, prepareConform, type ConformOptions } from '../../src/media/conform.js';
import { ConformPlanError } from '../../src/media/conform-plan.js';
import { MediaProcessError, runFfmpeg } from '../../src/media/ffmpeg.js';
import { probeMedia } from '../../src/media/probe.js';
import { makeTempDir, removeTempDir } from '../../src/media/tempdir.js';
import { collect, makeInputs, media, streams, windowRms, type TestInputs } from './media-support.js';
import { runningProcesses } from '../helpers/running-processes.js';

describe('conform: options on real media', () => {
  let dir: string;
  let inp: TestInputs;
  before(async () => {
    dir = await makeTempDir('media-conform-options');
    inp = await makeInputs(dir);
  });
  after(async () => {
    await removeTempDir(dir);
  });

  async function run(visual: string, audio: string, options: ConformOptions, name: string, extra = {}) {
    const out = join(dir, name);
    const plan = await conform(
      {
        visual: { path: visual, probe: await probeMedia(visual) },
        audio: { path: audio, probe: await probeMedia(audio) },
        options,
      },
      out,
      extra,
    );
    return { out, plan, s: await streams(out) };
  }

  it('segments: the new (silent) audio only inside the segment, the original sound outside', async () => {
    const [before0, inside0, after0] = await windowRms(
      inp.clip,
      [
        [0.1, 0.5],
        [0.7, 1.3],
        [1.5, 1.9],
      ],
      dir,
    );
    assert.ok(before0 > 0.01 && inside0 > 0.01 && after0 > 0.01, 'the source speaks throughout');
    const { out, plan, s } = await run(
      inp.clip,
      inp.silentWav,
      { syncMode: 'loop', segments: [{ startTime: 0.6, endTime: 1.4 }] },
      'seg-silent.mp4',
    );
    assert.equal(plan.outsideSegments, 'original_audio');
    assert.ok(s.video && s.audio);
    assert.equal(s.video.frames, 50);
    assert.ok(Math.abs(s.audio.duration - 2) <= 0.05, `audio ${s.audio.duration}`);
    const [b, inside, a] = await windowRms(
      out,
      [
        [0.1, 0.5],
        [0.7, 1.3],
        [1.5, 1.9],
      ],
      dir,
    );
    assert.ok(inside < 0.001, `segment rms ${inside}`);
    assert.ok(Math.abs(b - before0) / before0 < 0.25, `before segment ${b} vs source ${before0}`);
    assert.ok(Math.abs(a - after0) / after0 < 0.25, `after segment ${a} vs source ${after0}`);
  });

  it('segments on a video without sound: the audio window inside, silence outside', async () => {
    const segments = [
      { startTime: 1.2, endTime: 1.8, audioStart: 2 },
      { startTime: 0.2, endTime: 0.8, audioStart: 1, audioEnd: 1.6 },
    ];
    const { out, plan, s } = await run(inp.muteClip, inp.longWav, { segments }, 'seg-mute.mp4');
    assert.equal(plan.outsideSegments, 'silence');
    assert.ok(s.audio && Math.abs(s.audio.duration - 2) <= 0.05);
    const rms = await windowRms(
      out,
      [
        [0, 0.15],
        [0.3, 0.7],
        [0.9, 1.1],
        [1.3, 1.7],
        [1.85, 2],
      ],
      dir,
    );
    const [src1, src2] = await windowRms(
      inp.longWav,
      [
        [1.1, 1.5],
        [2.1, 2.5],
      ],
      dir,
    );
    assert.ok(rms[0] < 0.001 && rms[2] < 0.001 && rms[4] < 0.001, `outside ${rms}`);
    assert.ok(Math.abs(rms[1] - src1) / src1 < 0.25, `first window ${rms[1]} vs audio ${src1}`);
    assert.ok(Math.abs(rms[3] - src2) / src2 < 0.25, `second window ${rms[3]} vs audio ${src2}`);
  });

  it('refuses overlapping segments before running ffmpeg', async () => {
    await assert.rejects(
      run(
        inp.clip,
        inp.longWav,
        {
          segments: [
            { startTime: 0, endTime: 1 },
            { startTime: 0.5, endTime: 1.5 },
          ],
        },
        'bad.mp4',
      ),
      (e: unknown) => e instanceof ConformPlanError && e.field === 'segments',
    );
  });

  it('a still image becomes a video as long as the audio', async () => {
    assert.equal((await probeMedia(inp.still)).kind, 'IMAGE');
    const { s, plan } = await run(inp.still, inp.shortWav, { syncMode: 'bounce' }, 'still.mp4');
    assert.equal(plan.video.strategy, 'still');
    assert.ok(s.video && s.audio);
    assert.deepEqual([s.video.width, s.video.height, s.video.fps], [120, 96, 25]);
    assert.ok(Math.abs(s.video.frames - 30) <= 1, `frames ${s.video.frames}`);
    assert.ok(Math.abs(s.audio.duration - 1.2) <= 0.05 && Math.abs(s.video.duration - 1.2) <= 0.05);
  });

  it('speedup 2 halves the resolution; fps and output_resolution (letterboxed) are honoured', async () => {
    const fast = await run(inp.clip, inp.shortWav, { speedup: 2 }, 'speedup.mp4');
    assert.deepEqual([fast.s.video?.width, fast.s.video?.height], [80, 80]);
    const sized = await run(inp.clip, inp.shortWav, { outputResolution: [200, 120], fps: 15 }, 'sized.mp4');
    assert.deepEqual([sized.s.video?.width, sized.s.video?.height, sized.s.video?.fps], [200, 120, 15]);
    assert.ok(Math.abs((sized.s.video?.frames ?? 0) - 18) <= 1);
    const frames = await collect(
      conformedFrames(
        await prepareConform(
          {
            visual: { path: inp.clip, probe: await probeMedia(inp.clip) },
            audio: { path: inp.shortWav, probe: await probeMedia(inp.shortWav) },
            options: { outputResolution: [200, 120] },
          },
          await makeTempDir('lb', dir),
        ),
      ),
    );
    const px = (f: Buffer, x: number, y: number) =>
      f[(y * 200 + x) * 3] + f[(y * 200 + x) * 3 + 1] + f[(y * 200 + x) * 3 + 2];
    assert.equal(px(frames[0], 5, 60), 0, 'black bar on the left');
    assert.ok(px(frames[0], 100, 60) > 30, 'picture in the middle');
  });

  it('applies the rotation of phone videos (the output is upright, without a rotation flag)', async () => {
    const flat = join(dir, 'flat.mp4');
    const rotated = join(dir, 'rotated.mp4');
    await runFfmpeg([
      '-i',
      inp.clip,
      '-vf',
      'scale=160:96',
      '-c:v',
      'libx264',
      '-preset',
      'ultrafast',
      '-c:a',
      'copy',
      flat,
    ]);
    await runFfmpeg(['-i', flat, '-c', 'copy', '-metadata:s:v:0', 'rotate=90', rotated]);
    assert.equal((await probeMedia(rotated)).video?.rotation, 90);
    const { out, s } = await run(rotated, inp.shortWav, {}, 'upright.mp4');
    assert.deepEqual([s.video?.width, s.video?.height], [96, 160]);
    assert.equal((await probeMedia(out)).video?.rotation, 0);
  });

  it('writes mov when asked', async () => {
    const { out, s } = await run(inp.clip, inp.shortWav, { outputFormat: 'mov' }, 'out.mov');
    assert.equal((await probeMedia(out)).format, 'mov');
    assert.ok(s.video && s.audio);
  });

  it('reports rising progress up to 1 and removes its temp files', async () => {
    const seen: number[] = [];
    const tempRoot = await makeTempDir('progress', dir);
    await run(inp.clip, inp.longWav, { syncMode: 'bounce' }, 'progress.mp4', {
      onProgress: (f: number) => seen.push(f),
      tempRoot,
    });
    assert.ok(seen.length >= 3, `progress ${seen}`);
    assert.ok(seen.every((f, i) => f > 0 && f <= 1 && (i === 0 || f > seen[i - 1])));
    assert.equal(seen.at(-1), 1);
    assert.deepEqual(await readdir(tempRoot), []);
  });

  it('stops ffmpeg and removes its temp files on abort', async () => {
    const tempRoot = await makeTempDir('abort', dir);
    const ctl = new AbortController();
    const pending = run(
      media('latentsync_demo1.mp4'),
      media('latentsync_demo2.wav'),
      { syncMode: 'bounce' },
      'aborted.mp4',
      {
        signal: ctl.signal,
        tempRoot,
        onProgress: () => ctl.abort(),
      },
    );
    await assert.rejects(pending, (e: unknown) => e instanceof MediaProcessError && e.reason === 'aborted');
    // stopped, not left to finish the conform
    assert.deepEqual(runningProcesses('ffmpeg', 'latentsync_demo1.mp4'), []);
    assert.deepEqual(await readdir(tempRoot), []);
  });

  it('conforms the full-size fixtures: portrait HEVC and mpeg4', async () => {
    const hevc = await run(media('latentsync_demo1.mp4'), media('hello.wav'), { speedup: 4 }, 'hevc.mp4');
    assert.deepEqual([hevc.s.video?.width, hevc.s.video?.height, hevc.s.video?.fps], [270, 480, 25]);
    assert.ok(Math.abs((hevc.s.audio?.duration ?? 0) - 2.843) <= 0.05);
    const mpeg4 = await run(
      media('wda_speaker_a.mp4'),
      media('speech_short.wav'),
      { syncMode: 'silence', speedup: 2 },
      'mpeg4.mp4',
    );
    assert.deepEqual([mpeg4.s.video?.width, mpeg4.s.video?.height], [256, 256]);
    assert.ok(Math.abs((mpeg4.s.audio?.duration ?? 0) - 8.064) <= 0.05, `${mpeg4.s.audio?.duration}`);
    assert.ok(Math.abs((mpeg4.s.video?.frames ?? 0) - 202) <= 1);
  });
});
