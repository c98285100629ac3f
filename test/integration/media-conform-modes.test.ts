// test-database: none
// Every sync_mode with audio longer and shorter than the video, on real ffmpeg; outputs checked with
// ffprobe, and the picture timing (loop, bounce, remap) checked frame by frame.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { conform, conformedFrames, prepareConform, type ConformRequest } from '../../src/media/conform.js';
import { SYNC_MODES, type SyncMode } from '../../src/media/conform-plan.js';
import { probeMedia } from '../../src/media/probe.js';
import { makeTempDir, removeTempDir } from '../../src/media/tempdir.js';
import { collect, frameDiff, makeInputs, streams, windowRms, type TestInputs } from './media-support.js';

const FPS = 25;
const TOLERANCE = 0.05; // seconds: a frame at 25 fps is 0.04

describe('conform: sync modes on real media', () => {
  let dir: string;
  let inp: TestInputs;
  let videoSeconds: number;
  const audioSeconds: Record<'long' | 'short', number> = { long: 0, short: 0 };

  before(async () => {
    dir = await makeTempDir('media-conform-modes');
    inp = await makeInputs(dir);
    videoSeconds = (await probeMedia(inp.clip)).durationSeconds as number;
    audioSeconds.long = (await probeMedia(inp.longWav)).durationSeconds as number;
    audioSeconds.short = (await probeMedia(inp.shortWav)).durationSeconds as number;
  });
  after(async () => {
    await removeTempDir(dir);
  });

  async function request(syncMode: SyncMode, audio: string): Promise<ConformRequest> {
    return {
      visual: { path: inp.clip, probe: await probeMedia(inp.clip) },
      audio: { path: audio, probe: await probeMedia(audio) },
      options: { syncMode },
    };
  }

  function expectedSeconds(mode: SyncMode, a: number): number {
    if (mode === 'cut_off') return Math.min(a, videoSeconds);
    if (mode === 'silence') return videoSeconds;
    return a;
  }

  for (const mode of SYNC_MODES) {
    for (const length of ['long', 'short'] as const) {
      it(`${mode}, audio ${length === 'long' ? 'longer' : 'shorter'} than the video`, async () => {
        const out = join(dir, `${mode}-${length}.mp4`);
        const audio = length === 'long' ? inp.longWav : inp.shortWav;
        const plan = await conform(await request(mode, audio), out);
        const expected = expectedSeconds(mode, audioSeconds[length]);
        assert.ok(Math.abs(plan.durationSeconds - expected) < 1e-9);
        const s = await streams(out);
        assert.ok(s.video && s.audio, 'video and audio streams');
        assert.equal(s.video.codec, 'h264');
        assert.equal(s.video.pixFmt, 'yuv420p');
        assert.deepEqual([s.video.width, s.video.height, s.video.fps], [160, 160, FPS]);
        assert.ok(
          Math.abs(s.video.frames - expected * FPS) <= 1,
          `frames ${s.video.frames} for ${expected} s`,
        );
        assert.ok(
          Math.abs(s.video.duration - expected) <= TOLERANCE,
          `video ${s.video.duration} vs ${expected}`,
        );
        assert.equal(s.audio.codec, 'aac');
        assert.ok(
          Math.abs(s.audio.duration - expected) <= TOLERANCE,
          `audio ${s.audio.duration} vs ${expected}`,
        );
        const probe = await probeMedia(out);
        assert.equal(probe.format, 'mp4');
        assert.ok(Math.abs((probe.durationSeconds as number) - expected) <= TOLERANCE);
      });
    }
  }

  it('silence pads the short audio with silence to the video length', async () => {
    const out = join(dir, 'silence-check.mp4');
    await conform(await request('silence', inp.shortWav), out);
    const [speech, tail] = await windowRms(
      out,
      [
        [0.1, 1.1],
        [1.35, 1.95],
      ],
      dir,
    );
    assert.ok(speech > 0.01, `speech rms ${speech}`);
    assert.ok(tail < 0.001, `padding rms ${tail}`);
  });

  it('loop restarts the video: the picture repeats with the clip period', async () => {
    const frames = await framesOf('loop', inp.longWav);
    assert.equal(frames.length, Math.round(audioSeconds.long * FPS));
    assert.ok(frameDiff(frames[0], frames[25]) > 1, 'the clip moves');
    const period = frames.findIndex((f, i) => i > 0 && frameDiff(f, frames[0]) < 0.5);
    assert.ok(period === 50 || period === 51, `period ${period}`);
    for (let k = 0; k + period < frames.length; k++) {
      assert.ok(frameDiff(frames[k], frames[k + period]) < 0.5, `frame ${k} vs ${k + period}`);
    }
  });

  it('bounce plays forward then backward without doubling the turning frames', async () => {
    const forward = await framesOf('cut_off', inp.longWav);
    const frames = await framesOf('bounce', inp.longWav);
    const m = forward.length;
    assert.equal(m, 50);
    assert.equal(frames.length, Math.round(audioSeconds.long * FPS));
    const sourceIndex = (i: number): number => {
      const p = i % (2 * m - 2);
      return p < m ? p : 2 * m - 2 - p;
    };
    for (let i = 0; i < frames.length; i++) {
      const want = forward[sourceIndex(i)];
      const d = frameDiff(frames[i], want);
      assert.ok(d < 1, `output frame ${i} should be source frame ${sourceIndex(i)} (diff ${d.toFixed(2)})`);
    }
    assert.ok(frameDiff(frames[55], forward[55 - 50]) > 1, 'the backward run is not the forward run');
  });

  it('remap retimes the whole video onto the audio', async () => {
    const source = await framesOf('cut_off', inp.longWav);
    for (const [audio, seconds] of [
      [inp.longWav, audioSeconds.long],
      [inp.shortWav, audioSeconds.short],
    ] as const) {
      const frames = await framesOf('remap', audio);
      assert.equal(frames.length, Math.round(seconds * FPS));
      const factor = seconds / videoSeconds;
      for (const i of [0, Math.floor(frames.length / 3), Math.floor(frames.length / 2), frames.length - 1]) {
        let best = 0;
        for (let j = 1; j < source.length; j++)
          if (frameDiff(frames[i], source[j]) < frameDiff(frames[i], source[best])) best = j;
        assert.ok(
          Math.abs(best - i / factor) <= 1.5,
          `output ${i} shows source ${best}, expected ~${(i / factor).toFixed(1)}`,
        );
      }
    }
  });

  async function framesOf(mode: SyncMode, audio: string): Promise<Buffer[]> {
    const work = await makeTempDir('frames', dir);
    try {
      const prepared = await prepareConform(await request(mode, audio), work);
      return await collect(conformedFrames(prepared));
    } finally {
      await removeTempDir(work);
    }
  }
});
