// test-database: none
// The dub's soundtrack (mixDub) on real ffmpeg with generated signals: a 110 Hz sine as the
// background, a 440 Hz cosine (starting and ending at its peak, the worst case for a click) as a
// dubbed clip. Levels are read per frequency with a Goertzel-style single-bin DFT over windows that
// hold whole periods of both tones, so the background and the clip are measured apart.
import assert from 'node:assert/strict';
import { access, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { mixDub, type DubMixInput } from '../../src/media/dub-mix.js';
import { MediaProcessError, runFfmpeg } from '../../src/media/ffmpeg.js';
import { makeTempDir, removeTempDir } from '../../src/media/tempdir.js';
import { readWavInfo } from '../../src/media/wav.js';

const RATE = 48_000;

/** The output's samples, one float array per channel, after checking its header. */
async function readOut(path: string): Promise<Float32Array[]> {
  const info = await readWavInfo(path);
  assert.equal(info.sampleRate, RATE);
  assert.equal(info.bitsPerSample, 16);
  assert.equal(info.float, false);
  const buf = await readFile(path);
  const chans = Array.from({ length: info.channels }, () => new Float32Array(info.frames));
  for (let f = 0; f < info.frames; f++) {
    for (let c = 0; c < info.channels; c++) {
      chans[c][f] = buf.readInt16LE(info.dataOffset + (f * info.channels + c) * 2) / 32768;
    }
  }
  return chans;
}

const at = (ms: number): number => Math.round((ms * RATE) / 1000);

/** Amplitude of the `hz` component over [fromMs, toMs). */
function amplitude(x: Float32Array, hz: number, fromMs: number, toMs: number): number {
  let re = 0;
  let im = 0;
  const a = at(fromMs);
  const b = at(toMs);
  for (let n = a; n < b; n++) {
    const w = (2 * Math.PI * hz * n) / RATE;
    re += x[n] * Math.cos(w);
    im -= x[n] * Math.sin(w);
  }
  return (2 * Math.hypot(re, im)) / (b - a);
}

const db = (ratio: number): number => 20 * Math.log10(ratio);

/** The largest sample-to-sample step over [fromMs, toMs). */
function maxStep(x: Float32Array, fromMs: number, toMs: number): number {
  let m = 0;
  for (let n = Math.max(1, at(fromMs)); n < Math.min(x.length, at(toMs)); n++) {
    m = Math.max(m, Math.abs(x[n] - x[n - 1]));
  }
  return m;
}

describe('mixDub', () => {
  let dir: string;
  const file = (name: string): string => join(dir, name);
  const lavfi = async (source: string, out: string, extra: string[] = []): Promise<string> => {
    await runFfmpeg(['-f', 'lavfi', '-i', source, ...extra, file(out)]);
    return file(out);
  };

  let clip16k: string;
  before(async () => {
    dir = await makeTempDir('dub-mix-test');
    // Like an MBROLA sentence: mono 16-bit at 16 kHz, 0.5 s.
    clip16k = await lavfi('aevalsrc=0.3*cos(2*PI*440*t):s=16000:d=0.5', 'clip.wav', ['-c:a', 'pcm_s16le']);
  });
  after(async () => {
    await removeTempDir(dir);
  });

  it('keeps the background and its channels, ducks it in speech spans with ramps, sums the clip in without clicks', async () => {
    // Stereo at 44.1 kHz with different levels per channel: resampled, and the channels kept apart.
    const source = await lavfi('aevalsrc=0.5*sin(2*PI*110*t)|0.4*sin(2*PI*110*t):s=44100:d=3', 'stereo.wav', [
      '-c:a',
      'pcm_s16le',
    ]);
    const outPath = file('stereo-out.wav');
    const result = await mixDub(
      {
        sourcePath: source,
        speechSpans: [{ startMs: 1000, endMs: 2000 }],
        clips: [{ path: clip16k, startMs: 1200 }],
        outPath,
      },
      { workDir: dir },
    );
    assert.deepEqual(result, { durationMs: 3000, sampleRate: RATE, channels: 2 });
    const chans = await readOut(outPath);
    assert.equal(chans.length, 2);
    assert.equal(chans[0].length, 3 * RATE);

    for (const [c, level] of [
      [0, 0.5],
      [1, 0.4],
    ] as const) {
      const x = chans[c];
      // Outside the (padded) span: the original level.
      for (const [a, b] of [
        [100, 800],
        [2200, 2900],
      ]) {
        const d = db(amplitude(x, 110, a, b) / level);
        assert.ok(Math.abs(d) < 0.5, `channel ${c} ${a}-${b} ms: background ${d.toFixed(2)} dB off`);
      }
      // Inside: lowered by the default 24 dB (before and after the clip, and under it).
      for (const [a, b] of [
        [1000, 1200],
        [1300, 1600],
        [1750, 1950],
      ]) {
        const d = db(amplitude(x, 110, a, b) / level);
        assert.ok(Math.abs(d + 24) < 1, `channel ${c} ${a}-${b} ms: background at ${d.toFixed(2)} dB`);
      }
      // The clip at its place, at its own level, in each channel; nothing of it before or after.
      const clipDb = db(amplitude(x, 440, 1300, 1600) / 0.3);
      assert.ok(Math.abs(clipDb) < 0.5, `channel ${c}: clip ${clipDb.toFixed(2)} dB off`);
      assert.ok(amplitude(x, 440, 1000, 1200) < 0.003, `channel ${c}: clip heard before its start`);
      assert.ok(amplitude(x, 440, 1750, 1950) < 0.003, `channel ${c}: clip heard after its end`);

      // No click: the steps stay near the tones' own largest step. At the ramps into and out of the
      // duck only the background plays (0.5·2π·110/48000 ≈ 0.0072 in the louder channel; a hard cut
      // there would step by about 0.45, a 2 ms ramp by 0.0086); at the clip's edges the clip
      // adds 0.3·2π·440/48000 ≈ 0.017 (its hard cut: at least 0.1, checked below).
      const tone = level * ((2 * Math.PI * 110) / RATE);
      for (const [a, b, bound] of [
        [850, 1050, tone * 1.1],
        [1950, 2150, tone * 1.1],
        [1170, 1230, 0.03],
        [1670, 1730, 0.03],
      ]) {
        const step = maxStep(x, a, b);
        assert.ok(
          step < bound,
          `channel ${c} ${a}-${b} ms: a step of ${step.toFixed(4)} (bound ${bound.toFixed(4)})`,
        );
      }
    }

    // The bound means something: the same clip resampled without fades jumps by more at its start.
    const raw = file('clip-48k.wav');
    await runFfmpeg(['-i', clip16k, '-ar', String(RATE), '-c:a', 'pcm_s16le', raw]);
    const [rawClip] = await readOut(raw);
    assert.ok(Math.abs(rawClip[0]) > 0.1, `a hard cut starts with ${rawClip[0].toFixed(3)}`);
  });

  it('lasts the longest of the source, minDurationMs and the last clip; a 48 kHz mono source passes unchanged outside spans', async () => {
    const source = await lavfi('aevalsrc=0.5*sin(2*PI*100*t):s=48000:d=1', 'mono.wav', ['-c:a', 'pcm_s16le']);
    const [orig] = await readOut(source);

    const past = await mixDub(
      {
        sourcePath: source,
        speechSpans: [],
        clips: [{ path: clip16k, startMs: 1500 }],
        outPath: file('past.wav'),
      },
      { workDir: dir },
    );
    assert.deepEqual(past, { durationMs: 2000, sampleRate: RATE, channels: 1 });
    const [x] = await readOut(file('past.wav'));
    assert.equal(x.length, 2 * RATE);
    assert.deepEqual(x.subarray(0, RATE), orig);
    assert.ok(Math.abs(db(amplitude(x, 440, 1600, 1900) / 0.3)) < 0.5, 'the clip past the source is there');
    assert.ok(
      x.subarray(RATE, at(1500)).every((s) => s === 0),
      'silence between the source and the clip',
    );

    const longer = await mixDub(
      {
        sourcePath: source,
        speechSpans: [],
        clips: [{ path: clip16k, startMs: 1500 }],
        outPath: file('longer.wav'),
        minDurationMs: 2600,
      },
      { workDir: dir },
    );
    assert.equal(longer.durationMs, 2600);
    const [y] = await readOut(file('longer.wav'));
    assert.equal(y.length, at(2600));
    assert.ok(y.subarray(at(2000)).every((s) => s === 0));

    // duckDb sets the depth.
    await mixDub(
      {
        sourcePath: source,
        speechSpans: [{ startMs: 300, endMs: 700 }],
        clips: [],
        outPath: file('shallow.wav'),
        duckDb: -10,
      },
      { workDir: dir },
    );
    const [z] = await readOut(file('shallow.wav'));
    assert.ok(Math.abs(db(amplitude(z, 100, 300, 700) / 0.5) + 10) < 0.5);
    assert.deepEqual(z.subarray(0, at(200)), orig.subarray(0, at(200)));
  });

  it('mixes the clips over silence for a source without audio, and folds more than two channels to two', async () => {
    const video = await lavfi('testsrc=size=64x64:rate=25:duration=1', 'silent.mp4', [
      '-c:v',
      'libx264',
      '-pix_fmt',
      'yuv420p',
    ]);
    const res = await mixDub(
      {
        sourcePath: video,
        speechSpans: [{ startMs: 0, endMs: 500 }],
        clips: [{ path: clip16k, startMs: 200 }],
        outPath: file('silent.wav'),
      },
      { workDir: dir },
    );
    assert.deepEqual(res, { durationMs: 1000, sampleRate: RATE, channels: 1 });
    const [x] = await readOut(file('silent.wav'));
    assert.ok(Math.abs(db(amplitude(x, 440, 300, 600) / 0.3)) < 0.5);
    assert.ok(x.subarray(0, at(195)).every((s) => s === 0));
    assert.ok(x.subarray(at(705)).every((s) => s === 0));

    const surround = await lavfi('sine=f=100:sample_rate=48000:d=0.5', 'surround.wav', ['-ac', '6']);
    const res6 = await mixDub(
      { sourcePath: surround, speechSpans: [], clips: [], outPath: file('surround-out.wav') },
      { workDir: dir },
    );
    assert.deepEqual(res6, { durationMs: 500, sampleRate: RATE, channels: 2 });
    assert.equal((await readOut(file('surround-out.wav'))).length, 2);
  });

  it('keeps a loud sum from clipping: overlapping clips over a loud background are bent under full scale', async () => {
    const source = await lavfi('aevalsrc=0.9*sin(2*PI*100*t):s=48000:d=1', 'loud.wav', ['-c:a', 'pcm_s16le']);
    const clip = await lavfi('aevalsrc=0.2*cos(2*PI*440*t):s=16000:d=0.5', 'loud-clip.wav', [
      '-c:a',
      'pcm_s16le',
    ]);
    const res = await mixDub(
      {
        sourcePath: source,
        speechSpans: [],
        // Overlapping from 400 to 600 ms (given out of order): summed, up to 1.3 with the background.
        clips: [
          { path: clip, startMs: 400 },
          { path: clip, startMs: 100 },
        ],
        outPath: file('loud-out.wav'),
      },
      { workDir: dir },
    );
    assert.equal(res.durationMs, 1000);
    const [x] = await readOut(file('loud-out.wav'));
    let peak = 0;
    for (const s of x) peak = Math.max(peak, Math.abs(s));
    assert.ok(peak < 32767 / 32768, `peak ${peak}: clipped at the rail`);
    assert.ok(peak > 0.97, `peak ${peak}: the sum was scaled down rather than bent`);
    assert.ok(amplitude(x, 440, 450, 550) > 0.3, 'both clips sound where they overlap');
    assert.ok(maxStep(x, 0, 1000) < 0.05, 'no jump where the sum bends');
  });

  it('rejects on an aborted signal and on a clip ffmpeg cannot read, leaving no output', async () => {
    const source = await lavfi('aevalsrc=0.5*sin(2*PI*100*t):s=48000:d=1', 'abort.wav', [
      '-c:a',
      'pcm_s16le',
    ]);
    const input: DubMixInput = {
      sourcePath: source,
      speechSpans: [],
      clips: [{ path: clip16k, startMs: 0 }],
      outPath: file('aborted.wav'),
    };
    const ac = new AbortController();
    ac.abort();
    await assert.rejects(mixDub(input, { workDir: dir, signal: ac.signal }));
    await assert.rejects(access(input.outPath));

    const notAudio = file('not-audio.wav');
    await writeFile(notAudio, 'this is not a WAV file');
    await assert.rejects(
      mixDub({ ...input, clips: [{ path: notAudio, startMs: 100 }] }, { workDir: dir }),
      (err) => err instanceof MediaProcessError && err.reason === 'failed',
    );
    await assert.rejects(access(input.outPath));
  });
});
