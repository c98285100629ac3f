// Dynamic time warping (src/speech/dtw.ts): the path is monotone with unit steps from corner to
// corner, identical inputs map to the identity, a known stretch is recovered, and carried times keep
// their order and stay inside the target; the pho rescaling Pico's reference uses keeps its lines.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { dtw, warpPositions, warpTimes } from '../../src/speech/dtw.js';
import { scalePho } from '../../src/speech/pico.js';
import { parsePho } from '../../src/speech/foreign-phones.js';

const frames = (dim: number) =>
  fc
    .array(fc.array(fc.float({ min: -10, max: 10, noNaN: true }), { minLength: dim, maxLength: dim }), {
      minLength: 1,
      maxLength: 40,
    })
    .map((rows) => Float32Array.from(rows.flat()));

describe('dtw', () => {
  it('walks from corner to corner in unit, monotone steps', () => {
    fc.assert(
      fc.property(frames(3), frames(3), (x, y) => {
        const p = dtw(x, y, 3);
        const n = x.length / 3;
        const m = y.length / 3;
        assert.equal(p.a[0], 0);
        assert.equal(p.b[0], 0);
        assert.equal(p.a.at(-1), n - 1);
        assert.equal(p.b.at(-1), m - 1);
        for (let k = 1; k < p.a.length; k++) {
          const da = p.a[k] - p.a[k - 1];
          const db = p.b[k] - p.b[k - 1];
          assert.ok(da >= 0 && da <= 1 && db >= 0 && db <= 1 && da + db >= 1);
        }
        assert.ok(p.cost >= 0);
      }),
    );
  });

  it('in a band: still corner to corner with finite cost, the same path when it lies inside, and a long strip fits', () => {
    fc.assert(
      fc.property(frames(3), frames(3), fc.integer({ min: 0, max: 6 }), (x, y, band) => {
        const p = dtw(x, y, 3, band);
        assert.equal(p.a.at(-1), x.length / 3 - 1);
        assert.equal(p.b.at(-1), y.length / 3 - 1);
        assert.ok(Number.isFinite(p.cost));
        const full = dtw(x, y, 3);
        assert.ok(p.cost >= full.cost - 1e-6, 'a band never finds a cheaper path');
        if (band >= Math.max(x.length, y.length) / 3) assert.deepEqual(p, full);
      }),
    );
    // 5,000 x 5,000 frames is over the table's limit as a square, not as a strip of 101 frames.
    const long = Float32Array.from({ length: 5000 }, (_, i) => Math.sin(i / 7));
    assert.throws(() => dtw(long, long, 1), /too large/);
    const p = dtw(long, long, 1, 50);
    assert.deepEqual(Array.from(p.a), Array.from(p.b));
  });

  it('maps a sequence onto itself as the identity', () => {
    fc.assert(
      fc.property(frames(2), (x) => {
        // Distinct frames, so no two cells tie at zero cost off the diagonal.
        const y = x.map((v, i) => v + (i >> 1) * 100);
        const p = dtw(y, y, 2);
        assert.equal(p.cost, 0);
        assert.deepEqual([...p.a], [...p.b]);
        assert.deepEqual([...warpPositions(p)], [...p.a]);
      }),
    );
  });

  it('recovers a sequence said at half speed', () => {
    // A ramp, and the same ramp with every frame held twice.
    const x = Float32Array.from({ length: 20 }, (_, i) => i);
    const y = Float32Array.from({ length: 40 }, (_, j) => Math.floor(j / 2));
    const pos = warpPositions(dtw(x, y, 1));
    for (let i = 0; i < 20; i++) assert.equal(pos[i], 2 * i + 0.5);
    const times = warpTimes([0, 50.5, 100.5, 199.5], pos, { hopMs: 10, windowMs: 1, toDurationMs: 400 });
    // Frame i of x (centre 10 i + 0.5 ms) pairs with frames 2 i and 2 i + 1 of y: their middle.
    assert.deepEqual(times, [0, 105.5, 205.5, 385.5]);
  });

  it('carries times in order and inside the target', () => {
    fc.assert(
      fc.property(
        frames(2),
        frames(2),
        fc.array(fc.integer({ min: 0, max: 500 }), { maxLength: 20 }),
        (x, y, ts) => {
          const sorted = [...ts].sort((a, b) => a - b);
          const dur = (y.length / 2) * 10 + 15;
          const out = warpTimes(sorted, warpPositions(dtw(x, y, 2)), {
            hopMs: 10,
            windowMs: 25,
            toDurationMs: dur,
          });
          assert.equal(out.length, sorted.length);
          for (let k = 0; k < out.length; k++) {
            assert.ok(out[k] >= 0 && out[k] <= dur);
            if (k > 0) assert.ok(out[k] >= out[k - 1]);
          }
        },
      ),
    );
  });

  it('refuses frames of the wrong width and empty sides', () => {
    assert.throws(() => dtw(new Float32Array(3), new Float32Array(4), 2));
    assert.throws(() => dtw(new Float32Array(0), new Float32Array(2), 2));
  });
});

describe('scalePho', () => {
  it('scales every phone so the file sums to the asked length, keeping pitch points and comments', () => {
    const pho = '; a comment\n_\t50\np\t80 0 120 80 110\na\t120 50 130\n\n_\t50';
    const out = scalePho(pho, parsePho(pho), 600);
    assert.deepEqual(
      parsePho(out).map((p) => p.durMs),
      [100, 160, 240, 100],
    );
    assert.match(out, /^; a comment\n/);
    assert.match(out, /^p\t160 0 120 80 110$/m);
  });
});
