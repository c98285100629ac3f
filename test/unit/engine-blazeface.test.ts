// The detector's non-maximum suppression (blazeface.ts): boxes above the score limit, best first,
// none overlapping a kept one by the IoU limit or more, at most maxDetected; equal scores keep the
// anchors' order.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { suppress } from '../../src/engines/cpu/blazeface.js';

const limits = { maxDetected: 8, minConfidence: 0.5, iouThreshold: 0.2 };
const boxes = (...b: number[][]) => Float32Array.from(b.flat());

describe('BlazeFace non-maximum suppression', () => {
  it('keeps the best of overlapping boxes and every separate one, best first', () => {
    const b = boxes([0, 0, 10, 10], [1, 1, 11, 11], [50, 50, 60, 60], [100, 0, 110, 10]);
    assert.deepEqual(suppress(b, Float32Array.from([0.7, 0.9, 0.6, 0.4]), limits), [1, 2]);
  });

  it('drops scores at the limit and keeps boxes overlapping just under it', () => {
    // IoU of these two: 25 / 175 = 0.14.
    const b = boxes([0, 0, 10, 10], [5, 5, 15, 15]);
    assert.deepEqual(suppress(b, Float32Array.from([0.8, 0.7]), limits), [0, 1]);
    assert.deepEqual(suppress(b, Float32Array.from([0.8, 0.7]), { ...limits, iouThreshold: 0.1 }), [0]);
    assert.deepEqual(suppress(b, Float32Array.from([0.5, 0.6]), limits), [1]);
  });

  it('keeps at most maxDetected, and the anchors order among equal scores', () => {
    const b = boxes(...Array.from({ length: 5 }, (_, i) => [i * 20, 0, i * 20 + 10, 10]));
    const s = Float32Array.from([0.6, 0.9, 0.6, 0.9, 0.6]);
    assert.deepEqual(suppress(b, s, { ...limits, maxDetected: 3 }), [1, 3, 0]);
  });
});
