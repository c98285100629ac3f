// Fitting translated speech into its source span: stretch within the limits, then the pause after,
// never cutting speech; what does not fit is reported.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { DEFAULT_STRETCH_LIMITS, fitSegment, fitSegments } from '../../src/domain/dub-timing.js';

const { minStretch, maxStretch } = DEFAULT_STRETCH_LIMITS;

describe('dub timing fit', () => {
  it('speeds up speech that is a little long, within the span', () => {
    const p = fitSegment({ startMs: 1000, endMs: 3000, nextStartMs: 3500, speechMs: 2200 });
    assert.equal(p.endMs, 3000);
    assert.ok(Math.abs(p.stretch - 2000 / 2200) < 1e-9);
    assert.equal(p.usedPauseMs, 0);
    assert.equal(p.fits, true);
  });

  it('spills into the pause once the stretch is at its limit', () => {
    const p = fitSegment({ startMs: 0, endMs: 2000, nextStartMs: 3000, speechMs: 3000 });
    assert.equal(p.stretch, minStretch);
    assert.equal(p.endMs, 2400);
    assert.equal(p.usedPauseMs, 400);
    assert.equal(p.fits, true);
  });

  it('keeps the whole sentence and says so when even the pause is too short', () => {
    const p = fitSegment({ startMs: 0, endMs: 1000, nextStartMs: 1100, speechMs: 3000 });
    assert.equal(p.endMs, 2400);
    assert.equal(p.usedPauseMs, 100);
    assert.equal(p.fits, false);
  });

  it('slows short speech toward the span, not past the limit; a stretch near 1 is left alone', () => {
    assert.equal(
      fitSegment({ startMs: 0, endMs: 4000, nextStartMs: 4000, speechMs: 1000 }).stretch,
      maxStretch,
    );
    assert.equal(fitSegment({ startMs: 0, endMs: 1010, nextStartMs: 2000, speechMs: 1000 }).stretch, 1);
    // ...but not where the untouched speech would overrun the room (found by the property below).
    const tight = fitSegment({ startMs: 0, endMs: 99, nextStartMs: 99, speechMs: 100 });
    assert.equal(tight.stretch, 0.99);
    assert.equal(tight.fits, true);
  });

  it('holds for any segment: limits, no cut, start kept, fit reported honestly', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 100_000 }),
        fc.integer({ min: 0, max: 20_000 }),
        fc.integer({ min: 0, max: 5_000 }),
        fc.integer({ min: 1, max: 30_000 }),
        (startMs, span, pause, speechMs) => {
          const seg = { startMs, endMs: startMs + span, nextStartMs: startMs + span + pause, speechMs };
          const [p] = fitSegments([seg]);
          assert.equal(p.startMs, startMs);
          assert.ok(p.stretch >= minStretch && p.stretch <= maxStretch);
          assert.ok(
            Math.abs(p.endMs - startMs - Math.round(speechMs * p.stretch)) <= 1,
            'the speech is never cut',
          );
          assert.equal(p.fits, p.endMs <= seg.nextStartMs);
          assert.ok(p.usedPauseMs >= 0 && p.usedPauseMs <= pause);
          // Fitting was possible within the limits and the room: then it fits.
          if (speechMs * minStretch <= span + pause - 1) assert.equal(p.fits, true);
        },
      ),
      { numRuns: 2000 },
    );
  });
});
