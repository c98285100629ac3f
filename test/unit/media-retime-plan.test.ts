// The retime plan of a dialogue-edit render: untouched stretches are the source's frames one for one,
// each slot fills exactly the frames the preview gives it, the total is the preview's length; and the
// ffmpeg graph built from it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  MIN_DISSOLVE_FRAMES,
  planRetime,
  retimeFilterGraph,
  RetimePlanError,
  slotFrames,
} from '../../src/media/retime-plan.js';

const slot = (o: number, od: number, s: number, sd: number) => ({
  outputStartMs: o,
  outputDurationMs: od,
  sourceStartMs: s,
  sourceDurationMs: sd,
});

test('a removal: source frames kept around a shortened slot, dissolved across it, total = preview length', () => {
  // 4 s at 25 fps; 1.0-1.6 s of source becomes 0.2 s; preview 3.6 s. Frames 25..29 blend into 35..39.
  const input = { slots: [slot(1000, 200, 1000, 600)], sourceFrames: 100, previewDurationMs: 3600, fps: 25 };
  const p = planRetime(input);
  assert.equal(p.frameCount, 90);
  assert.deepEqual(p.pieces, [
    { sourceStart: 0, sourceEnd: 25, outputFrames: 25, retimed: false },
    { sourceStart: 25, sourceEnd: 30, outputFrames: 5, retimed: true, dissolveTo: 35 },
    { sourceStart: 40, sourceEnd: 100, outputFrames: 60, retimed: false },
  ]);
  // Allowed to borrow, a dissolve reaches MIN_DISSOLVE_FRAMES with one frame from each side.
  assert.deepEqual(planRetime({ ...input, borrowMs: 120 }).pieces, [
    { sourceStart: 0, sourceEnd: 24, outputFrames: 24, retimed: false },
    { sourceStart: 24, sourceEnd: 31, outputFrames: 7, retimed: true, dissolveTo: 34 },
    { sourceStart: 41, sourceEnd: 100, outputFrames: 59, retimed: false },
  ]);
  assert.ok(MIN_DISSOLVE_FRAMES <= 7);
  // A slot closed completely: a cut of 10 frames, dissolved over 3 borrowed frames from each side.
  const closed = planRetime({
    ...input,
    slots: [slot(1000, 10, 1000, 400)],
    previewDurationMs: 3610,
    borrowMs: 120,
  });
  assert.deepEqual(closed.pieces, [
    { sourceStart: 0, sourceEnd: 22, outputFrames: 22, retimed: false },
    { sourceStart: 22, sourceEnd: 28, outputFrames: 6, retimed: true, dissolveTo: 32 },
    { sourceStart: 38, sourceEnd: 100, outputFrames: 62, retimed: false },
  ]);
  for (const q of [p, closed])
    assert.equal(
      q.pieces.reduce((n, x) => n + x.outputFrames, 0),
      q.frameCount,
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

test("a slot's frames are the plan's whole frames, not its milliseconds", () => {
  const base = { sourceFrames: 100, previewDurationMs: 4000, fps: 25 };
  // Same milliseconds, but drift makes it a frame longer: lengthened (its holds need motion).
  const drift = { ...base, slots: [slot(1040, 400, 1000, 400), slot(2040, 410, 2000, 400)] };
  assert.deepEqual(slotFrames(drift), [
    { start: 25, end: 35, outputFrames: 11 },
    // 10 ms longer, yet the same 10 frames: nothing held.
    { start: 50, end: 60, outputFrames: 10 },
  ]);
  // In the caller's order, whatever the source order; with motion the held frame is where it says.
  const reversed = { ...base, slots: [...drift.slots].reverse() };
  assert.deepEqual(slotFrames(reversed), [...slotFrames(drift)].reverse());
  const motion = [5, 5, 5, 5, 5, 5, 0, 5, 5, 5];
  const p = planRetime({ ...drift, motion: [motion, null] });
  assert.deepEqual(
    p.pieces.filter((x) => x.retimed),
    [{ sourceStart: 31, sourceEnd: 32, outputFrames: 2, retimed: true }],
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

test('the filter graph: one resample, a split per piece, frame trims, scaled timestamps, dissolves, concat', () => {
  // A change slowed from 0.2 s to 0.6 s, a removal from 0.6 s to 0.2 s (dissolved).
  const p = planRetime({
    slots: [slot(1000, 600, 1000, 200), slot(2000, 200, 1600, 600)],
    sourceFrames: 100,
    previewDurationMs: 4000,
    fps: 25,
  });
  const g = retimeFilterGraph(p, '25');
  assert.ok(g.startsWith('[0:v]fps=25,setpts=PTS-STARTPTS,split=6[s0][s1][s2][s3][s4][d0];'), g);
  assert.ok(g.includes('[s0]trim=start_frame=0:end_frame=25,setpts=PTS-STARTPTS[p0]'), g);
  assert.ok(
    g.includes('[s1]trim=start_frame=25:end_frame=30,setpts=PTS-STARTPTS,setpts=3.000000*PTS,fps=25,'),
    g,
  );
  assert.ok(g.includes('trim=end_frame=15,'), g);
  assert.ok(
    g.includes(
      '[s3]trim=start_frame=40:end_frame=45,setpts=PTS-STARTPTS[a3];[d0]trim=start_frame=50:end_frame=55,' +
        'setpts=PTS-STARTPTS[b3];[a3][b3]blend=all_expr=A+(B-A)*(T*25+1)/6[p3]',
    ),
    g,
  );
  // Restamped by position after the concat (a one-frame piece has no duration there), the last frame
  // held for the plan's length (the caller cuts at its frame count).
  assert.ok(
    g.endsWith(
      '[p0][p1][p2][p3][p4]concat=n=5:v=1:a=0,setpts=N/(25)/TB,tpad=stop_mode=clone:stop_duration=4.000000[v]',
    ),
    g,
  );
});
