import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  chooseFps,
  chooseSize,
  ConformPlanError,
  planConform,
  SYNC_MODES,
  type ConformPlanInput,
  type SyncMode,
} from '../../src/media/conform-plan.js';

const video = (
  durationSeconds: number,
  extra: Partial<{ fps: number; width: number; height: number; rotation: number; hasAudio: boolean }> = {},
) => ({
  kind: 'video' as const,
  durationSeconds,
  fps: 25,
  width: 640,
  height: 360,
  hasAudio: true,
  ...extra,
});

function plan(
  mode: SyncMode,
  videoSeconds: number,
  audioSeconds: number,
  extra: Partial<ConformPlanInput> = {},
) {
  return planConform({
    visual: video(videoSeconds),
    audioDurationSeconds: audioSeconds,
    syncMode: mode,
    ...extra,
  });
}

function rejects(fn: () => unknown, field: RegExp) {
  assert.throws(fn, (e: unknown) => e instanceof ConformPlanError && field.test(e.field));
}

describe('conform plan: sync modes', () => {
  // [mode, audio longer: duration, video, audio strategy], [video longer: duration, video, audio]
  const table: Record<SyncMode, [[number, string, string], [number, string, string]]> = {
    bounce: [
      [10, 'bounce', 'exact'],
      [4, 'trim', 'exact'],
    ],
    loop: [
      [10, 'loop', 'exact'],
      [4, 'trim', 'exact'],
    ],
    cut_off: [
      [6, 'trim', 'cut'],
      [4, 'trim', 'exact'],
    ],
    silence: [
      [6, 'trim', 'cut'],
      [6, 'trim', 'pad'],
    ],
    remap: [
      [10, 'stretch', 'exact'],
      [4, 'stretch', 'exact'],
    ],
  };
  for (const mode of SYNC_MODES) {
    it(`${mode}: audio longer than video`, () => {
      const p = plan(mode, 6, 10);
      const [duration, v, a] = table[mode][0];
      assert.equal(p.durationSeconds, duration);
      assert.equal(p.video.strategy, v);
      assert.equal(p.audio.strategy, a);
      assert.equal(p.frameCount, duration * 25);
      assert.deepEqual(p.segments, []);
      assert.equal(p.outsideSegments, null);
    });
    it(`${mode}: video longer than audio`, () => {
      const p = plan(mode, 6, 4);
      const [duration, v, a] = table[mode][1];
      assert.equal(p.durationSeconds, duration);
      assert.equal(p.video.strategy, v);
      assert.equal(p.audio.strategy, a);
      if (a === 'pad') assert.equal(p.audio.padSeconds, 2);
    });
  }

  it('defaults to cut_off', () => {
    const p = planConform({ visual: video(6), audioDurationSeconds: 10 });
    assert.equal(p.syncMode, 'cut_off');
    assert.equal(p.durationSeconds, 6);
  });

  it('remap stretches the video by audio/video', () => {
    assert.equal(plan('remap', 4, 10).video.stretchFactor, 2.5);
    assert.equal(plan('remap', 10, 4).video.stretchFactor, 0.4);
    assert.equal(plan('remap', 5, 5).video.strategy, 'trim');
  });

  it('treats a difference under half a frame as equal', () => {
    const p = plan('loop', 5, 5.01);
    assert.equal(p.video.strategy, 'trim');
    assert.equal(p.audio.strategy, 'exact');
  });

  it('output length follows the table for any durations', () => {
    const d = fc.double({ min: 0.1, max: 3600, noNaN: true });
    fc.assert(
      fc.property(fc.constantFrom(...SYNC_MODES), d, d, (mode, v, a) => {
        const p = plan(mode, v, a);
        const expected = mode === 'cut_off' ? Math.min(a, v) : mode === 'silence' ? v : a;
        assert.equal(p.durationSeconds, expected);
        assert.equal(p.frameCount, Math.max(1, Math.round(expected * 25)));
        assert.ok(p.width % 2 === 0 && p.height % 2 === 0);
      }),
    );
  });

  it('a still image lasts as long as the audio and refuses segments', () => {
    const p = planConform({
      visual: { kind: 'image', width: 513, height: 511 },
      audioDurationSeconds: 3.3,
      syncMode: 'cut_off',
    });
    assert.equal(p.durationSeconds, 3.3);
    assert.equal(p.video.strategy, 'still');
    assert.deepEqual([p.width, p.height, p.fps], [512, 510, 25]);
    rejects(
      () =>
        planConform({
          visual: { kind: 'image', width: 64, height: 64 },
          audioDurationSeconds: 3,
          segments: [{ startTime: 0, endTime: 1 }],
        }),
      /^segments$/,
    );
  });

  it('refuses zero or missing durations', () => {
    rejects(() => plan('loop', 0, 3), /video duration/);
    rejects(() => plan('loop', 3, Number.NaN), /audio duration/);
    rejects(
      () => planConform({ visual: video(3), audioDurationSeconds: 3, syncMode: 'wobble' as SyncMode }),
      /sync_mode/,
    );
  });
});

describe('conform plan: frame rate and size', () => {
  it('snaps source rates to standard ones and rounds the rest', () => {
    assert.deepEqual(chooseFps(null, 29.97), [30000 / 1001, '30000/1001']);
    assert.deepEqual(chooseFps(null, 23.976), [24000 / 1001, '24000/1001']);
    assert.deepEqual(chooseFps(null, 25.01), [25, '25']);
    assert.deepEqual(chooseFps(null, 22.131), [22, '22']);
    assert.deepEqual(chooseFps(null, 119.88), [60, '60']);
    assert.deepEqual(chooseFps(null, null), [25, '25']);
    assert.deepEqual(chooseFps(15, 30), [15, '15']);
    assert.deepEqual(chooseFps(12.5, 30), [12.5, '12500/1000']);
    assert.deepEqual(chooseFps(29.97, null), [30000 / 1001, '30000/1001']);
    assert.throws(() => chooseFps(0, 25), ConformPlanError);
    assert.throws(() => chooseFps(240, 25), ConformPlanError);
  });

  it('uses the source size, rotated, divided by speedup, even', () => {
    assert.deepEqual(chooseSize(video(1, { width: 701, height: 555 }), null, 1), {
      width: 700,
      height: 554,
      fit: 'stretch',
    });
    assert.deepEqual(chooseSize(video(1, { width: 1920, height: 1080, rotation: -90 }), null, 1), {
      width: 1080,
      height: 1920,
      fit: 'stretch',
    });
    assert.deepEqual(chooseSize(video(1, { width: 1080, height: 1920 }), null, 2), {
      width: 540,
      height: 960,
      fit: 'stretch',
    });
    assert.deepEqual(chooseSize(video(1, { width: 700, height: 700 }), null, 3), {
      width: 232,
      height: 232,
      fit: 'stretch',
    });
    assert.throws(() => chooseSize(video(1), null, 5), ConformPlanError);
  });

  it('honours output_resolution, letterboxing another aspect ratio', () => {
    assert.deepEqual(chooseSize(video(1, { width: 640, height: 360 }), [1280, 720], 1), {
      width: 1280,
      height: 720,
      fit: 'stretch',
    });
    assert.deepEqual(chooseSize(video(1, { width: 640, height: 360 }), [500, 500], 2), {
      width: 250,
      height: 250,
      fit: 'letterbox',
    });
    rejects(() => chooseSize(video(1), [10, 500], 1), /output_resolution/);
  });
});

describe('conform plan: segments', () => {
  const seg = (
    segments: ConformPlanInput['segments'],
    videoSeconds = 10,
    audioSeconds = 8,
    hasAudio = true,
  ) =>
    planConform({
      visual: video(videoSeconds, { hasAudio }),
      audioDurationSeconds: audioSeconds,
      syncMode: 'loop',
      segments,
    });

  it('keeps the video length, sorts segments and defaults the audio window to 0..length', () => {
    const p = seg([
      { startTime: 6, endTime: 8 },
      { startTime: 1, endTime: 2.5, audioStart: 3 },
    ]);
    assert.equal(p.durationSeconds, 10);
    assert.equal(p.video.strategy, 'trim');
    assert.equal(p.audio.strategy, 'segments');
    assert.equal(p.outsideSegments, 'original_audio');
    assert.deepEqual(p.segments, [
      { startTime: 1, endTime: 2.5, audioStart: 3, audioEnd: 4.5, padSeconds: 0 },
      { startTime: 6, endTime: 8, audioStart: 0, audioEnd: 2, padSeconds: 0 },
    ]);
  });

  it('pads a short audio window with silence and cuts a long one', () => {
    const [a, b] = seg([
      { startTime: 0, endTime: 4, audioStart: 6 },
      { startTime: 5, endTime: 6, audioStart: 1, audioEnd: 5 },
    ]).segments;
    assert.deepEqual(a, { startTime: 0, endTime: 4, audioStart: 6, audioEnd: 8, padSeconds: 2 });
    assert.deepEqual(b, { startTime: 5, endTime: 6, audioStart: 1, audioEnd: 2, padSeconds: 0 });
  });

  it('gives silence outside segments when the video has no audio', () => {
    assert.equal(seg([{ startTime: 0, endTime: 1 }], 10, 8, false).outsideSegments, 'silence');
  });

  it('accepts touching segments and clamps an end within a frame of the video end', () => {
    const p = seg([
      { startTime: 0, endTime: 5 },
      { startTime: 5, endTime: 10.03 },
    ]);
    assert.equal(p.segments[1].endTime, 10);
  });

  it('refuses invalid segments with the field at fault', () => {
    rejects(() => seg([{ startTime: 2, endTime: 2 }]), /^segments\[0\]$/);
    rejects(() => seg([{ startTime: 3, endTime: 1 }]), /^segments\[0\]$/);
    rejects(() => seg([{ startTime: -1, endTime: 1 }]), /^segments\[0\]\.startTime$/);
    rejects(() => seg([{ startTime: 9, endTime: 11 }]), /^segments\[0\]$/);
    rejects(() => seg([{ startTime: 10, endTime: 10.01 }]), /^segments\[0\]$/);
    rejects(() => seg([{ startTime: 1, endTime: 1.01 }]), /^segments\[0\]$/); // shorter than a frame
    rejects(() => seg([{ startTime: 0, endTime: Number.POSITIVE_INFINITY }]), /endTime/);
    rejects(() => seg([{ startTime: 0, endTime: 1, audioStart: 8 }]), /audioStart/);
    rejects(() => seg([{ startTime: 0, endTime: 1, audioStart: 2, audioEnd: 2 }]), /audioEnd/);
    rejects(() => seg([{ startTime: 0, endTime: 1, audioEnd: 9 }]), /audioEnd/);
    rejects(
      () =>
        seg([
          { startTime: 4, endTime: 6 },
          { startTime: 1, endTime: 4.5 },
        ]),
      /^segments$/,
    );
    rejects(
      () =>
        seg(
          Array.from({ length: 101 }, (_, i) => ({ startTime: i * 0.05, endTime: i * 0.05 + 0.04 })),
          10,
          8,
        ),
      /^segments$/,
    );
  });

  it('never lets planned segments overlap or leave the video and audio', () => {
    const raw = fc.array(
      fc.record({
        startTime: fc.double({ min: 0, max: 12, noNaN: true }),
        length: fc.double({ min: 0, max: 4, noNaN: true }),
        audioStart: fc.option(fc.double({ min: 0, max: 9, noNaN: true }), { nil: undefined }),
      }),
      { maxLength: 6 },
    );
    fc.assert(
      fc.property(raw, (list) => {
        const segments = list.map((s) => ({
          startTime: s.startTime,
          endTime: s.startTime + s.length,
          audioStart: s.audioStart,
        }));
        let p;
        try {
          p = seg(segments);
        } catch (e) {
          assert.ok(e instanceof ConformPlanError);
          return;
        }
        let end = 0;
        for (const s of p.segments) {
          assert.ok(s.startTime >= end - 1e-9 && s.startTime < s.endTime && s.endTime <= 10);
          assert.ok(s.audioStart >= 0 && s.audioEnd <= 8 && s.audioStart < s.audioEnd);
          assert.ok(Math.abs(s.audioEnd - s.audioStart + s.padSeconds - (s.endTime - s.startTime)) < 1e-9);
          end = s.endTime;
        }
      }),
    );
  });
});
