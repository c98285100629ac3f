// The preview rules: options.preview read, the window of the full output it renders, the refusals.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../../src/domain/errors.js';
import { normalisePreview, previewWindow } from '../../../src/domain/preview.js';
import { normaliseGenerationRequest } from '../../../src/domain/generation-request.js';

const code = (fn: () => unknown): [string, number, unknown] => {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof AppError, String(err));
    return [err.code, err.status, err.extras.field];
  }
  assert.fail('no error');
};

describe('preview rules', () => {
  test('options.preview: absent or null is a full run; atMs must be an integer >= 0', () => {
    assert.equal(normalisePreview(undefined), null);
    assert.equal(normalisePreview(null), null);
    assert.deepEqual(normalisePreview({ atMs: 0 }), { atMs: 0 });
    for (const bad of [{}, { atMs: -1 }, { atMs: 1.5 }, { atMs: '500' }, [500], 500])
      assert.deepEqual(
        code(() => normalisePreview(bad)),
        ['invalid_request', 400, 'options.preview.atMs'],
      );
  });

  test('the window: from the frame shown at atMs for one second, cut at the end of the output', () => {
    assert.deepEqual(previewWindow(500, 50, 25), {
      firstFrame: 12,
      frameCount: 25,
      startSeconds: 0.48,
      durationSeconds: 1,
    });
    // A time written from a frame number lands on that frame (30000/1001 fps, frame 30 at 1001 ms).
    assert.equal(previewWindow(1001, 300, 30000 / 1001).firstFrame, 30);
    assert.deepEqual(previewWindow(1600, 50, 25), {
      firstFrame: 40,
      frameCount: 10,
      startSeconds: 1.6,
      durationSeconds: 0.4,
    });
    assert.equal(previewWindow(1960, 50, 25).frameCount, 1);
    assert.deepEqual(
      code(() => previewWindow(2000, 50, 25)),
      ['generation_preview_out_of_range', 400, 'options.preview.atMs'],
    );
  });

  test('a request: the preview is kept with the options; a dub or a dialogue edit cannot be previewed', () => {
    const input = [
      { type: 'video', url: 'https://media.example.com/face.mp4' },
      { type: 'audio', url: 'https://media.example.com/voice.wav' },
    ];
    const r = normaliseGenerationRequest({ model: 'lipsync-2', input, options: { preview: { atMs: 250 } } });
    assert.deepEqual(r.options.preview, { atMs: 250 });
    assert.equal(normaliseGenerationRequest({ model: 'lipsync-2', input }).options.preview, undefined);
    assert.deepEqual(
      code(() =>
        normaliseGenerationRequest({
          model: 'lipsync-2',
          input: [input[0]!],
          dubParams: { targetLang: 'es' },
          options: { preview: { atMs: 0 } },
        }),
      ),
      ['invalid_request', 400, 'options.preview'],
    );
    assert.deepEqual(
      code(() =>
        normaliseGenerationRequest({
          model: 'lipsync-2',
          input: [input[0]!],
          dialogueEdit: { id: 'x' },
          options: { preview: { atMs: 0 } },
        }),
      ),
      ['invalid_request', 400, 'options.preview'],
    );
  });
});
