// The streaming resampler (src/media/resample.ts): the output's length, unity gain at DC, a tone in
// the pass band kept at its frequency and level, a tone above the new Nyquist frequency removed, the
// same samples whatever the input's block sizes, and rates it cannot serve refused.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { concatSamples } from '../../src/media/mono.js';
import { canResample, Resampler } from '../../src/media/resample.js';

function tone(hz: number, rate: number, seconds: number, amp = 0.5): Float32Array {
  const out = new Float32Array(Math.round(rate * seconds));
  for (let i = 0; i < out.length; i++) out[i] = amp * Math.sin((2 * Math.PI * hz * i) / rate);
  return out;
}

function resample(input: Float32Array, from: number, to: number, block = input.length): Float32Array {
  const r = new Resampler(from, to);
  const parts: Float32Array[] = [];
  for (let at = 0; at < input.length; at += block) parts.push(r.push(input.subarray(at, at + block)));
  parts.push(r.finish());
  return concatSamples(parts);
}

/** Root mean square over the middle of a signal (away from the edges' transients). */
function rms(x: Float32Array): number {
  const a = Math.floor(x.length * 0.2);
  const b = Math.floor(x.length * 0.8);
  let s = 0;
  for (let i = a; i < b; i++) s += x[i] * x[i];
  return Math.sqrt(s / (b - a));
}

describe('Resampler', () => {
  it('gives round(n * to / from) samples, as ffmpeg does, and passes DC unchanged', () => {
    for (const [from, to] of [
      [44100, 16000],
      [48000, 16000],
      [22050, 16000],
      [8000, 16000],
    ]) {
      const out = resample(new Float32Array(from).fill(0.25), from, to);
      assert.equal(out.length, Math.round((from * to) / from), `${from} -> ${to}`);
      for (let i = 100; i < out.length - 100; i++)
        assert.ok(Math.abs(out[i] - 0.25) < 1e-4, `${from}: ${out[i]}`);
    }
  });

  it('keeps a 1 kHz tone at its frequency and level, and removes a 10 kHz one', () => {
    const out = resample(tone(1000, 44100, 1), 44100, 16000);
    const expected = tone(1000, 16000, 1);
    let worst = 0;
    for (let i = 200; i < out.length - 200; i++) worst = Math.max(worst, Math.abs(out[i] - expected[i]));
    assert.ok(worst < 0.005, `1 kHz differs by up to ${worst}`);
    const high = resample(tone(10000, 44100, 1), 44100, 16000);
    assert.ok(rms(high) < rms(expected) * 0.01, `10 kHz kept at ${rms(high)}`);
  });

  it('gives the same samples whatever the block sizes', () => {
    const input = tone(440, 48000, 0.5);
    const whole = resample(input, 48000, 16000);
    for (const block of [1, 7, 1000, 4096]) assert.deepEqual(resample(input, 48000, 16000, block), whole);
  });

  it('refuses rates whose ratio needs too many filters, or that are not positive integers', () => {
    assert.equal(canResample(44100, 16000), true);
    assert.equal(canResample(16001, 16000), false);
    assert.equal(canResample(0, 16000), false);
    assert.equal(canResample(44100.5, 16000), false);
    assert.throws(() => new Resampler(16001, 16000), RangeError);
  });
});
