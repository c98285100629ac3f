// normaliseGenerationRequest and normaliseOptions: models, inputs, segments (both shapes) and options.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { AppError } from '../../src/domain/errors.js';
import { MODELS } from '../../src/domain/models.js';
import {
  normaliseGenerationRequest,
  normaliseOptions,
  type GenerationRequestBody,
} from '../../src/domain/generation-request.js';

const VIDEO = { type: 'video', url: 'https://media.example.com/face.mp4' };
const AUDIO = { type: 'audio', assetId: 'a0e3c7b2-5a3e-4b8a-9d39-1c0f1f0b7a11' };

function body(over: Partial<GenerationRequestBody> = {}): GenerationRequestBody {
  return { model: 'lipsync-2', input: [VIDEO, AUDIO], ...over };
}

/** Asserts that fn throws an AppError with this code, status and (when given) field. */
function throwsApp(fn: () => unknown, code: string, status: number, field?: string): AppError {
  let caught: unknown;
  try {
    fn();
  } catch (err) {
    caught = err;
  }
  assert.ok(caught instanceof AppError, `expected AppError ${code}, got ${String(caught)}`);
  assert.equal(caught.code, code, caught.message);
  assert.equal(caught.status, status);
  if (field !== undefined) assert.equal(caught.extras.field, field, caught.message);
  return caught;
}

describe('models and inputs', () => {
  test('every listed model is accepted with a video and an audio input', () => {
    for (const m of MODELS) {
      const r = normaliseGenerationRequest(body({ model: m.id }));
      assert.equal(r.model, m.id);
      assert.deepEqual(r.video, { field: 'input[0]', url: VIDEO.url, assetId: undefined, refId: undefined });
      assert.deepEqual(r.audio, {
        field: 'input[1]',
        url: undefined,
        assetId: AUDIO.assetId,
        refId: undefined,
      });
      assert.equal(r.image, null);
      assert.deepEqual(r.segments, []);
    }
  });

  test('sync-3 takes an image instead of a video; other models refuse an image', () => {
    const image = { type: 'image', url: 'https://media.example.com/portrait.png' };
    const r = normaliseGenerationRequest(body({ model: 'sync-3', input: [AUDIO, image] }));
    assert.equal(r.video, null);
    assert.equal(r.image?.url, image.url);
    assert.equal(r.image?.field, 'input[1]');
    for (const m of MODELS.filter((x) => !x.acceptsImage)) {
      throwsApp(
        () => normaliseGenerationRequest(body({ model: m.id, input: [image, AUDIO] })),
        'unsupported_model',
        400,
        'model',
      );
    }
    throwsApp(
      () => normaliseGenerationRequest(body({ model: 'sync-3', input: [VIDEO, image, AUDIO] })),
      'invalid_request',
      400,
      'input',
    );
  });

  test('an unknown model is 400 unsupported_model on field model', () => {
    for (const model of ['lipsync-9', '', 'LIPSYNC-2', 'lipsync-2 ']) {
      throwsApp(() => normaliseGenerationRequest(body({ model })), 'unsupported_model', 400, 'model');
    }
  });

  test('text inputs follow the TTS rules; dubParams are checked; dialogueEdit rule 1', () => {
    throwsApp(
      () =>
        normaliseGenerationRequest(body({ input: [VIDEO, { type: 'text', provider: { script: 'Hello' } }] })),
      'invalid_request',
      400,
      'input[1].provider.voiceId',
    );
    throwsApp(
      () =>
        normaliseGenerationRequest(
          body({ input: [VIDEO, { type: 'text', provider: { voiceId: 'v', script: 'x'.repeat(5001) } }] }),
        ),
      'invalid_request',
      400,
      'input[1].provider.script',
    );
    const ok = normaliseGenerationRequest(
      body({
        input: [
          VIDEO,
          { type: 'text', refId: 'r', provider: { name: 'local', voiceId: 'slt-hts', script: ' Hi. ' } },
        ],
      }),
    );
    assert.equal(ok.text?.request.script, 'Hi.');
    assert.equal(ok.text?.request.provider, 'local');
    assert.equal(ok.audio.refId, 'r');
    // Rule 1: with dialogueEdit exactly one video input, no audio, segments or dubParams.
    const edit = normaliseGenerationRequest(body({ input: [VIDEO], dialogueEdit: { id: 'x' } }));
    assert.deepEqual(edit.dialogueEdit, { id: 'x' });
    assert.equal(edit.video?.url, VIDEO.url);
    const refused: [Partial<GenerationRequestBody>, string][] = [
      [{ input: [VIDEO, AUDIO] }, 'input[1]'],
      [{ input: [AUDIO] }, 'input[0]'],
      [{ input: [] }, 'input'],
      [{ input: [VIDEO], segments: [[0, 1]] }, 'segments'],
      [{ input: [{ ...VIDEO, segments_secs: [[0, 1]] }] }, 'input[0]'],
      [{ input: [VIDEO], dubParams: { targetLang: 'de' } }, 'dubParams'],
      [{ input: [VIDEO], dialogueEdit: {} }, 'dialogueEdit.id'],
    ];
    for (const [over, field] of refused)
      throwsApp(
        () => normaliseGenerationRequest(body({ dialogueEdit: { id: 'x' }, ...over })),
        'invalid_request',
        400,
        field,
      );
    throwsApp(
      () => normaliseGenerationRequest(body({ dubParams: { language: 'de' } })),
      'invalid_request',
      400,
      'dubParams.language',
    );
    throwsApp(
      () => normaliseGenerationRequest(body({ dubParams: { targetLang: 'es', provider: 'babel' } })),
      'dubbing_language_unsupported',
      422,
      'dubParams.provider',
    );
    throwsApp(
      () => normaliseGenerationRequest(body({ dubParams: { targetLang: 'es' }, segments: [{}] })),
      'invalid_request',
      400,
      'segments',
    );
    // With dubParams the video's own soundtrack is the source; audio items are ignored.
    const dub = normaliseGenerationRequest(
      body({ dubParams: { targetLang: 'ES', sourceLang: 'auto', numSpeakers: 2 } }),
    );
    assert.deepEqual(dub.dub, {
      targetLang: 'es',
      sourceLang: null,
      provider: 'local',
      voiceId: null,
      transcript: null,
    });
    assert.deepEqual(dub.audio.url, dub.video?.url);
    // null means "not given"
    assert.equal(
      normaliseGenerationRequest(body({ dialogueEdit: null, dubParams: null })).model,
      'lipsync-2',
    );
  });

  test('input shape errors are 400 with the field at fault', () => {
    const cases: [GenerationRequestBody['input'], string][] = [
      [[], 'input'],
      [undefined, 'input'],
      [[VIDEO], 'input'],
      [[AUDIO], 'input'],
      [[VIDEO, VIDEO, AUDIO], 'input[1]'],
      [[VIDEO, AUDIO, AUDIO], 'input[2]'],
      [[{ type: 'video' }, AUDIO], 'input[0]'],
      [[{ type: 'video', url: VIDEO.url, assetId: 'x' }, AUDIO], 'input[0]'],
      [[{ type: 'video', url: 'not a url' }, AUDIO], 'input[0].url'],
      [[{ type: 'video', url: 'ftp://example.com/a.mp4' }, AUDIO], 'input[0].url'],
      [[{ type: 'video', url: 'file:///etc/passwd' }, AUDIO], 'input[0].url'],
      [[VIDEO, { type: 'music', url: VIDEO.url }], 'input[1].type'],
    ];
    for (const [input, field] of cases) {
      throwsApp(() => normaliseGenerationRequest(body({ input })), 'invalid_request', 400, field);
    }
  });

  test('outputFileName, webhookUrl and projectId are passed through or refused', () => {
    const r = normaliseGenerationRequest(
      body({ outputFileName: '  my clip.mp4 ', webhookUrl: 'https://hooks.example.com/x', projectId: 'p1' }),
    );
    assert.equal(r.outputFileName, 'my clip.mp4');
    assert.equal(r.webhookUrl, 'https://hooks.example.com/x');
    assert.equal(r.projectId, 'p1');
    const empty = normaliseGenerationRequest(body({ outputFileName: '   ', webhookUrl: '', projectId: '' }));
    assert.equal(empty.outputFileName, null);
    assert.equal(empty.webhookUrl, null);
    assert.equal(empty.projectId, null);
    for (const name of ['a/b.mp4', 'a\\b.mp4', 'x'.repeat(201)]) {
      throwsApp(
        () => normaliseGenerationRequest(body({ outputFileName: name })),
        'invalid_request',
        400,
        'outputFileName',
      );
    }
    for (const url of ['ftp://x.example/hook', 'not a url', 'javascript:alert(1)']) {
      throwsApp(
        () => normaliseGenerationRequest(body({ webhookUrl: url })),
        'invalid_request',
        400,
        'webhookUrl',
      );
    }
  });
});

describe('segments', () => {
  const audioRef = { ...AUDIO, refId: 'voice' };

  test('the official client shape: startTime, endTime and audioInput {refId, startTime?, endTime?}', () => {
    const r = normaliseGenerationRequest(
      body({
        input: [VIDEO, audioRef],
        segments: [
          { startTime: 3, endTime: 4.5, audioInput: { refId: 'voice', startTime: 1, endTime: 2.5 } },
          { startTime: 0.5, endTime: 2, audioInput: { refId: 'voice' } },
          { startTime: 5, endTime: 6 },
        ],
      }),
    );
    assert.deepEqual(r.segments, [
      { unit: 'seconds', start: 3, end: 4.5, audioStart: 1, audioEnd: 2.5 },
      { unit: 'seconds', start: 0.5, end: 2, audioStart: undefined, audioEnd: undefined },
      { unit: 'seconds', start: 5, end: 6, audioStart: undefined, audioEnd: undefined },
    ]);
    assert.equal(r.audio.refId, 'voice');
  });

  test('pairs, and segments_secs / segments_frames on the video input', () => {
    const r = normaliseGenerationRequest(
      body({
        input: [{ ...VIDEO, segments_secs: [[1, 2]], segments_frames: [[75, 100]] }, AUDIO],
        segments: [[0, 0.5]],
      }),
    );
    assert.deepEqual(
      r.segments.map((s) => [s.unit, s.start, s.end]),
      [
        ['seconds', 0, 0.5],
        ['seconds', 1, 2],
        ['frames', 75, 100],
      ],
    );
  });

  test('invalid segments are 422 generation_segments_invalid naming the segment', () => {
    const cases: [Partial<GenerationRequestBody>, string][] = [
      [{ segments: [{ startTime: 2, endTime: 1 }] }, 'segments[0]'],
      [{ segments: [{ startTime: 1, endTime: 1 }] }, 'segments[0]'],
      [{ segments: [{ startTime: -1, endTime: 1 }] }, 'segments[0]'],
      [{ segments: [{ startTime: '0', endTime: 1 }] }, 'segments[0]'],
      [{ segments: [{ endTime: 1 }] }, 'segments[0]'],
      [{ segments: [null] }, 'segments[0]'],
      [{ segments: [[1, 2, 3]] }, 'segments[0]'],
      [{ segments: [[0, 1], { startTime: 0.5, endTime: 2 }] }, 'segments'],
      [
        { segments: [{ startTime: 0, endTime: 1, audioInput: { refId: 'other' } }] },
        'segments[0].audioInput.refId',
      ],
      [
        { segments: [{ startTime: 0, endTime: 1, audioInput: { refId: 'voice', startTime: 'x' } }] },
        'segments[0].audioInput.startTime',
      ],
      [
        { segments: [{ startTime: 0, endTime: 1, audioInput: { refId: 'voice', startTime: -1 } }] },
        'segments[0].audioInput.startTime',
      ],
      [
        {
          segments: [{ startTime: 0, endTime: 1, audioInput: { refId: 'voice', startTime: 2, endTime: 1 } }],
        },
        'segments[0].audioInput',
      ],
      [{ segments: [{ startTime: 0, endTime: 1, audioInput: 'voice' }] }, 'segments[0].audioInput'],
      [{ input: [{ ...VIDEO, segments_secs: [[3, 1]] }, audioRef] }, 'input[0].segments_secs[0]'],
      [{ input: [{ ...VIDEO, segments_secs: [[1]] }, audioRef] }, 'input[0].segments_secs[0]'],
      [{ input: [{ ...VIDEO, segments_frames: [[1.5, 4]] }, audioRef] }, 'input[0].segments_frames[0]'],
      [
        {
          input: [
            {
              ...VIDEO,
              segments_frames: [
                [10, 20],
                [15, 30],
              ],
            },
            audioRef,
          ],
        },
        'segments',
      ],
      [
        {
          input: [
            audioRef,
            {
              ...VIDEO,
              segments_secs: [
                [0, 1],
                [0.5, 2],
              ],
            },
          ],
        },
        'segments',
      ],
      [{ segments: Array.from({ length: 101 }, (_, i) => [i, i + 0.5]) }, 'segments'],
    ];
    for (const [over, field] of cases) {
      throwsApp(
        () => normaliseGenerationRequest(body({ input: [VIDEO, audioRef], ...over })),
        'generation_segments_invalid',
        422,
        field,
      );
    }
  });

  test('overlaps are found between segments of the same unit whatever lies between them', () => {
    // seconds 0-5 and 3-6 overlap; a frame segment sorts between them.
    throwsApp(
      () =>
        normaliseGenerationRequest(
          body({
            input: [{ ...VIDEO, segments_frames: [[1, 2]] }, audioRef],
            segments: [
              [0, 5],
              [3, 6],
            ],
          }),
        ),
      'generation_segments_invalid',
      422,
      'segments',
    );
    // Touching segments do not overlap.
    assert.equal(
      normaliseGenerationRequest(
        body({
          segments: [
            [0, 1],
            [1, 2],
          ],
        }),
      ).segments.length,
      2,
    );
  });

  test('segments need a video input', () => {
    throwsApp(
      () =>
        normaliseGenerationRequest(
          body({ model: 'sync-3', input: [{ type: 'image', url: VIDEO.url }, AUDIO], segments: [[0, 1]] }),
        ),
      'generation_segments_invalid',
      422,
      'segments',
    );
  });
});

describe('options', () => {
  test('defaults', () => {
    assert.deepEqual(normaliseOptions(undefined, 'lipsync-2'), {
      pads: null,
      speedup: 1,
      temperature: 0.5,
      outputFormat: 'mp4',
      syncMode: 'cut_off',
      fps: null,
      outputResolution: null,
      activeSpeaker: null,
    });
    assert.deepEqual(normaliseOptions(null, 'lipsync-2'), normaliseOptions({}, 'lipsync-2'));
  });

  test('valid values are kept', () => {
    const o = normaliseOptions(
      {
        pads: [0, 10, 0, 1000],
        speedup: 4,
        temperature: 0.9,
        output_format: 'mov',
        sync_mode: 'remap',
        fps: 29.97,
        output_resolution: [1280, 720],
        active_speaker: true,
        unknown_option: 'kept but ignored',
      },
      'lipsync-2',
    );
    assert.deepEqual(o, {
      pads: [0, 10, 0, 1000],
      speedup: 4,
      temperature: 0.9,
      outputFormat: 'mov',
      syncMode: 'remap',
      fps: 29.97,
      outputResolution: [1280, 720],
      activeSpeaker: { autoDetect: true },
    });
    for (const mode of ['bounce', 'loop', 'cut_off', 'silence', 'remap']) {
      assert.equal(normaliseOptions({ sync_mode: mode }, 'lipsync-2').syncMode, mode);
    }
  });

  test('temperature applies to the lipsync-2 family and sync-3 only', () => {
    assert.equal(normaliseOptions({ temperature: 0.1 }, 'lipsync-2').temperature, 0.1);
    assert.equal(normaliseOptions({ temperature: 0.1 }, 'lipsync-2-pro').temperature, 0.1);
    assert.equal(normaliseOptions({ temperature: 0.1 }, 'sync-3').temperature, 0.1);
    for (const m of ['lipsync-1.9.0-beta', 'lipsync-1.8.0', 'lipsync-1.7.1', 'lipsync-1.6.0']) {
      assert.equal(normaliseOptions({ temperature: 0.1 }, m).temperature, 0.5, m);
    }
  });

  test('active_speaker_detection (the official client shape)', () => {
    const o = normaliseOptions(
      {
        active_speaker_detection: {
          auto_detect: false,
          frame_number: 12,
          coordinates: [100, 200],
          bounding_boxes: [[0, 0, 10, 10], null, [1, 2, 3, 4]],
        },
      },
      'lipsync-2',
    );
    assert.deepEqual(o.activeSpeaker, {
      autoDetect: false,
      frameNumber: 12,
      coordinates: [100, 200],
      boundingBoxes: [[0, 0, 10, 10], null, [1, 2, 3, 4]],
    });
    assert.equal(normaliseOptions({ active_speaker: false }, 'lipsync-2').activeSpeaker, null);
  });

  test('invalid options are 400 naming the option', () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ pads: [0, 0, 0] }, 'options.pads'],
      [{ pads: [0, 0, 0, -1] }, 'options.pads'],
      [{ pads: [0, 0, 0, 1001] }, 'options.pads'],
      [{ pads: 'none' }, 'options.pads'],
      [{ speedup: 0 }, 'options.speedup'],
      [{ speedup: 5 }, 'options.speedup'],
      [{ speedup: 1.5 }, 'options.speedup'],
      [{ speedup: '2' }, 'options.speedup'],
      [{ temperature: -0.1 }, 'options.temperature'],
      [{ temperature: 1.01 }, 'options.temperature'],
      [{ temperature: 'hot' }, 'options.temperature'],
      [{ output_format: 'webm' }, 'options.output_format'],
      [{ output_format: 'MP4' }, 'options.output_format'],
      [{ sync_mode: 'stretch' }, 'options.sync_mode'],
      [{ sync_mode: '' }, 'options.sync_mode'],
      [{ fps: 0 }, 'options.fps'],
      [{ fps: 121 }, 'options.fps'],
      [{ fps: 'fast' }, 'options.fps'],
      [{ output_resolution: [1280] }, 'options.output_resolution'],
      [{ output_resolution: [1280, 720.5] }, 'options.output_resolution'],
      [{ output_resolution: [8, 720] }, 'options.output_resolution'],
      [{ output_resolution: [7681, 720] }, 'options.output_resolution'],
      [{ output_resolution: '1280x720' }, 'options.output_resolution'],
      [{ active_speaker_detection: 'auto' }, 'options.active_speaker_detection'],
      [{ active_speaker_detection: { coordinates: [1] } }, 'options.active_speaker_detection.coordinates'],
      [
        { active_speaker_detection: { bounding_boxes: [[0, 0, 1]] } },
        'options.active_speaker_detection.bounding_boxes',
      ],
      [{ active_speaker_detection: { frame_number: -1 } }, 'options.active_speaker_detection.frame_number'],
      [{ active_speaker_detection: { frame_number: 2.5 } }, 'options.active_speaker_detection.frame_number'],
    ];
    for (const [raw, field] of cases) {
      throwsApp(() => normaliseOptions(raw, 'lipsync-2'), 'invalid_request', 400, field);
      // and through the whole request
      throwsApp(() => normaliseGenerationRequest(body({ options: raw })), 'invalid_request', 400, field);
    }
  });
});
