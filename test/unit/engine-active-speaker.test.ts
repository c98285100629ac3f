// Choosing the speaking face (chooseSpeakers) on synthetic face tracks: the mouth that follows the
// soundtrack wins over one that moves as much but out of time; a change of speaker half-way is
// followed, a short blip is not; without a soundtrack the moving mouth wins; a face absent from a
// stretch is never chosen there. Also the map from output frames to source time, and the source's
// loudness read at those times.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  changeWeights,
  chooseSpeakers,
  type ScanTrack,
  type SpeakerScanResult,
} from '../../src/engines/cpu/active-speaker.js';
import { sourceLevels } from '../../src/engines/cpu/speaker-scan.js';
import { planConform, sourceTimeAt } from '../../src/media/conform-plan.js';

const FPS = 25;

/** A deterministic speech-like loudness: syllables of varying length and level, with pauses. */
function speech(frames: number, seed: number): Float32Array {
  const out = new Float32Array(frames);
  let s = seed;
  const rand = () => (s = (s * 1103515245 + 12345) % 2147483648) / 2147483648;
  let t = 0;
  while (t < frames) {
    const len = 3 + Math.floor(rand() * 6);
    const level = rand() < 0.2 ? -60 : -35 + rand() * 20;
    for (let k = 0; k < len && t < frames; k++, t++) out[t] = level;
  }
  return out;
}

/** A mouth whose opening follows `drive` (dB) when speaking, or stays near closed. */
function mouth(drive: Float32Array, speaking: (t: number) => boolean): Float32Array {
  return Float32Array.from(drive, (d, t) =>
    speaking(t) ? Math.max(0, (d + 60) / 100) : 0.01 + 0.002 * Math.sin(t),
  );
}

function track(
  id: number,
  x: number,
  opening: Float32Array,
  present: (t: number) => boolean = () => true,
): ScanTrack {
  const n = opening.length;
  const boxes = new Float32Array(4 * n).fill(NaN);
  const open = new Float32Array(n).fill(NaN);
  let seen = 0;
  for (let t = 0; t < n; t++) {
    if (!present(t)) continue;
    boxes.set([x, 50, 100, 100], 4 * t);
    open[t] = opening[t];
    seen++;
  }
  return { id, opening: open, boxes, seen };
}

function scan(...tracks: ScanTrack[]): SpeakerScanResult {
  return { frames: tracks[0].opening.length, tracks, multiFaceFrames: tracks[0].opening.length };
}

/** Which track (by box x) was chosen per frame. */
function chosenX(boxes: ReturnType<typeof chooseSpeakers>['boxes']): (number | undefined)[] {
  return boxes.map((b) => b?.[0]);
}

describe('chooseSpeakers', () => {
  it('picks the face whose mouth follows the soundtrack, not the other talking face', () => {
    const n = 10 * FPS;
    const audio = speech(n, 1);
    const other = speech(n, 99); // someone talking to another soundtrack
    const s = scan(
      track(
        0,
        0,
        mouth(other, () => true),
      ),
      track(
        1,
        300,
        mouth(audio, () => true),
      ),
    );
    const c = chooseSpeakers(s, { fps: FPS, audioDb: audio });
    assert.equal(c.usedAudio, true);
    assert.equal(c.switches, 0);
    assert.ok(chosenX(c.boxes).every((x) => x === 300));
    // Swapping the soundtrack swaps the choice.
    const d = chooseSpeakers(s, { fps: FPS, audioDb: other });
    assert.ok(chosenX(d.boxes).every((x) => x === 0));
  });

  it('follows a change of speaker to the frame, and ignores a short blip', () => {
    const n = 12 * FPS;
    const audio = speech(n, 7);
    const half = n / 2;
    const a = track(
      0,
      0,
      mouth(audio, (t) => t < half),
    );
    const b = track(
      1,
      300,
      mouth(audio, (t) => t >= half),
    );
    const c = chooseSpeakers(scan(a, b), { fps: FPS, audioDb: audio });
    assert.equal(c.switches, 1);
    assert.equal(c.changes.length, 1);
    assert.ok(Math.abs(c.changes[0] - half) <= 4, `change at ${c.changes[0]}`);
    const x = chosenX(c.boxes);
    // The change lands on the frame where the turn is (block boundaries are refined).
    const wrong = x.filter((v, t) => v !== (t < half ? 0 : 300)).length;
    assert.ok(wrong <= 4, `${wrong} frames on the wrong face`);

    // B speaks for 0.2 s only in the middle of A's turn: no switch.
    const blip = (t: number) => t >= 3 * FPS && t < 3 * FPS + 5;
    const c2 = chooseSpeakers(
      scan(
        track(
          0,
          0,
          mouth(audio, (t) => !blip(t)),
        ),
        track(1, 300, mouth(audio, blip)),
      ),
      { fps: FPS, audioDb: audio },
    );
    assert.equal(c2.switches, 0);
    assert.ok(chosenX(c2.boxes).every((v) => v === 0));
  });

  it('without a soundtrack picks the face whose mouth moves', () => {
    const n = 6 * FPS;
    const moving = speech(n, 3);
    const c = chooseSpeakers(
      scan(
        track(
          0,
          0,
          mouth(moving, () => false),
        ),
        track(
          1,
          300,
          mouth(moving, () => true),
        ),
      ),
      {
        fps: FPS,
        audioDb: null,
      },
    );
    assert.equal(c.usedAudio, false);
    assert.ok(chosenX(c.boxes).every((x) => x === 300));
    // A silent soundtrack (no level changes) counts as none.
    const flat = new Float32Array(n).fill(-90);
    assert.equal(chooseSpeakers(scan(track(0, 0, moving)), { fps: FPS, audioDb: flat }).usedAudio, false);
  });

  it('with nothing to tell them apart (a still picture) picks the largest face', () => {
    const n = 4 * FPS;
    const still = new Float32Array(n).fill(0.02);
    const small = track(0, 0, still);
    const large = track(1, 300, still);
    for (let t = 0; t < n; t++) large.boxes.set([300, 50, 160, 160], 4 * t);
    const c = chooseSpeakers(scan(small, large), { fps: FPS, audioDb: null });
    assert.ok(chosenX(c.boxes).every((x) => x === 300));
    // The other way round too: it is the size, not the order.
    for (let t = 0; t < n; t++) large.boxes.set([300, 50, 60, 60], 4 * t);
    const d = chooseSpeakers(scan(small, large), { fps: FPS, audioDb: null });
    assert.ok(chosenX(d.boxes).every((x) => x === 0));
  });

  it('never chooses a face where it is absent; frames with no face get no choice', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1000 }), fc.integer({ min: 20, max: 200 }), (seed, gapStart) => {
        const n = 8 * FPS;
        const audio = speech(n, seed + 1);
        const gap = (t: number) => t >= gapStart && t < gapStart + FPS;
        const speaker = track(
          0,
          0,
          mouth(audio, () => true),
          (t) => !gap(t),
        );
        const c = chooseSpeakers(
          scan(
            speaker,
            track(
              1,
              300,
              mouth(speech(n, seed + 2), () => true),
            ),
          ),
          {
            fps: FPS,
            audioDb: audio,
          },
        );
        c.boxes.forEach((b, t) => {
          if (b && b[0] === 0) {
            // The speaker's box is only used near frames where it was seen (held up to half a second).
            assert.ok(!gap(t) || t - gapStart < 15 || gapStart + FPS - t <= 15);
          }
        });
        const none = chooseSpeakers(scan(track(0, 0, audio, () => false)), { fps: FPS, audioDb: audio });
        assert.ok(none.boxes.every((b) => b === undefined));
      }),
      { numRuns: 25 },
    );
  });
});

describe('changeWeights', () => {
  it('fades the old face out and the new one in around each change of speaker', () => {
    assert.equal(changeWeights([], 20), null);
    const w = changeWeights([10], 20) as Float32Array;
    assert.deepEqual(Array.from(w.subarray(4, 16)), [1, 1, 0.75, 0.5, 0.25, 0, 0, 0.25, 0.5, 0.75, 1, 1]);
    // Changes close together and at the ends of the video stay within 0..1.
    const v = changeWeights([1, 3, 19], 20) as Float32Array;
    assert.ok(Array.from(v).every((x) => x >= 0 && x <= 1));
    assert.equal(v[0], 0);
    assert.equal(v[19], 0);
  });
});

describe('source time of output frames', () => {
  const base = { audioDurationSeconds: 10, fps: 25 };
  const video = {
    kind: 'video' as const,
    durationSeconds: 4,
    fps: 25,
    width: 320,
    height: 240,
    rotation: 0,
    hasAudio: true,
  };

  it('runs forward for cut_off and holds nothing past the source', () => {
    const plan = planConform({ ...base, audioDurationSeconds: 3, syncMode: 'cut_off', visual: video });
    assert.equal(sourceTimeAt(plan, 0), 0);
    assert.equal(sourceTimeAt(plan, 50), 2);
    const longer = planConform({ ...base, audioDurationSeconds: 6, syncMode: 'silence', visual: video });
    assert.equal(sourceTimeAt(longer, 99), 99 / 25);
    assert.equal(sourceTimeAt(longer, 120), null);
  });

  it('wraps for loop, turns back for bounce, stretches for remap, none for a still', () => {
    const loop = planConform({ ...base, syncMode: 'loop', visual: video });
    assert.equal(sourceTimeAt(loop, 100), 0);
    assert.equal(sourceTimeAt(loop, 125), 1);
    const bounce = planConform({ ...base, syncMode: 'bounce', visual: video });
    // 100 frames forward (0..99), then 98..1, then 0.. again.
    assert.equal(sourceTimeAt(bounce, 99), 99 / 25);
    assert.equal(sourceTimeAt(bounce, 100), 98 / 25);
    assert.equal(sourceTimeAt(bounce, 198), 0);
    assert.equal(sourceTimeAt(bounce, 199), 1 / 25);
    const remap = planConform({ ...base, audioDurationSeconds: 8, syncMode: 'remap', visual: video });
    assert.ok(Math.abs((sourceTimeAt(remap, 100) as number) - 2) < 1e-9);
    const still = planConform({ ...base, visual: { kind: 'image', width: 320, height: 240 } });
    assert.equal(sourceTimeAt(still, 10), null);
  });

  it('reads the source loudness at those times', () => {
    // 10 ms hops: -20 dB for the first second, -60 dB after.
    const hops = Float32Array.from({ length: 400 }, (_, h) => (h < 100 ? -20 : -60));
    const levels = sourceLevels(hops, 100, 25, (t) => (t < 90 ? (t % 50) / 25 : null));
    assert.ok(Math.abs(levels[0] - -20) < 1e-3);
    assert.ok(Math.abs(levels[30] - -60) < 1e-3);
    assert.ok(Math.abs(levels[50] - -20) < 1e-3); // wrapped back to 0 s
    assert.ok(Number.isNaN(levels[95]));
  });
});
