// The retime plan of a dialogue-edit render: untouched stretches are the source's frames one for one,
// each slot fills exactly the frames the preview gives it, the total is the preview's length; and the
// ffmpeg graph built from it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { planRetime, retimeFilterGraph, RetimePlanError } from '../../src/media/retime-plan.js';

const slot = (o: number, od: number, s: number, sd: number) => ({
  outputStartMs: o,
  outputDurationMs: od,
  sourceStartMs: s,
  sourceDurationMs: sd,
});

test('a removal: source frames kept around a shortened slot, total = preview length', () => {
  // 4 s at 25 fps; 1.0-1.6 s of source becomes 0.2 s; preview 3.6 s.
  const p = planRetime({
    slots: [slot(1000, 200, 1000, 600)],
    sourceFrames: 100,
    previewDurationMs: 3600,
    fps: 25,
  });
  assert.equal(p.frameCount, 90);
  assert.deepEqual(p.pieces, [
    { sourceStart: 0, sourceEnd: 25, outputFrames: 25, retimed: false },
    { sourceStart: 25, sourceEnd: 40, outputFrames: 5, retimed: true },
    { sourceStart: 40, sourceEnd: 100, outputFrames: 60, retimed: false },
  ]);
  assert.equal(
    p.pieces.reduce((n, x) => n + x.outputFrames, 0),
    p.frameCount,
  );
});

test('a longer change is slowed; two slots keep the stretch between them one for one', () => {
  const p = planRetime({
    slots: [slot(2600, 800, 2400, 400), slot(400, 400, 400, 200)],
    sourceFrames: 100,
    previewDurationMs: 4600,
    fps: 25,
  });
  assert.deepEqual(p.pieces, [
    { sourceStart: 0, sourceEnd: 10, outputFrames: 10, retimed: false },
    { sourceStart: 10, sourceEnd: 15, outputFrames: 10, retimed: true },
    { sourceStart: 15, sourceEnd: 60, outputFrames: 45, retimed: false },
    { sourceStart: 60, sourceEnd: 70, outputFrames: 20, retimed: true },
    { sourceStart: 70, sourceEnd: 100, outputFrames: 30, retimed: false },
  ]);
  assert.equal(p.frameCount, 115);
  assert.equal(
    p.pieces.reduce((n, x) => n + x.outputFrames, 0),
    115,
  );
});

test('drift from the preview cross-fades lands in the slot, a short source tail holds its last frame', () => {
  // The stretch before the slot is 1 frame longer in the preview than in the source: the slot absorbs it.
  const p = planRetime({
    slots: [slot(1040, 400, 1000, 400)],
    sourceFrames: 50,
    previewDurationMs: 2080,
    fps: 25,
  });
  assert.deepEqual(p.pieces[1], { sourceStart: 25, sourceEnd: 35, outputFrames: 11, retimed: true });
  assert.deepEqual(p.pieces.at(-1), { sourceStart: 49, sourceEnd: 50, outputFrames: 1, retimed: true });
  assert.equal(
    p.pieces.reduce((n, x) => n + x.outputFrames, 0),
    52,
  );
});

test('a slot shortened to nothing is dropped; overlapping slots are refused', () => {
  const p = planRetime({
    slots: [slot(1000, 10, 1000, 400)],
    sourceFrames: 100,
    previewDurationMs: 3610,
    fps: 25,
  });
  assert.deepEqual(
    p.pieces.map((x) => [x.sourceStart, x.sourceEnd, x.outputFrames]),
    [
      [0, 25, 25],
      [35, 100, 65],
    ],
  );
  assert.throws(
    () =>
      planRetime({
        slots: [slot(0, 400, 0, 800), slot(400, 400, 400, 400)],
        sourceFrames: 100,
        previewDurationMs: 3000,
        fps: 25,
      }),
    RetimePlanError,
  );
});

test('the filter graph: one resample, a split per piece, frame trims, scaled timestamps, concat', () => {
  const p = planRetime({
    slots: [slot(1000, 200, 1000, 600)],
    sourceFrames: 100,
    previewDurationMs: 3600,
    fps: 25,
  });
  const g = retimeFilterGraph(p, '25');
  assert.ok(g.startsWith('[0:v]fps=25,setpts=PTS-STARTPTS,split=3[s0][s1][s2];'), g);
  assert.ok(g.includes('[s0]trim=start_frame=0:end_frame=25,setpts=PTS-STARTPTS[p0]'), g);
  assert.ok(
    g.includes('[s1]trim=start_frame=25:end_frame=40,setpts=PTS-STARTPTS,setpts=0.333333*PTS,fps=25,'),
    g,
  );
  assert.ok(g.includes('trim=end_frame=5,'), g);
  // Restamped by position after the concat (a one-frame piece has no duration there), the last frame
  // held for the plan's length (the caller cuts at its frame count).
  assert.ok(
    g.endsWith(
      '[p0][p1][p2]concat=n=3:v=1:a=0,setpts=N/(25)/TB,tpad=stop_mode=clone:stop_duration=3.600000[v]',
    ),
    g,
  );
});
