// The motion-aware retime: held frames follow the stillest stretch of a slot, never more than the run
// limit of one frame, the frame count exact (a shortened section is dissolved, not dropped from); equal motion spreads them evenly; and the plan and
// graph built from it keep the frames outside the slots one for one.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chooseFrames, planRetime, retimeFilterGraph, RetimePlanError } from '../../src/media/retime-plan.js';
import { perFrameMotion } from '../../src/media/section-motion.js';

const sum = (xs: number[]) => xs.reduce((a, x) => a + x, 0);
const where = (xs: number[], f: (x: number) => boolean) => xs.flatMap((x, i) => (f(x) ? [i] : []));

test('zero motion everywhere: holds spread evenly, the count exact; a shorter count is refused', () => {
  const held = chooseFrames(new Array(10).fill(0), 15);
  assert.equal(sum(held), 15);
  assert.deepEqual(
    where(held, (c) => c === 2),
    [0, 2, 4, 6, 8],
  );
  assert.deepEqual(chooseFrames([1, 2, 3], 3), [1, 1, 1]);
  assert.throws(() => chooseFrames(new Array(12).fill(0), 8), RetimePlanError);
});

test('a longer span: the holds go to the still stretch, up to the run limit, then the next stillest', () => {
  const motion = [5, 5, 5, 5, 0.1, 0.1, 0.1, 5, 5, 5, 5, 5];
  const few = chooseFrames(motion, 15);
  assert.deepEqual(few, [1, 1, 1, 1, 2, 2, 2, 1, 1, 1, 1, 1]);
  // 9 extra frames: the three still frames are held twice each (the limit); the other 3 are spread
  // over the moving frames, at most one each.
  const many = chooseFrames([5, 5, 5, 3, 0.1, 0.1, 0.1, 5, 5, 5, 5, 5], 21);
  assert.equal(sum(many), 21);
  assert.deepEqual(many.slice(4, 7), [3, 3, 3]);
  assert.ok(
    [...many.slice(0, 4), ...many.slice(7)].every((c) => c === 1 || c === 2),
    String(many),
  );
});

test('any motion and longer length: exact count, holds within the limit the stretch allows', () => {
  let seed = 7;
  const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (let t = 0; t < 500; t++) {
    const n = 2 + Math.floor(rand() * 30);
    const out = n + Math.floor(rand() * n * 3);
    const motion = Array.from({ length: n }, () => (rand() < 0.3 ? 0 : rand() * 20));
    const c = chooseFrames(motion, out);
    assert.equal(sum(c), out, `n=${n} out=${out}`);
    const run = Math.max(2, Math.ceil((out - n) / n));
    assert.ok(Math.max(...c) <= 1 + run && Math.min(...c) >= 1, `${c}`);
  }
});

test('the plan with motion: exact frames, outside the slot one for one, holds on the still frames', () => {
  const slot = { outputStartMs: 1000, outputDurationMs: 600, sourceStartMs: 1000, sourceDurationMs: 400 };
  const motion = [4, 4, 4, 4, 0, 0, 0, 0, 0, 4];
  const p = planRetime({
    slots: [slot],
    sourceFrames: 100,
    previewDurationMs: 4200,
    fps: 25,
    motion: [motion],
  });
  assert.equal(p.frameCount, 105);
  assert.equal(sum(p.pieces.map((x) => x.outputFrames)), 105);
  assert.deepEqual(p.pieces[0], { sourceStart: 0, sourceEnd: 25, outputFrames: 25, retimed: false });
  assert.deepEqual(p.pieces.at(-1), { sourceStart: 35, sourceEnd: 100, outputFrames: 65, retimed: false });
  const held = p.pieces.filter((x) => x.retimed);
  assert.deepEqual(
    held.map((x) => x.sourceStart),
    [29, 30, 31, 32, 33],
  );
  assert.ok(held.every((x) => x.sourceEnd === x.sourceStart + 1 && x.outputFrames === 2));
  // Every source frame of the slot is shown (a longer span drops none), in order.
  const shown = p.pieces
    .slice(1, -1)
    .flatMap((x) => Array.from({ length: x.sourceEnd - x.sourceStart }, (_, i) => x.sourceStart + i));
  assert.deepEqual(
    shown,
    Array.from({ length: 10 }, (_, i) => 25 + i),
  );
  const g = retimeFilterGraph(p, '25');
  assert.ok(g.includes('trim=start_frame=29:end_frame=30,setpts=PTS-STARTPTS,setpts=2.000000*PTS'), g);
  // Motion of the wrong length (or none) keeps the even plan.
  const even = planRetime({
    slots: [slot],
    sourceFrames: 100,
    previewDurationMs: 4200,
    fps: 25,
    motion: [[1]],
  });
  assert.deepEqual(even.pieces[1], { sourceStart: 25, sourceEnd: 35, outputFrames: 15, retimed: true });
});

test('per-frame motion: the mean of the differences on both sides, neighbours outside the section used', () => {
  const f = (v: number) => new Uint8Array(8).fill(v);
  // Frames 10, 10, 20, 20, 50: the section is frames 1..3 (one neighbour on each side).
  assert.deepEqual(perFrameMotion([f(10), f(10), f(20), f(20), f(50)], 1, 3), [5, 5, 15]);
  // At the source's start there is no frame before: the first frame has only its next difference.
  assert.deepEqual(perFrameMotion([f(0), f(4), f(4)], 0, 2), [4, 2]);
});
