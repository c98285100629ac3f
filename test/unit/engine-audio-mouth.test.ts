// Audio -> mouth shapes of the CPU engine: silence keeps the mouth closed, loud speech opens it,
// smoothing (anticipation, attack faster than release), the gate relative to the clip's own level,
// temperature; and the feature extraction on generated WAV files.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { analyseAudio, type AudioFeatures } from '../../src/engines/cpu/audio-features.js';
import { attackRelease, mouthFromAudio, stopClosures } from '../../src/engines/cpu/audio-mouth.js';
import { readWavInfo } from '../../src/media/wav.js';

const FPS = 25;

/** Features for a clip whose loudness per frame is given; vowel-like spectrum (no fricatives). */
function features(db: number[]): AudioFeatures {
  const n = db.length;
  const f = (v: (t: number) => number) => Float32Array.from({ length: n }, (_, t) => v(t));
  const hops: number[] = [];
  for (const d of db) for (let k = 0; k < 4; k++) hops.push(d);
  return {
    fps: FPS,
    frames: n,
    db: Float32Array.from(db),
    low: f((t) => db[t] - 1),
    mid: f((t) => db[t] - 8),
    high: f((t) => db[t] - 25),
    centroid: f(() => 700),
    hopDb: Float32Array.from(hops),
  };
}

/** Speech bursts at `level` dBFS between silences at -90. */
function bursts(level: number): number[] {
  const out: number[] = [];
  for (let b = 0; b < 6; b++) {
    for (let i = 0; i < 10; i++) out.push(-90);
    for (let i = 0; i < 12; i++) out.push(level + (i % 3) * 2);
  }
  for (let i = 0; i < 10; i++) out.push(-90);
  return out;
}

describe('mouthFromAudio', () => {
  it('keeps the mouth closed for a silent clip', () => {
    const m = mouthFromAudio(features(new Array(100).fill(-100)));
    assert.equal(m.hasSpeech, false);
    assert.ok(m.open.every((v) => v === 0));
    assert.ok(m.width.every((v) => v === 0) && m.round.every((v) => v === 0));
  });

  it('keeps the mouth closed under low noise, also with a hum at a steady level', () => {
    const hum = mouthFromAudio(features(new Array(100).fill(-50)));
    assert.equal(hum.hasSpeech, false);
    assert.ok(hum.open.every((v) => v === 0));
  });

  it('opens for loud speech and closes in the pauses', () => {
    const db = bursts(-18);
    const m = mouthFromAudio(features(db));
    assert.equal(m.hasSpeech, true);
    const speech = db.map((d, t) => (d > -60 ? m.open[t] : NaN)).filter(Number.isFinite);
    const meanSpeech = speech.reduce((a, b) => a + b, 0) / speech.length;
    assert.ok(meanSpeech > 0.3, `mean opening in speech ${meanSpeech}`);
    // Well inside each pause (3+ frames after the sound stops) the mouth is (nearly) closed.
    for (let b = 1; b < 6; b++) {
      const mid = b * 22 + 6;
      assert.ok(m.open[mid] < 0.08, `pause frame ${mid}: ${m.open[mid]}`);
    }
    assert.ok(m.open.every((v) => v >= 0 && v <= 1));
  });

  it('sets the gate from the clip itself: quiet speech opens as much as loud speech', () => {
    const loud = mouthFromAudio(features(bursts(-15)));
    const quiet = mouthFromAudio(features(bursts(-40)));
    const mean = (a: Float32Array) => a.reduce((x, y) => x + y, 0) / a.length;
    assert.ok(
      Math.abs(mean(loud.open) - mean(quiet.open)) < 0.02,
      `${mean(loud.open)} vs ${mean(quiet.open)}`,
    );
  });

  it('anticipates the sound by a frame and opens faster than it closes', () => {
    const db = [...new Array(20).fill(-90), ...new Array(20).fill(-18), ...new Array(20).fill(-90)];
    const m = mouthFromAudio(features(db));
    assert.ok(m.open[19] > 0.05, 'starts opening one frame before the sound');
    assert.equal(m.open[17], 0);
    // Rise: most of the way within 3 frames; fall: slower.
    const peak = Math.max(...m.open);
    const rise = m.open.findIndex((v) => v >= 0.8 * peak) - 20;
    const fall = m.open.findIndex((v, t) => t > 40 && v <= 0.2 * peak) - 40;
    assert.ok(rise <= 3, `rise ${rise} frames`);
    assert.ok(fall > rise, `fall ${fall} frames, rise ${rise}`);
    // No jumps: consecutive frames differ by less than the whole range.
    for (let t = 1; t < m.open.length; t++) assert.ok(Math.abs(m.open[t] - m.open[t - 1]) < 0.9 * peak);
  });

  it('scales expressiveness with temperature', () => {
    const f = features(bursts(-18));
    const sum = (a: Float32Array) => a.reduce((x, y) => x + y, 0);
    const calm = sum(mouthFromAudio(f, { temperature: 0 }).open);
    const normal = sum(mouthFromAudio(f, { temperature: 0.5 }).open);
    const lively = sum(mouthFromAudio(f, { temperature: 1 }).open);
    assert.ok(calm < normal && normal < lively, `${calm} < ${normal} < ${lively}`);
  });

  it('narrows the opening for fricatives', () => {
    const vowel = features(new Array(40).fill(-18).map((d, i) => (i < 5 || i > 35 ? -90 : d)));
    const fric: AudioFeatures = {
      ...vowel,
      high: Float32Array.from(vowel.db, (d) => d - 1),
      low: Float32Array.from(vowel.db, (d) => d - 15),
    };
    const a = mouthFromAudio(vowel).open[20];
    const b = mouthFromAudio(fric).open[20];
    assert.ok(b < a, `fricative ${b} vs vowel ${a}`);
  });
});

describe('attackRelease', () => {
  it('rises fast and falls slowly', () => {
    const x = Float32Array.from([0, 1, 1, 1, 0, 0, 0]);
    const y = attackRelease(x, 25, 30, 120);
    assert.ok(y[1] > 0.6);
    assert.ok(y[5] > 0.3, `still open ${y[5]}`);
    assert.ok(y[6] < y[5]);
  });
});

/** A mono 16-bit WAV of the given samples. */
function wav16(samples: Float32Array, rate: number, channels = 1): Buffer {
  const data = Buffer.alloc(samples.length * 2 * channels);
  for (let i = 0; i < samples.length; i++) {
    const v = Math.max(-1, Math.min(1, samples[i]));
    for (let c = 0; c < channels; c++) data.writeInt16LE(Math.round(v * 32767), (i * channels + c) * 2);
  }
  const h = Buffer.alloc(44);
  h.write('RIFF', 0);
  h.writeUInt32LE(36 + data.length, 4);
  h.write('WAVE', 8);
  h.write('fmt ', 12);
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(channels, 22);
  h.writeUInt32LE(rate, 24);
  h.writeUInt32LE(rate * 2 * channels, 28);
  h.writeUInt16LE(2 * channels, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36);
  h.writeUInt32LE(data.length, 40);
  return Buffer.concat([h, data]);
}

describe('stop closures', () => {
  /** 10 ms hops from [dB, milliseconds] pieces. */
  const hops = (...pieces: [number, number][]) => {
    const out: number[] = [];
    for (const [db, ms] of pieces) for (let k = 0; k < ms / 10; k++) out.push(db);
    return Float32Array.from(out);
  };
  const frames = (h: Float32Array) => Math.floor(h.length / 4); // 40 ms frames at 25 fps

  it('shuts the lips for a short near-silence between two sounds', () => {
    const h = hops([-20, 400], [-55, 80], [-20, 400]);
    const c = stopClosures(h, -48, FPS, frames(h));
    // The gap is 400-480 ms: frames 10 and 11 (400-440, 440-480 ms).
    assert.equal(c[10], 1);
    assert.equal(c[11], 1);
    assert.equal(c[5], 0);
    assert.equal(c[15], 0);
    assert.equal(Array.from(c).filter((v) => v > 0).length, 2, Array.from(c).join(','));
  });

  it('ignores shallow dips, pauses, flutters and gaps not inside speech', () => {
    const none = (h: Float32Array) => assert.ok(stopClosures(h, -48, FPS, frames(h)).every((v) => v === 0));
    none(hops([-20, 400], [-28, 80], [-20, 400])); // 8 dB dip: a softer sound, not a stop
    none(hops([-20, 400], [-55, 500], [-20, 400])); // half a second: a pause (the gate closes it)
    none(hops([-20, 400], [-55, 20], [-20, 400])); // 20 ms: a flutter of the level
    none(hops([-60, 400], [-75, 80], [-20, 400])); // before the speech starts
  });

  it('closes the mouth at the stop while the smoothed opening around it stays', () => {
    // Silence around the speech, so that the clip has a noise floor to set its gate from.
    const h = hops([-70, 400], [-20, 400], [-55, 80], [-20, 400], [-70, 400]);
    const n = frames(h);
    const db = Array.from({ length: n }, (_, t) => {
      let p = 0;
      for (let k = 4 * t; k < 4 * t + 4; k++) p += Math.pow(10, h[k] / 10);
      return 10 * Math.log10(p / 4);
    });
    const f = features(db);
    f.hopDb = h;
    const m = mouthFromAudio(f);
    assert.ok(m.open[21] < 0.3 * m.open[18], `at the stop ${m.open[21]}, before ${m.open[18]}`);
    assert.ok(m.open[23] > 0.5 * m.open[18], `after ${m.open[23]}, before ${m.open[18]}`);
  });
});

describe('analyseAudio', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'engine-audio-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('measures loudness per video frame of a stereo 48 kHz file', async () => {
    const rate = 48000;
    const s = new Float32Array(rate * 2);
    // 0-1 s silence, 1-2 s a 300 Hz tone at amplitude 0.5 (RMS -9 dBFS).
    for (let i = rate; i < 2 * rate; i++) s[i] = 0.5 * Math.sin((2 * Math.PI * 300 * i) / rate);
    const path = join(dir, 'tone.wav');
    await writeFile(path, wav16(s, rate, 2));
    const info = await readWavInfo(path);
    assert.equal(info.channels, 2);
    assert.equal(info.frames, rate * 2);
    const f = await analyseAudio(path, FPS, 50);
    assert.equal(f.db.length, 50);
    assert.ok(f.db[10] < -80, `silence ${f.db[10]}`);
    assert.ok(Math.abs(f.db[40] - -9) < 1, `tone ${f.db[40]}`);
    // A low tone: its energy is in the low band.
    assert.ok(f.low[40] > f.mid[40] + 20 && f.low[40] > f.high[40] + 20);
  });

  it('separates a fricative-like hiss (high band) from a vowel-like tone', async () => {
    const rate = 16000;
    const s = new Float32Array(rate);
    let seed = 1;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff) * 2 - 1;
    // Differentiated noise: a high-pass hiss.
    let prev = 0;
    for (let i = 0; i < rate; i++) {
      const n = rnd();
      s[i] = 0.3 * (n - prev);
      prev = n;
    }
    const path = join(dir, 'hiss.wav');
    await writeFile(path, wav16(s, rate));
    const f = await analyseAudio(path, FPS, 25);
    assert.ok(f.high[12] > f.low[12] + 6, `high ${f.high[12]} low ${f.low[12]}`);
  });
});
