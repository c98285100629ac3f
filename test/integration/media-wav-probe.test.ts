// test-database: none
// probeMedia reads a plain WAV file's header itself (no ffprobe start): what it says must be what
// ffprobe says of the same file, for every sample format it takes; anything else is left to ffprobe.
import assert from 'node:assert/strict';
import { stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runFfmpeg } from '../../src/media/ffmpeg.js';
import { ffprobeMedia, ffprobeStartCount, MediaProbeError, probeMedia } from '../../src/media/probe.js';
import { makeTempDir, removeTempDir } from '../../src/media/tempdir.js';
import { fixture } from '../helpers/paths.js';

describe('probeMedia on WAV files without ffprobe', () => {
  let dir: string;
  before(async () => {
    dir = await makeTempDir('media-wav-probe');
  });
  after(async () => {
    await removeTempDir(dir);
  });

  async function sameAsFfprobe(path: string): Promise<void> {
    const starts = ffprobeStartCount();
    const here = await probeMedia(path);
    assert.equal(ffprobeStartCount(), starts, `${path}: no ffprobe`);
    const theirs = await ffprobeMedia(path, (await stat(path)).size);
    const { durationSeconds, ...rest } = here;
    const { durationSeconds: theirDuration, ...theirRest } = theirs;
    assert.deepEqual(rest, theirRest, path);
    assert.ok(Math.abs((durationSeconds ?? 0) - (theirDuration ?? 0)) < 0.001, `${path}: duration`);
  }

  it('says what ffprobe says of the fixtures and of every sample format it reads', async () => {
    for (const f of ['audio_1.wav', 'audio_2.wav', 'hello.wav', 'radio_speech.wav']) {
      await sameAsFfprobe(fixture(`media/${f}`));
    }
    for (const [codec, channels] of [
      ['pcm_u8', 1],
      ['pcm_s24le', 2],
      ['pcm_s32le', 1],
      ['pcm_f32le', 3],
      ['pcm_f64le', 2],
    ] as const) {
      const out = join(dir, `${codec}-${channels}.wav`);
      await runFfmpeg(['-i', fixture('media/hello.wav'), '-ac', String(channels), '-c:a', codec, out]);
      await sameAsFfprobe(out);
    }
  });

  it('leaves other files to ffprobe: compressed audio in a WAV, other containers, a broken header', async () => {
    const adpcm = join(dir, 'adpcm.wav');
    await runFfmpeg(['-i', fixture('media/hello.wav'), '-c:a', 'adpcm_ms', adpcm]);
    const broken = join(dir, 'broken.wav');
    await writeFile(broken, Buffer.from('RIFF\u0000\u0000\u0000\u0000WAVEjunk'));
    for (const [path, expectedCodec] of [
      [adpcm, 'adpcm_ms'],
      // (An h264 MP4 is read from its boxes: test/unit/media-iso-probe.test.ts; MPEG-4 Part 2 is not.)
      [fixture('media/wda_speaker_a.mp4'), 'aac'],
    ] as const) {
      const starts = ffprobeStartCount();
      const p = await probeMedia(path);
      assert.equal(ffprobeStartCount(), starts + 1, `${path}: ffprobe read it`);
      assert.equal(p.audio?.codec, expectedCodec);
    }
    // The message may reach a client: no path, no tool output; ffprobe's words are the log's detail.
    await assert.rejects(
      probeMedia(broken),
      (e: unknown) =>
        e instanceof MediaProbeError &&
        /not in a media format/.test(e.message) &&
        !e.message.includes(dir) &&
        !/ffprobe/i.test(e.message) &&
        (e.detail ?? '') !== '',
    );
  });
});
