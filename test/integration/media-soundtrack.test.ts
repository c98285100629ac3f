// test-database: none
// The soundtrack made in-process from a WAV (src/media/soundtrack.ts) against the ffmpeg pass it
// replaces (conform-graph.ts audioGraph), on the fixture recordings: the same length to the sample,
// the same samples where no resampling is needed, and within a resampler's difference otherwise.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { audioGraph } from '../../src/media/conform-graph.js';
import type { ConformPlan } from '../../src/media/conform-plan.js';
import { runFfmpeg } from '../../src/media/ffmpeg.js';
import { probeMedia } from '../../src/media/probe.js';
import { soundtrackSource, writeSoundtrack } from '../../src/media/soundtrack.js';
import { makeTempDir, removeTempDir } from '../../src/media/tempdir.js';
import { fixture } from '../helpers/paths.js';

/** A plan whose new audio fills the whole output (the case the in-process pass serves). */
function plan(seconds: number): ConformPlan {
  return { durationSeconds: seconds, segments: [], outsideSegments: null } as unknown as ConformPlan;
}

/** The interleaved 16-bit samples of a WAV file's data chunk. */
async function pcm(path: string): Promise<Int16Array> {
  const b = await readFile(path);
  const at = b.indexOf('data') + 8;
  return new Int16Array(b.buffer.slice(b.byteOffset + at, b.byteOffset + b.length));
}

function snrDb(reference: Int16Array, other: Int16Array): number {
  let signal = 0;
  let noise = 0;
  for (let i = 0; i < reference.length; i++) {
    signal += reference[i]! ** 2;
    noise += (reference[i]! - other[i]!) ** 2;
  }
  return 10 * Math.log10(signal / Math.max(noise, 1e-9));
}

describe('soundtrack made in-process from a WAV', () => {
  let dir: string;
  before(async () => {
    dir = await makeTempDir('media-soundtrack');
  });
  after(async () => {
    await removeTempDir(dir);
  });

  /** Both soundtracks of `file` for an output of `seconds`: [ffmpeg's, this process's]. */
  async function both(file: string, seconds: number, tag: string): Promise<[Int16Array, Int16Array]> {
    const input = fixture(`media/${file}`);
    const graph = audioGraph(plan(seconds), input, null);
    const viaFfmpeg = join(dir, `${tag}-ffmpeg.wav`);
    await runFfmpeg([
      ...graph.inputArgs,
      '-filter_complex',
      graph.graph,
      '-map',
      `[${graph.output}]`,
      '-c:a',
      'pcm_s16le',
      '-f',
      'wav',
      viaFfmpeg,
    ]);
    const info = await soundtrackSource(input, graph.totalSamples);
    assert.ok(info, `${file} is made in-process`);
    const here = join(dir, `${tag}-here.wav`);
    const progress: number[] = [];
    await writeSoundtrack(input, info, graph.totalSamples, here, { onProgress: (f) => progress.push(f) });
    assert.equal(progress.at(-1), 1, 'progress reaches the end');
    const probe = await probeMedia(here);
    assert.equal(probe.audio?.sampleRate, 48000);
    assert.equal(probe.audio?.channels, 2);
    const [a, b] = [await pcm(viaFfmpeg), await pcm(here)];
    assert.equal(b.length, graph.totalSamples * 2, 'exactly the planned number of samples');
    assert.equal(b.length, a.length, "as many samples as ffmpeg's");
    return [a, b];
  }

  it('48 kHz stereo: the same samples as ffmpeg, cut or padded', async () => {
    for (const seconds of [3, 7.5]) {
      const [a, b] = await both('audio_2.wav', seconds, `same-${seconds}`);
      assert.deepEqual(b, a, `${seconds} s`);
    }
  });

  it('44.1 kHz stereo and 16 kHz mono: resampled within a resampler of ffmpeg, silence after the end', async () => {
    for (const [file, minSnr] of [
      ['audio_1.wav', 70],
      ['hello.wav', 55],
    ] as const) {
      const [a, b] = await both(file, 6, file);
      const inputSeconds = (await probeMedia(fixture(`media/${file}`))).durationSeconds as number;
      const heard = Math.floor((inputSeconds - 0.01) * 48000) * 2;
      const snr = snrDb(a.subarray(0, heard), b.subarray(0, heard));
      assert.ok(snr >= minSnr, `${file}: ${snr.toFixed(1)} dB against ffmpeg's resampling`);
      const tail = b.subarray(Math.ceil((inputSeconds + 0.01) * 48000) * 2);
      assert.ok(tail.length > 0 && tail.every((s) => s === 0), `${file}: silence after the recording`);
      if (file === 'hello.wav') {
        // One channel into two as ffmpeg mixes it: the same on both sides.
        for (let i = 0; i < heard; i += 2) assert.equal(b[i], b[i + 1]);
      }
    }
  });

  it('leaves to ffmpeg what it does not read: other containers, more channels, odd rates', async () => {
    assert.equal(await soundtrackSource(fixture('media/face_1.mp4'), 48000), null, 'not a WAV');
    const surround = join(dir, 'three-channels.wav');
    await runFfmpeg(['-i', fixture('media/hello.wav'), '-ac', '3', '-c:a', 'pcm_s16le', surround]);
    assert.equal(await soundtrackSource(surround, 48000), null, 'three channels: ffmpeg mixes them down');
    const odd = join(dir, 'odd-rate.wav');
    await runFfmpeg(['-i', fixture('media/hello.wav'), '-ar', '22051', '-c:a', 'pcm_s16le', odd]);
    assert.equal(await soundtrackSource(odd, 48000), null, '22051 Hz: too many resampling phases');
    assert.ok(await soundtrackSource(fixture('media/hello.wav'), 48000));
    assert.equal(
      await soundtrackSource(fixture('media/hello.wav'), 2 ** 30),
      null,
      'longer than a RIFF file holds',
    );
  });
});
