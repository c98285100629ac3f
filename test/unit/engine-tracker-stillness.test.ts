// test-database: none
// When the face tracker may interpolate a frame's landmarks instead of running FaceMesh: the face held
// still between the frames around it (lips and whole face, in eye distances), and when a measured
// frame's landmarks may be kept for the next frame (the crops frame the face nearly alike).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MESH_POINTS } from '../../src/engines/cpu/face-models.js';
import { heldStill, similarCrops, STILL_FACE, STILL_LIPS } from '../../src/engines/cpu/face-tracker.js';
import { EYE_OUTER, LIPS } from '../../src/engines/cpu/landmarks.js';

/** A face: points on a grid, the outer eye corners 100 px apart. */
function face(): Float32Array {
  const p = new Float32Array(MESH_POINTS * 2);
  for (let i = 0; i < MESH_POINTS; i++) {
    p[2 * i] = 100 + (i % 22) * 10;
    p[2 * i + 1] = 100 + Math.floor(i / 22) * 10;
  }
  p[2 * EYE_OUTER[0]] = 150;
  p[2 * EYE_OUTER[0] + 1] = 150;
  p[2 * EYE_OUTER[1]] = 250;
  p[2 * EYE_OUTER[1] + 1] = 150;
  return p;
}

function moved(p: Float32Array, index: number, dx: number): Float32Array {
  const q = Float32Array.from(p);
  q[2 * index] += dx;
  return q;
}

describe('heldStill', () => {
  const a = face();
  const scale = 100;
  const lip = LIPS.lowerInner[5];
  const cheek = 234; // a face-oval point, not on the lips

  it('holds for identical landmarks and small motion', () => {
    assert.equal(heldStill(a, a, scale), true);
    assert.equal(heldStill(a, moved(a, lip, 0.9 * STILL_LIPS * scale), scale), true);
    assert.equal(heldStill(a, moved(a, cheek, 0.9 * STILL_FACE * scale), scale), true);
  });

  it('fails when one lip point moves more than the lips allow', () => {
    assert.equal(heldStill(a, moved(a, lip, 1.1 * STILL_LIPS * scale), scale), false);
  });

  it('fails when any face point moves more than the face allows', () => {
    // More than the lips' limit is fine off the lips; more than the face's is not.
    assert.equal(heldStill(a, moved(a, cheek, 1.1 * STILL_LIPS * scale), scale), true);
    assert.equal(heldStill(a, moved(a, cheek, 1.1 * STILL_FACE * scale), scale), false);
  });

  it('scales with the face: the same pixels are motion on a small face and not on a large one', () => {
    const b = moved(a, lip, 3);
    assert.equal(heldStill(a, b, 3 / STILL_LIPS / 1.1), false);
    assert.equal(heldStill(a, b, 3 / STILL_LIPS / 0.9), true);
  });
});

describe('similarCrops', () => {
  const c = { cx: 200, cy: 200, size: 300, angle: 0.1 };
  it('accepts the same crop and small shifts', () => {
    assert.equal(similarCrops(c, c), true);
    assert.equal(similarCrops(c, { ...c, cx: c.cx + 10 }), true);
  });
  it('refuses a shifted, resized or rolled crop', () => {
    assert.equal(similarCrops(c, { ...c, cx: c.cx + 20 }), false);
    assert.equal(similarCrops(c, { ...c, size: c.size * 1.1 }), false);
    assert.equal(similarCrops(c, { ...c, angle: c.angle + 0.1 }), false);
  });
});
