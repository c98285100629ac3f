// The rules of what a remote worker may upload and which of its figures the server replaces, and the
// two settings they read (LIPSYNC_WORKER_UPLOAD_MAX_BYTES, LIPSYNC_UPLOAD_SWEEP_GRACE_SECONDS).
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  measuredGenerationResult,
  measuredPreviewResult,
  outputBounds,
  uploadAllowance,
  type MeasuredOutput,
} from '../../../src/domain/remote-outputs.js';
import { PLAN_LIMITS } from '../../../src/domain/plans.js';
import { ConfigError, loadConfig } from '../../../src/config.js';

const MiB = 1024 * 1024;
const GiB = 1024 * MiB;

const video = (o: Partial<MeasuredOutput> = {}): MeasuredOutput => ({
  durationSeconds: 2.04,
  fps: 25,
  width: 256,
  height: 256,
  hasVideo: true,
  hasAudio: true,
  ...o,
});

describe('output bounds', () => {
  test("each file is held to the plan's file size, the attempt to its outputs and the operator's cap", () => {
    const free = outputBounds(PLAN_LIMITS.free.maxFileBytes, 2, 10 * GiB);
    assert.deepEqual(free, { perFile: 100 * MiB, perAttempt: 200 * MiB, files: 2 });
    const capped = outputBounds(PLAN_LIMITS.scale.maxFileBytes, 2, 6 * GiB);
    assert.deepEqual(capped, { perFile: 5 * GiB, perAttempt: 6 * GiB, files: 2 });
    assert.deepEqual(outputBounds(PLAN_LIMITS.scale.maxFileBytes, 0, 10 * GiB), {
      perFile: 5 * GiB,
      perAttempt: 0,
      files: 0,
    });
  });

  test('what one more upload may have: its own bound, less what the attempt used elsewhere', () => {
    const b = outputBounds(100 * MiB, 2, 150 * MiB);
    assert.equal(uploadAllowance(b, 0), 100 * MiB);
    assert.equal(uploadAllowance(b, 70 * MiB), 80 * MiB);
    assert.equal(uploadAllowance(b, 200 * MiB), 0);
  });
});

describe('measured results', () => {
  const result = {
    outputKey: 'jobs/j/t/output.mp4',
    watermarkedKey: null,
    outputDuration: 9999,
    fps: 999,
    quality: { engine: 'x', width: 1, height: 1, fps: 999 },
  };

  test("a generation's duration, fps and size are the output's, whatever was reported", () => {
    const m = measuredGenerationResult(result, new Map([[result.outputKey, video()]]));
    assert.ok(typeof m !== 'string');
    assert.equal(m.result.outputDuration, 2.04);
    assert.equal(m.result.fps, 25);
    assert.deepEqual(m.result.quality, { engine: 'x', width: 256, height: 256, fps: 25 });
    assert.deepEqual(m.disagreements, {
      outputDuration: { reported: 9999, measured: 2.04 },
      fps: { reported: 999, measured: 25 },
    });
    // Rounding is no disagreement (the figures are still the measured ones).
    const close = measuredGenerationResult(
      { ...result, outputDuration: 2, fps: 25.001 },
      new Map([[result.outputKey, video()]]),
    );
    assert.ok(typeof close !== 'string');
    assert.deepEqual(close.disagreements, {});
    assert.equal(close.result.outputDuration, 2.04);
  });

  test('an output that cannot be a generation is refused', () => {
    const of = (o: Partial<MeasuredOutput>) =>
      measuredGenerationResult(result, new Map([[result.outputKey, video(o)]]));
    assert.match(String(of({ hasVideo: false, fps: null, width: null, height: null })), /holds no video/);
    assert.match(String(of({ durationSeconds: null })), /no measurable duration/);
    assert.match(String(of({ fps: null })), /no measurable frame rate/);
    assert.match(String(measuredGenerationResult(result, new Map())), /holds no video/);
  });

  test('a plan that watermarks: the result needs a watermarked output of its own, else it is refused', () => {
    const marked = { ...result, watermarkedKey: 'jobs/j/t/preview.mp4' };
    const outs = (m: Partial<MeasuredOutput> = {}) =>
      new Map([
        [result.outputKey, video({ sha256: 'clean' })],
        [marked.watermarkedKey, video({ sha256: 'marked', ...m })],
      ]);
    const wm = { watermark: true };
    assert.ok(typeof measuredGenerationResult(marked, outs(), wm) !== 'string');
    // Skipped: no watermarked output, or the clean output named as one.
    assert.match(
      String(measuredGenerationResult(result, new Map([[result.outputKey, video()]]), wm)),
      /no watermarked output/,
    );
    assert.match(
      String(measuredGenerationResult({ ...result, watermarkedKey: result.outputKey }, outs(), wm)),
      /no watermarked output/,
    );
    // The clean bytes uploaded under the watermarked name, or a file that is not its derivative.
    assert.match(
      String(measuredGenerationResult(marked, outs({ sha256: 'clean' }), wm)),
      /is the clean output/,
    );
    assert.match(String(measuredGenerationResult(marked, outs({ width: 128 }), wm)), /picture size/);
    assert.match(String(measuredGenerationResult(marked, outs({ durationSeconds: 1 }), wm)), /not as long/);
    assert.match(String(measuredGenerationResult(marked, outs({ hasVideo: false }), wm)), /holds no video/);
    // A plan without a watermark takes a result without one.
    const paid = measuredGenerationResult(result, new Map([[result.outputKey, video()]]), {
      watermark: false,
    });
    assert.ok(typeof paid !== 'string');
  });

  test("a dialogue edit's preview duration is the file's", () => {
    const r = { previewKey: 'jobs/j/t/preview.wav', previewDurationMs: 1, outcome: {} };
    const wav = video({ durationSeconds: 3.2105, hasVideo: false, fps: null, width: null, height: null });
    const m = measuredPreviewResult(r, new Map([[r.previewKey, wav]]));
    assert.ok(typeof m !== 'string');
    assert.equal(m.result.previewDurationMs, 3211);
    assert.deepEqual(m.disagreements, { previewDurationMs: { reported: 1, measured: 3211 } });
    assert.match(
      String(measuredPreviewResult(r, new Map([[r.previewKey, { ...wav, hasAudio: false }]]))),
      /holds no audio/,
    );
  });
});

describe('settings', () => {
  const problems = (env: Record<string, string>): string[] => {
    try {
      loadConfig(env);
    } catch (err) {
      assert.ok(err instanceof ConfigError);
      return err.problems;
    }
    return [];
  };

  test('defaults, and values checked once at start', () => {
    const c = loadConfig({});
    assert.equal(c.workerUploadMaxBytes, 10 * GiB);
    assert.equal(c.uploadSweepGraceMs, 3600_000);
    const set = loadConfig({
      LIPSYNC_WORKER_UPLOAD_MAX_BYTES: String(200 * MiB),
      LIPSYNC_UPLOAD_SWEEP_GRACE_SECONDS: '0',
    });
    assert.equal(set.workerUploadMaxBytes, 200 * MiB);
    assert.equal(set.uploadSweepGraceMs, 0);
    for (const [name, value] of [
      ['LIPSYNC_WORKER_UPLOAD_MAX_BYTES', '1000'],
      ['LIPSYNC_WORKER_UPLOAD_MAX_BYTES', '1e9'],
      ['LIPSYNC_UPLOAD_SWEEP_GRACE_SECONDS', '-1'],
      ['LIPSYNC_UPLOAD_SWEEP_GRACE_SECONDS', 'soon'],
    ] as const) {
      assert.equal(
        problems({ [name]: value }).filter((p) => p.startsWith(name)).length,
        1,
        `${name}=${value}`,
      );
    }
  });
});
