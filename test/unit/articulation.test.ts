// The pure parts of articulation from recordings: word confidence (inside speech, plausible phone
// durations, posterior), report spans (sources merged, uncovered speech acoustic), the engine's span
// masks and blend (phoneme shapes only inside trusted spans, closed outside speech however loud),
// the viseme model's lips on the acoustic track, timelines in output time, and the request's
// `transcript` rules.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { AppError } from '../../src/domain/errors.js';
import { normaliseGenerationRequest } from '../../src/domain/generation-request.js';
import { planMouth, spanMask, visemeClosures, withVisemes } from '../../src/engines/cpu/articulated-mouth.js';
import type { AudioFeatures } from '../../src/engines/cpu/audio-features.js';
import type { MouthTrack } from '../../src/engines/cpu/audio-mouth.js';
import type { ConformPlan } from '../../src/media/conform-plan.js';
import { inOutputTime } from '../../src/pipeline/timeline.js';
import {
  MIN_CONFIDENCE,
  coverage,
  durationScore,
  mergeSpans,
  wordConfidence,
} from '../../src/speech/articulation.js';
import {
  VISEME_CLASSES,
  VISEME_CLOSED_CLASS,
  visemeConfidence,
  type VisemeResult,
  type VisemeTrack,
} from '../../src/speech/viseme-model.js';

describe('word confidence', () => {
  const speech = [{ startMs: 1000, endMs: 3000 }];
  test('coverage of a span by segments', () => {
    assert.equal(coverage(speech, 1000, 2000), 1);
    assert.equal(coverage(speech, 500, 1500), 0.5);
    assert.equal(coverage(speech, 3000, 3500), 0);
    assert.equal(coverage(null, 0, 10), 1, 'no detector: everything counts as speech');
  });
  test('phone durations: plausible 1, squeezed or stretched less', () => {
    assert.equal(durationScore(300, 3), 1);
    assert.ok(durationScore(30, 3) < 0.5, 'three phones in 30 ms are squeezed');
    assert.ok(durationScore(3000, 2) < 0.25, 'two phones over 3 s are stretched');
    assert.equal(durationScore(100, 0), 0);
  });
  test('a word forced into a pause, or unsure to the recognizer, falls under the threshold', () => {
    assert.ok(wordConfidence({ startMs: 1200, endMs: 1500 }, 3, speech) >= MIN_CONFIDENCE);
    assert.ok(wordConfidence({ startMs: 200, endMs: 500 }, 3, speech) < MIN_CONFIDENCE);
    assert.ok(wordConfidence({ startMs: 1200, endMs: 1500 }, 3, speech, 0.2) < MIN_CONFIDENCE);
    // A short word at the very start of a segment is not punished for the aligner's lead-in.
    assert.ok(wordConfidence({ startMs: 990, endMs: 1050 }, 1, speech) >= MIN_CONFIDENCE);
  });
});

describe('report spans', () => {
  const word = (startMs: number, endMs: number, confidence: number) => ({
    startMs,
    endMs,
    source: 'alignment' as const,
    confidence,
    phones: [],
  });
  test('confident neighbours merge; unsure words and uncovered speech are acoustic', () => {
    const spans = mergeSpans(
      [word(1000, 1300, 0.9), word(1350, 1600, 0.8), word(1700, 2000, 0.2)],
      [{ startMs: 950, endMs: 2600 }],
      3000,
    );
    assert.deepEqual(
      spans.map((s) => [s.source, s.startMs, s.endMs]),
      [
        ['alignment', 1000, 1600],
        ['acoustic', 1600, 2600],
      ],
    );
    assert.ok(Math.abs(spans[0].confidence - 0.85) < 0.02, String(spans[0].confidence));
  });
  test('no words at all: the speech is acoustic', () => {
    const spans = mergeSpans([], [{ startMs: 0, endMs: 1000 }], 1000);
    assert.deepEqual(
      spans.map((s) => s.source),
      ['acoustic'],
    );
  });
});

function features(frames: number, fps: number, loud: (t: number) => boolean): AudioFeatures {
  const hops = Math.ceil((frames / fps) * 100);
  const db = new Float32Array(frames).map((_, t) => (loud(t) ? -20 : -70));
  const hopDb = new Float32Array(hops).map((_, i) => (loud(Math.floor((i / 100) * fps)) ? -20 : -70));
  const zero = () => new Float32Array(frames).fill(-40);
  return {
    fps,
    frames,
    db,
    low: zero(),
    mid: zero(),
    high: zero(),
    centroid: new Float32Array(frames),
    hopDb,
  };
}

describe('the engine mouth plan', () => {
  test('spanMask: 1 inside, ramps outside, 0 far away', () => {
    const m = spanMask([{ startMs: 1000, endMs: 2000 }], 25, 100, { leadMs: 0, lagMs: 0, rampMs: 80 });
    assert.equal(m[37], 1);
    assert.equal(m[10], 0);
    assert.ok(m[24] > 0 && m[24] < 1, String(m[24]));
  });

  test('outside detected speech the mouth is closed, even where the background is as loud as speech', () => {
    // Loud almost everywhere (music), speech only from 1 s to 2 s.
    const f = features(75, 25, (t) => t > 2);
    const plan = planMouth({
      audio: f,
      fps: 25,
      frames: 75,
      temperature: 0.5,
      speech: [{ startMs: 1000, endMs: 2000 }],
    });
    for (let t = 0; t < 20; t++) assert.equal(plan.track.open[t], 0, `frame ${t}`);
    for (let t = 55; t < 75; t++) assert.equal(plan.track.open[t], 0, `frame ${t}`);
    assert.equal(plan.usesPhonemes, false);
  });

  test('phoneme shapes only inside trusted spans: a p shut there, the acoustic track elsewhere', () => {
    const f = features(100, 25, (t) => t >= 10 && t < 90);
    const phonemes = [
      { phone: 'aa', startMs: 400, endMs: 700 },
      { phone: 'p', startMs: 700, endMs: 800 },
      { phone: 'aa', startMs: 800, endMs: 1200 },
      // The same sounds later, in a span nobody trusts.
      { phone: 'aa', startMs: 2400, endMs: 2700 },
      { phone: 'p', startMs: 2700, endMs: 2800 },
      { phone: 'aa', startMs: 2800, endMs: 3200 },
    ];
    const trusted = planMouth({
      audio: f,
      fps: 25,
      frames: 100,
      temperature: 0.5,
      phonemes,
      phonemeSpans: [{ startMs: 400, endMs: 1200 }],
    });
    assert.equal(trusted.usesPhonemes, true);
    assert.equal(trusted.track.open[Math.floor(750 / 40)], 0, 'lips shut at the trusted p');
    assert.ok(trusted.track.open[Math.floor(2750 / 40)] > 0, 'the untrusted p keeps the acoustic opening');
    assert.ok(trusted.phonemeShare! > 0 && trusted.phonemeShare! < 1, String(trusted.phonemeShare));
  });

  test('aligned phone times hold the closure over both frames around the middle', () => {
    const f = features(50, 25, (t) => t > 2 && t < 47);
    const phonemes = [
      // The middle (760 ms) on a frame boundary: +-20 ms shuts both frames.
      { phone: 'aa', startMs: 0, endMs: 710 },
      { phone: 'm', startMs: 710, endMs: 810 },
      { phone: 'aa', startMs: 810, endMs: 2000 },
    ];
    const shut = (aligned: boolean) => {
      const p = planMouth({
        audio: f,
        fps: 25,
        frames: 50,
        temperature: 0.5,
        phonemes,
        phonemesAligned: aligned,
      });
      return Array.from(p.track.open).filter((o) => o === 0).length;
    };
    assert.ok(shut(true) > shut(false), `${shut(true)} shut frames aligned vs ${shut(false)} exact`);
  });

  test('an aligned m 15 ms early still shuts the frame that shows the true middle', () => {
    // Truth 1045-1115 ms (middle 1080: frame 27 at 25 fps); aligned 1030-1110 (middle 1070, frame 26).
    const f = features(50, 25, (t) => t > 2 && t < 47);
    const p = planMouth({
      audio: f,
      fps: 25,
      frames: 50,
      temperature: 0.5,
      phonemes: [
        { phone: 'aa', startMs: 0, endMs: 1030 },
        { phone: 'm', startMs: 1030, endMs: 1110 },
        { phone: 'aa', startMs: 1110, endMs: 2000 },
      ],
      phonemesAligned: true,
    });
    assert.equal(p.track.open[26], 0, 'the aligned middle');
    assert.equal(p.track.open[27], 0, 'the true middle');
    assert.ok(p.track.open[24] > 0 && p.track.open[29] > 0, 'open around the closure');
  });

  test('the viseme model shuts the lips where it hears p/b/m and gives its lip shapes', () => {
    const n = 4;
    const acoustic: MouthTrack = {
      open: Float32Array.from([0.5, 0.5, 0.5, 0]),
      width: new Float32Array(n),
      round: new Float32Array(n),
      speechLevelDb: -20,
      gateDb: -48,
      hasSpeech: true,
    };
    const model: VisemeTrack = {
      open: new Float32Array(n),
      width: Float32Array.from([0.5, -0.8, 0, -0.8]),
      round: Float32Array.from([0, 0.9, 0, 0.9]),
      closed: Float32Array.from([0, 0.1, 0.9, 0]),
      confidence: new Float32Array(n).fill(0.8),
    };
    const t = withVisemes(acoustic, model, 0.5);
    assert.equal(t.open[2], 0, 'shut');
    assert.equal(t.open[0], 0.5);
    assert.ok(t.width[0] > 0 && t.width[1] < 0 && t.round[1] > 0.5);
    assert.equal(t.round[3], 0, 'no lip shape where the mouth is closed anyway');
  });
});

describe('closures heard by the viseme model', () => {
  /** 10 ms rows whose lips-shut probability is `shut(row)`, the rest on the rest class. */
  const rows = (n: number, shut: (r: number) => number): VisemeResult => {
    const k = VISEME_CLASSES.length;
    const probabilities = new Float32Array(n * k);
    const rest = VISEME_CLASSES.findIndex((c) => c.name === 'Neutral');
    for (let r = 0; r < n; r++) {
      probabilities[r * k + VISEME_CLOSED_CLASS] = shut(r);
      probabilities[r * k + rest] = 1 - shut(r);
    }
    return { frameMs: 10, classes: [], probabilities, frames: n };
  };

  test('a peak that stands out is a closure held around it; a raised level everywhere is not', () => {
    const peak = visemeClosures(rows(100, (r) => (r >= 49 && r <= 51 ? 0.3 : 0.05)));
    assert.equal(peak.length, 1);
    assert.ok(peak[0].startMs < 500 && peak[0].endMs > 500 && peak[0].endMs - peak[0].startMs === 60);
    // Noise lifts the probability everywhere: a bump of 0.3 over 0.2 does not stand out.
    assert.deepEqual(visemeClosures(rows(100, (r) => (r >= 49 && r <= 51 ? 0.3 : 0.2))), []);
    assert.deepEqual(visemeClosures(rows(100, () => 0.1)), [], 'under the threshold');
  });

  test('confidence over a span is the mean top-class probability', () => {
    const r = rows(10, (i) => (i < 5 ? 0.9 : 0.3));
    assert.equal(visemeConfidence(r, 0, 50), 0.9);
    assert.equal(visemeConfidence(r, 0, 100), 0.8);
    assert.equal(visemeConfidence(r, 200, 300), 0, 'past the rows');
  });
});

describe('timelines in output time', () => {
  test('cut audio drops what is past the cut; segments move windows to their place', () => {
    const items = [
      { startMs: 0, endMs: 500 },
      { startMs: 900, endMs: 1500 },
      { startMs: 2500, endMs: 3000 },
    ];
    const cut = {
      durationSeconds: 2,
      segments: [],
      audio: { strategy: 'cut', usedSeconds: 2 },
    } as unknown as ConformPlan;
    assert.deepEqual(inOutputTime(items, cut), [
      { startMs: 0, endMs: 500 },
      { startMs: 900, endMs: 1500 },
    ]);
    const placed = {
      durationSeconds: 10,
      segments: [{ startTime: 5, endTime: 6, audioStart: 1, audioEnd: 3 }],
      audio: { strategy: 'pad', usedSeconds: 3 },
    } as unknown as ConformPlan;
    assert.deepEqual(inOutputTime(items, placed), [{ startMs: 5000, endMs: 5500 }]);
  });
});

describe('the transcript of an audio input', () => {
  const base = { model: 'lipsync-2' };
  const video = { type: 'video', url: 'https://media.example.com/face.mp4' };
  const audio = { type: 'audio', url: 'https://media.example.com/speech.wav' };
  const refused = (input: unknown[], field: string) => {
    assert.throws(
      () => normaliseGenerationRequest({ ...base, input: input as never }),
      (e: unknown) => e instanceof AppError && e.code === 'invalid_request' && e.extras.field === field,
    );
  };
  test('kept, trimmed, on the audio reference', () => {
    const r = normaliseGenerationRequest({
      ...base,
      input: [video, { ...audio, transcript: '  Hello there. ' }],
    });
    assert.equal(r.audio.transcript, 'Hello there.');
  });
  test('refused on other inputs, when not text, without words, or too long', () => {
    refused([{ ...video, transcript: 'hi' }, audio], 'input[0].transcript');
    refused([video, { ...audio, transcript: 42 }], 'input[1].transcript');
    refused([video, { ...audio, transcript: ' ... ' }], 'input[1].transcript');
    refused([video, { ...audio, transcript: 'a'.repeat(20_001) }], 'input[1].transcript');
  });
});
