// test-database: none
// Voice activity detection (Silero VAD v5 on onnxruntime-node) on the real fixtures and on speech mixed
// with street, pink and music noise: segments where the speech is, none in noise alone, the per-frame
// mask closed in pauses however loud the background; and the frame IoU against clean speech at 10 and
// 5 dB SNR plus the real-time factor, printed as diagnostics.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import {
  detectSpeech,
  detectSpeechInSamples,
  loadVadModel,
  segmentProbabilities,
  VadModelError,
  type SpeechSegment,
  type VadResult,
} from '../../src/speech/vad.js';
import {
  brownNoise,
  concatSamples,
  mixAtSnr,
  musicNoise,
  pinkNoise,
  readMono,
  roomTone,
  segmentIoU,
  whiteNoise,
} from '../helpers/noise.js';
import { SPEECH_MASK, spanMask } from '../../src/engines/cpu/articulated-mouth.js';
import { fixture } from '../helpers/paths.js';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { readWavMono } from '../../src/media/wav.js';

const run = promisify(execFile);

const SR = 16000;

/** A file's first audio stream decoded by ffmpeg itself to 16 kHz mono float. */
async function decodedByFfmpeg(path: string): Promise<Float32Array> {
  const { stdout } = await run(
    'ffmpeg',
    ['-v', 'error', '-i', path, '-map', '0:a:0', '-ac', '1', '-ar', String(SR), '-f', 'f32le', '-'],
    {
      encoding: 'buffer',
      maxBuffer: 1 << 26,
    },
  );
  return new Float32Array(stdout.buffer.slice(stdout.byteOffset, stdout.byteOffset + stdout.length));
}
const FPS = 25;
const silence = (seconds: number): Float32Array => new Float32Array(Math.round(seconds * SR));

/** Frames whose display interval lies wholly inside [fromMs, toMs). */
function framesWithin(fromMs: number, toMs: number): number[] {
  const out: number[] = [];
  for (let i = Math.ceil((fromMs * FPS) / 1000); ((i + 1) * 1000) / FPS <= toMs; i++) out.push(i);
  return out;
}

/** The gaps between (and around) segments over [0, durationMs). */
function pauses(segments: readonly SpeechSegment[], durationMs: number): SpeechSegment[] {
  const out: SpeechSegment[] = [];
  let at = 0;
  for (const s of segments) {
    if (s.startMs > at) out.push({ startMs: at, endMs: s.startMs });
    at = s.endMs;
  }
  if (durationMs > at) out.push({ startMs: at, endMs: durationMs });
  return out;
}

describe('voice activity detection: real fixtures', () => {
  it('finds the one utterance of hello.wav (~0.82-1.91 s)', async () => {
    const r = await detectSpeech(fixture('media/hello.wav'));
    assert.equal(r.frameMs, 32);
    assert.equal(r.probabilities.length, Math.ceil((r.durationMs * SR) / 1000 / 512));
    assert.equal(r.segments.length, 1, JSON.stringify(r.segments));
    const [seg] = r.segments;
    assert.ok(Math.abs(seg.startMs - 820) <= 150, `start ${seg.startMs}`);
    assert.ok(Math.abs(seg.endMs - 1910) <= 150, `end ${seg.endMs}`);
  });

  it("hears the pause in face_1.mp4's audio (~2.55-3.51 s) and speech on both sides", async () => {
    const r = await detectSpeech(fixture('media/face_1.mp4'));
    const overlaps = (a: number, b: number) => r.segments.some((s) => s.startMs < b && s.endMs > a);
    assert.ok(!overlaps(2550 + 150, 3510 - 150), JSON.stringify(r.segments));
    assert.ok(overlaps(1500, 2400), JSON.stringify(r.segments));
    assert.ok(overlaps(3700, 4500), JSON.stringify(r.segments));
    const gap = pauses(r.segments, r.durationMs).find((p) => p.startMs < 3000 && p.endMs > 3000);
    assert.ok(gap, 'a pause around 3 s');
    assert.ok(Math.abs(gap.startMs - 2550) <= 150 && Math.abs(gap.endMs - 3510) <= 150, JSON.stringify(gap));
  });

  it('finds no speech in digital silence or in noise alone', async () => {
    const n = 5 * SR;
    const inputs: Record<string, Float32Array> = {
      silence: silence(5),
      white: whiteNoise(n, 11),
      pink: pinkNoise(n, 12),
      brown: brownNoise(n, 13),
      room: roomTone(n, SR, 14),
      music: musicNoise(n, SR, 15),
    };
    for (const [name, samples] of Object.entries(inputs)) {
      const r = await detectSpeechInSamples(samples);
      assert.deepEqual(r.segments, [], `${name}: ${JSON.stringify(r.segments)}`);
      assert.ok(
        spanMask(r.segments, FPS, 125, SPEECH_MASK).every((v) => v === 0),
        name,
      );
    }
  });

  it('an empty input gives an empty result', async () => {
    const r = await detectSpeechInSamples(new Float32Array(0));
    assert.equal(r.probabilities.length, 0);
    assert.deepEqual(r.segments, []);
  });
});

describe('voice activity detection in background noise', () => {
  /** speech_short.wav and hello.wav with pauses of 0.8, 1.2 (+0.8 of hello's own) and 0.6 s around them. */
  let speech: Float32Array;
  let clean: VadResult;
  const noises: Record<string, (n: number) => Float32Array> = {
    pink: (n) => pinkNoise(n, 1),
    brown: (n) => brownNoise(n, 2),
    music: (n) => musicNoise(n, SR, 3),
  };

  before(async () => {
    const short = await readMono(fixture('media/speech_short.wav'));
    const hello = await readMono(fixture('media/hello.wav'));
    speech = concatSamples([silence(0.8), short, silence(1.2), hello, silence(0.6)]);
    clean = await detectSpeechInSamples(speech);
    assert.equal(clean.segments.length, 2, JSON.stringify(clean.segments));
  });

  for (const name of Object.keys(noises)) {
    it(`${name} noise at 10 dB SNR: segments match clean speech, the mask is shut in pauses`, async (t) => {
      const mix = mixAtSnr(speech, noises[name](speech.length), 10);
      const r = await detectSpeechInSamples(mix);
      const iou = segmentIoU(clean.segments, r.segments, clean.durationMs);
      t.diagnostic(`${name} 10 dB: frame IoU ${iou.toFixed(3)} ${JSON.stringify(r.segments)}`);
      // Measured 0.985-0.993.
      assert.ok(iou >= 0.95, `IoU ${iou.toFixed(3)}`);
      assert.equal(r.segments.length, clean.segments.length, JSON.stringify(r.segments));

      const frames = Math.ceil((clean.durationMs * FPS) / 1000);
      // The mask the engine closes the mouth with.
      const mask = spanMask(r.segments, FPS, frames, SPEECH_MASK);
      for (const p of pauses(clean.segments, clean.durationMs)) {
        // Leave room for the lead/lag of the mask and the noise's effect on the boundaries.
        for (const i of framesWithin(p.startMs + 300, p.endMs - 300)) {
          assert.equal(mask[i], 0, `mask ${mask[i]} at frame ${i} in pause ${JSON.stringify(p)}`);
          const k = Math.floor((i * 1000) / FPS / r.frameMs);
          assert.ok(r.probabilities[k] < 0.2, `probability ${r.probabilities[k]} at frame ${i} in pause`);
        }
      }
      for (const s of clean.segments) {
        for (const i of framesWithin(s.startMs, s.endMs)) assert.equal(mask[i], 1, `frame ${i}`);
      }
    });
  }

  it('measures frame IoU at 10 and 5 dB and the real-time factor (printed, not asserted)', async (t) => {
    for (const [name, make] of Object.entries(noises)) {
      for (const snr of [10, 5]) {
        const r = await detectSpeechInSamples(mixAtSnr(speech, make(speech.length), snr));
        const iou = segmentIoU(clean.segments, r.segments, clean.durationMs);
        t.diagnostic(`IoU ${name} ${snr} dB: ${iou.toFixed(3)}`);
      }
    }
    const long = concatSamples(
      Array.from({ length: 5 }, (_, i) => mixAtSnr(speech, pinkNoise(speech.length, i), 10)),
    );
    const t0 = performance.now();
    const r = await detectSpeechInSamples(long);
    const ms = performance.now() - t0;
    t.diagnostic(`RTF ${(ms / r.durationMs).toFixed(4)} over ${(r.durationMs / 1000).toFixed(1)} s`);
  });
});

describe('voice activity detection: options, mask and errors', () => {
  it('stops on abort', async () => {
    const ac = new AbortController();
    ac.abort();
    await assert.rejects(detectSpeechInSamples(new Float32Array(10 * SR), { signal: ac.signal }), {
      name: 'AbortError',
    });
    const later = new AbortController();
    const run = detectSpeechInSamples(pinkNoise(60 * SR, 3), { signal: later.signal });
    setTimeout(() => later.abort(), 5);
    await assert.rejects(run, { name: 'AbortError' });
    await assert.rejects(detectSpeech(fixture('media/hello.wav'), { signal: ac.signal }), {
      name: 'AbortError',
    });
  });

  it("reads a WAV file at 16 kHz itself and finds the segments of ffmpeg's decode; other files go through ffmpeg", async () => {
    // radio_speech.wav is 16 kHz stereo: the samples are this process's own mix, not ffmpeg's.
    const wav = fixture('media/radio_speech.wav');
    const read = await readMono(wav, SR);
    const own: Float32Array[] = [];
    for await (const b of readWavMono(wav)) own.push(b);
    assert.deepEqual(read, concatSamples(own));
    const decoded = await decodedByFfmpeg(wav);
    assert.equal(read.length, decoded.length);
    assert.deepEqual((await detectSpeech(wav)).segments, (await detectSpeechInSamples(decoded)).segments);
    // A WAV at another rate (audio_2.wav, 48 kHz) is resampled by ffmpeg.
    const other = fixture('media/audio_2.wav');
    assert.deepEqual(await readMono(other, SR), await decodedByFfmpeg(other));
    // A video's soundtrack still comes through ffmpeg (the same samples as ffmpeg's own decode).
    const video = fixture('media/face_1.mp4');
    const viaMono = await readMono(video, SR);
    assert.deepEqual(viaMono, await decodedByFfmpeg(video));
  });

  it('a missing or broken model fails with VadModelError', async () => {
    await assert.rejects(loadVadModel('/nonexistent/silero_vad.onnx'), VadModelError);
    await assert.rejects(loadVadModel(fixture('media/hello.wav')), VadModelError);
  });

  it('segments by hysteresis: short dips stay speech, short bursts are dropped, padding', () => {
    // 32 ms windows: speech 10..29, dip of 3 windows (96 ms < 150 ms), speech 33..49, burst of 4 at 70.
    const p = new Float32Array(100).fill(0.05);
    p.fill(0.9, 10, 30);
    p.fill(0.9, 33, 50);
    p.fill(0.9, 70, 74);
    // A value between the two thresholds neither starts nor ends speech.
    p[60] = 0.4;
    const dur = 100 * 32;
    assert.deepEqual(segmentProbabilities(p, dur), [{ startMs: 320 - 30, endMs: 50 * 32 + 30 }]);
    assert.deepEqual(segmentProbabilities(p, dur, { minSilenceMs: 50, speechPadMs: 0 }), [
      { startMs: 320, endMs: 960 },
      { startMs: 33 * 32, endMs: 50 * 32 },
    ]);
    // Segments closer than two pads share the gap.
    assert.deepEqual(segmentProbabilities(p, dur, { minSilenceMs: 50, speechPadMs: 100 }), [
      { startMs: 220, endMs: 1008 },
      { startMs: 1008, endMs: 1700 },
    ]);
    assert.deepEqual(segmentProbabilities(p, dur, { minSpeechMs: 100, speechPadMs: 0 }).at(-1), {
      startMs: 70 * 32,
      endMs: 74 * 32,
    });
    // Speech running to the end closes at the end of the audio.
    const open = new Float32Array(20).fill(0.9);
    assert.deepEqual(segmentProbabilities(open, 640), [{ startMs: 0, endMs: 640 }]);
  });
});
