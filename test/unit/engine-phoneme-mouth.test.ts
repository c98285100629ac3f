// Phonemes -> mouth shapes of the CPU engine (phoneme-mouth.ts) and the per-sound measures of the
// quality meter (phoneme-quality.ts): lips shut on p, b, m even when the audio is loud, nearly shut
// on f, v, rounded on "oo", spread on "ee", rounding anticipated over the consonants before a rounded
// vowel, the lips ahead of the sound, `sil` closed, a silent clip closed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MouthTrack } from '../../src/engines/cpu/audio-mouth.js';
import {
  closurePerFrame,
  holdPerFrame,
  mouthFromPhonemes,
  normalisePhone,
} from '../../src/engines/cpu/phoneme-mouth.js';
import {
  middleFrame,
  parsePhonemes,
  phonemeShapes,
  syncOutsideLipSounds,
} from '../../src/engines/cpu/phoneme-quality.js';
import { bestLagCorrelation } from '../../src/engines/cpu/stats.js';
import type { TimedPhoneme } from '../../src/speech/types.js';

const FPS = 25;

/** A timeline from [phone, durationMs] pairs, back to back from `startMs`. */
function timeline(parts: [string, number][], startMs = 0): TimedPhoneme[] {
  let t = startMs;
  return parts.map(([phone, d]) => {
    const p = { phone, startMs: t, endMs: t + d };
    t += d;
    return p;
  });
}

/** The frame showing the middle of the `k`-th occurrence of `phone`. */
function frameOf(tl: TimedPhoneme[], phone: string, k = 0): number {
  return middleFrame(tl.filter((p) => p.phone === phone)[k], FPS);
}

/** A loud loudness-driven track: the mouth wide open on every frame (as for a shout). */
function loudAudio(frames: number): MouthTrack {
  return {
    open: new Float32Array(frames).fill(0.6),
    width: new Float32Array(frames),
    round: new Float32Array(frames),
    speechLevelDb: -20,
    gateDb: -48,
    hasSpeech: true,
  };
}

describe('mouthFromPhonemes', () => {
  it('shuts the lips on p, b, m even when the audio is loud throughout', () => {
    const tl = timeline([
      ['sil', 200],
      ['p', 70],
      ['aa', 160],
      ['b', 60],
      ['ae', 150],
      ['m', 70],
      ['ah', 160],
      ['sil', 200],
    ]);
    const m = mouthFromPhonemes(tl, FPS, 30, loudAudio(30));
    for (const ph of ['p', 'b', 'm']) assert.equal(m.open[frameOf(tl, ph)], 0, `${ph} shut`);
    for (const ph of ['aa', 'ae', 'ah']) assert.ok(m.open[frameOf(tl, ph)] > 0.4, `${ph} open`);
    // Where the lips are free the jaw is the loudness-driven one: same loudness, same opening.
    assert.ok(Math.abs(m.open[frameOf(tl, 'aa')] - m.open[frameOf(tl, 'ah')]) < 1e-6);
    // Without audio the phonemes set the jaw: "aa" opens further than "ah".
    const alone = mouthFromPhonemes(tl, FPS, 30, null);
    assert.ok(alone.open[frameOf(tl, 'aa')] > alone.open[frameOf(tl, 'ah')]);
  });

  it('nearly closes for f and v with the corners a little spread', () => {
    const tl = timeline([
      ['sil', 200],
      ['aa', 160],
      ['f', 90],
      ['aa', 160],
      ['v', 80],
      ['aa', 160],
      ['sil', 200],
    ]);
    const m = mouthFromPhonemes(tl, FPS, 30, loudAudio(30));
    for (const ph of ['f', 'v']) {
      const i = frameOf(tl, ph);
      assert.ok(m.open[i] > 0 && m.open[i] <= 0.06, `${ph} opening ${m.open[i]}`);
      assert.ok(m.width[i] >= 0.25, `${ph} width ${m.width[i]}`);
      assert.ok(m.open[i] < m.open[frameOf(tl, 'aa')] / 5);
    }
  });

  it('rounds and narrows for "oo", spreads for "ee"', () => {
    const tl = timeline([
      ['sil', 200],
      ['t', 60],
      ['uw', 200],
      ['sil', 200],
      ['s', 80],
      ['iy', 200],
      ['sil', 200],
    ]);
    const m = mouthFromPhonemes(tl, FPS, 30, loudAudio(30));
    const oo = frameOf(tl, 'uw');
    const ee = frameOf(tl, 'iy');
    assert.ok(m.round[oo] > 0.6 && m.width[oo] < -0.6, `oo: round ${m.round[oo]}, width ${m.width[oo]}`);
    assert.ok(m.width[ee] > 0.7 && m.round[ee] < 0.1, `ee: round ${m.round[ee]}, width ${m.width[ee]}`);
  });

  it('anticipates rounding over the consonants before a rounded vowel', () => {
    // "s t r uw" against "s t r iy": the lips round already during s and t before "oo".
    const before = (vowel: string) => {
      const tl = timeline([
        ['sil', 200],
        ['s', 120],
        ['t', 80],
        ['uw' === vowel ? 'uw' : 'iy', 200],
        ['sil', 300],
      ]);
      const m = mouthFromPhonemes(tl, FPS, 30, loudAudio(30));
      return { round: m.round[frameOf(tl, 't')], width: m.width[frameOf(tl, 't')] };
    };
    const oo = before('uw');
    const ee = before('iy');
    assert.ok(oo.round > 0.4, `rounding during t before oo: ${oo.round}`);
    assert.ok(ee.round < 0.05, `no rounding during t before ee: ${ee.round}`);
    assert.ok(oo.width < ee.width - 0.8, `width at t: ${oo.width} vs ${ee.width}`);
  });

  it('moves the lips ahead of the sound', () => {
    // At 20 fps a frame is 50 ms: with the default lead the lips show in frame t what they show in
    // frame t + 1 without a lead.
    const tl = timeline([
      ['sil', 400],
      ['w', 80],
      ['uw', 200],
      ['s', 100],
      ['iy', 200],
      ['sil', 300],
    ]);
    const m = mouthFromPhonemes(tl, 20, 26, null);
    const lagging = mouthFromPhonemes(tl, 20, 26, null, { leadMs: 0 });
    let moved = 0;
    for (let t = 0; t + 1 < 26; t++) {
      assert.ok(Math.abs(m.round[t] - lagging.round[t + 1]) < 1e-6, `round at ${t}`);
      assert.ok(Math.abs(m.width[t] - lagging.width[t + 1]) < 1e-6, `width at ${t}`);
      moved += Math.abs(m.width[t] - lagging.width[t]);
    }
    assert.ok(moved > 1, `the lead changes the track (${moved})`);
  });

  it('closes in pauses and for a silent clip, opens with phonemes alone', () => {
    const tl = timeline([
      ['sil', 400],
      ['aa', 300],
      ['sil', 500],
    ]);
    const alone = mouthFromPhonemes(tl, FPS, 30, null);
    assert.equal(alone.hasSpeech, true);
    assert.ok(alone.open[frameOf(tl, 'aa')] > 0.5);
    assert.ok(alone.open[3] < 0.01 && alone.open[25] < 0.01, 'closed in the pauses');

    const silent = { ...loudAudio(30), hasSpeech: false };
    const m = mouthFromPhonemes(tl, FPS, 30, silent);
    assert.equal(m.hasSpeech, false);
    assert.ok(m.open.every((v) => v === 0) && m.round.every((v) => v === 0));

    const onlySil = mouthFromPhonemes(timeline([['sil', 1000]]), FPS, 30, loudAudio(30));
    assert.equal(onlySil.hasSpeech, false);
    assert.ok(onlySil.open.every((v) => v === 0));
  });

  it('scales the jaw with the loudness-driven opening', () => {
    const tl = timeline([
      ['sil', 200],
      ['aa', 600],
      ['sil', 200],
    ]);
    const quiet = { ...loudAudio(25), open: new Float32Array(25).fill(0.2) };
    const i = frameOf(tl, 'aa');
    const loud = mouthFromPhonemes(tl, FPS, 25, loudAudio(25)).open[i];
    const soft = mouthFromPhonemes(tl, FPS, 25, quiet).open[i];
    assert.ok(Math.abs(loud / soft - 3) < 0.05, `loud ${loud}, soft ${soft}`);
  });

  it('reads stress digits, upper case and other tools’ pause symbols', () => {
    assert.equal(normalisePhone('AA1'), 'aa');
    assert.equal(normalisePhone('pau'), 'sil');
    assert.equal(normalisePhone('SIL'), 'sil');
    const tl = timeline([
      ['pau', 200],
      ['B', 80],
      ['AA1', 200],
    ]);
    const m = mouthFromPhonemes(tl, FPS, 20, loudAudio(20));
    assert.equal(m.open[frameOf(tl, 'B')], 0);
  });
});

describe('holdPerFrame', () => {
  it('holds the frame showing the middle of a short sound and frames it covers entirely', () => {
    const tl = timeline([['p', 30]], 1010); // middle at 1025 ms: frame 25
    const hold = holdPerFrame(tl, new Set(['p']), FPS, 40, 20);
    assert.equal(hold[25], 1);
    assert.equal(hold[24], 0);
    const long = holdPerFrame(timeline([['m', 140]], 1000), new Set(['m']), FPS, 40, 20);
    // Held over [980, 1125]: frames 25, 26, 27 (1000-1120) entirely, 24 and 28 for under a half.
    assert.deepEqual([long[24], long[25], long[26], long[27], long[28]], [0, 1, 1, 1, 0]);
  });
});

describe('closurePerFrame', () => {
  it('shuts the frame showing the middle, and only the frames a closure around it covers half of', () => {
    const m = timeline([['m', 140]], 1000); // middle at 1070 ms: frame 26
    const midOnly = closurePerFrame(m, new Set(['m']), FPS, 40, 0);
    assert.deepEqual([midOnly[25], midOnly[26], midOnly[27]], [0, 1, 0]);
    // 100 ms around the middle, [1020, 1120]: frames 25 (20 of 40 ms), 26, 27 (entirely); 28 not at all.
    const long = closurePerFrame(m, new Set(['m']), FPS, 40, 100);
    assert.deepEqual([long[24], long[25], long[26], long[27], long[28]], [0, 1, 1, 1, 0]);
    // Never longer than the sound: a 30 ms p with a 100 ms closure shuts its middle frame only.
    const p = closurePerFrame(timeline([['p', 30]], 1010), new Set(['p']), FPS, 40, 100);
    assert.deepEqual([p[24], p[25], p[26]], [0, 1, 0]);
    // Other sounds, and sounds past the clip, shut nothing.
    assert.ok(closurePerFrame(m, new Set(['b']), FPS, 40, 100).every((x) => x === 0));
    assert.ok(closurePerFrame(m, new Set(['m']), FPS, 20, 100).every((x) => x === 0));
  });

  it('keeps the mouth open around a loud bilabial except at its middle', () => {
    const tl = timeline([
      ['sil', 200],
      ['aa', 160],
      ['m', 120],
      ['aa', 160],
      ['sil', 200],
    ]);
    const track = mouthFromPhonemes(tl, FPS, 24, loudAudio(24));
    const mid = frameOf(tl, 'm');
    assert.equal(track.open[mid], 0);
    assert.ok(track.open[mid - 1] > 0.3 && track.open[mid + 1] > 0.3, 'open next to the closure');
  });
});

describe('phoneme measures of the quality meter', () => {
  const tl = timeline([
    ['sil', 200],
    ['b', 80],
    ['aa', 200],
    ['m', 80],
    ['uw', 200],
    ['iy', 200],
    ['sil', 240],
  ]);
  const frames = 30;

  it('compares the opening at p/b/m with open vowels and the width at rounded with spread vowels', () => {
    // A mouth measured on a video: shut at 0.02 (the tracker's own offset), open at 0.3.
    const opening = new Array(frames).fill(0.02);
    const width = new Array(frames).fill(2.0);
    opening[frameOf(tl, 'aa')] = 0.32;
    opening[frameOf(tl, 'b')] = 0.05;
    width[frameOf(tl, 'uw')] = 1.6;
    width[frameOf(tl, 'iy')] = 2.2;
    const s = phonemeShapes({ opening, width }, tl, FPS);
    assert.equal(s.shutLevel, 0.02);
    assert.equal(s.bilabial.count, 2);
    assert.equal(s.openVowel.count, 1);
    assert.ok(Math.abs(s.openRatio - 0.015 / 0.3) < 1e-9, `open ratio ${s.openRatio}`);
    assert.ok(Math.abs(s.widthRatio - 1.6 / 2.2) < 1e-9, `width ratio ${s.widthRatio}`);
  });

  it('skips frames without a face and says NaN when a group is empty', () => {
    const opening = new Array(frames).fill(NaN);
    const s = phonemeShapes({ opening, width: opening }, tl, FPS);
    assert.equal(s.bilabial.count, 0);
    assert.ok(Number.isNaN(s.openRatio) && Number.isNaN(s.widthRatio));
  });

  it('scores the mouth of the phoneme path as a speaking person would', () => {
    const m = mouthFromPhonemes(tl, FPS, frames, loudAudio(frames));
    const s = phonemeShapes({ opening: [...m.open], width: [...m.width] }, tl, FPS);
    assert.ok(s.openRatio < 0.1, `open ratio ${s.openRatio}`);
    assert.ok(s.rounded.mean < s.spread.mean);
  });

  it('leaves the lip sounds out of the sync score outside them', () => {
    const db = Array.from({ length: frames }, (_, i) => (i % 5 === 0 ? -20 : -40 + i / 10));
    const opening = db.map((d) => (d + 60) / 100);
    // Shut at the lip sounds against the loudness: the plain correlation drops, the one outside not.
    for (const ph of ['b', 'm']) opening[frameOf(tl, ph)] = 0;
    const outside = syncOutsideLipSounds(opening, db, tl, FPS);
    const plain = bestLagCorrelation(opening, db, 3).r;
    assert.ok(plain < 0.95, `plain ${plain}`);
    assert.ok(outside.score > 0.999, `outside ${outside.score}`);
    assert.ok(outside.frames < frames);
  });

  it('parses a timeline or a bare list and refuses anything else', () => {
    const list = [{ phone: 'b', startMs: 0, endMs: 50 }];
    assert.deepEqual(parsePhonemes({ words: [], phonemes: list }), list);
    assert.deepEqual(parsePhonemes(list), list);
    assert.throws(() => parsePhonemes({ phones: [] }));
    assert.throws(() => parsePhonemes([{ phone: 'b', startMs: '0', endMs: 50 }]));
  });
});
