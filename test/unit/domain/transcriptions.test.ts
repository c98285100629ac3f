// The span a transcription processes (domain/transcriptions.ts): the requested window, clamped to the
// source, and never longer than MAX_WINDOW_MS whether or not endMs was given; the rules of a hand
// correction of its words.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  applyCorrections,
  checkCorrections,
  MAX_CORRECTION_CHARS,
  MAX_WINDOW_MS,
  transcriptionWindowEnd,
} from '../../../src/domain/transcriptions.js';
import { AppError } from '../../../src/domain/errors.js';

test('the processed span: the requested end, clamped to the source and to the longest window', () => {
  const hour = 60 * 60 * 1000;
  assert.equal(MAX_WINDOW_MS, hour);
  // endMs given: used, or clamped to the source.
  assert.equal(transcriptionWindowEnd(1000, 5000, 10_000), 5000);
  assert.equal(transcriptionWindowEnd(1000, 600_000, 10_000), 10_000);
  // No endMs: the source's end, but never more than an hour after the start.
  assert.equal(transcriptionWindowEnd(0, null, 10_000), 10_000);
  assert.equal(transcriptionWindowEnd(0, null, 5 * hour), hour);
  assert.equal(transcriptionWindowEnd(30_000, null, 5 * hour), 30_000 + hour);
  assert.equal(transcriptionWindowEnd(0, null, hour + 1), hour);
});

describe('hand corrections (PATCH /v2/transcriptions/{id})', () => {
  const transcript = {
    segments: [
      {
        id: 's1',
        words: [
          { id: 'w1', text: 'bob', startMs: 0, endMs: 300, speakerId: 'speaker_1' },
          { id: 'w2', text: 'bot', startMs: 300, endMs: 600, speakerId: 'speaker_1' },
        ],
      },
      { id: 's2', words: [{ id: 'w3', text: 'ahead', startMs: 900, endMs: 1300, speakerId: null }] },
    ],
  };
  const field = (f: () => unknown) => {
    try {
      f();
    } catch (err) {
      assert.ok(err instanceof AppError && err.code === 'invalid_request');
      return err.extras.field;
    }
    assert.fail('not refused');
  };

  test('known ids once, texts with a letter or digit and not too long; unchanged words left out', () => {
    assert.deepEqual(
      checkCorrections(transcript, [
        { id: 'w2', text: '  bought \n a ' },
        { id: 'w1', text: 'bob' },
      ]),
      [{ id: 'w2', text: 'bought a' }],
    );
    assert.deepEqual(checkCorrections(transcript, [{ id: 'w3', text: '42' }]), [{ id: 'w3', text: '42' }]);
    assert.equal(
      field(() => checkCorrections(transcript, [{ id: 'w9', text: 'x' }])),
      'words[0].id',
    );
    assert.equal(
      field(() =>
        checkCorrections(transcript, [
          { id: 'w1', text: 'rob' },
          { id: 'w1', text: 'robert' },
        ]),
      ),
      'words[1].id',
    );
    for (const text of ['', '   ', '?!'])
      assert.equal(
        field(() => checkCorrections(transcript, [{ id: 'w1', text }])),
        'words[0].text',
      );
    const long = 'a'.repeat(MAX_CORRECTION_CHARS + 1);
    assert.equal(
      field(() => checkCorrections(transcript, [{ id: 'w1', text: long }])),
      'words[0].text',
    );
  });

  test('applying keeps ids, times, speakers and segments', () => {
    const out = applyCorrections(transcript, [{ id: 'w2', text: 'bought' }]);
    assert.deepEqual(out, {
      segments: [
        {
          id: 's1',
          words: [transcript.segments[0].words[0], { ...transcript.segments[0].words[1], text: 'bought' }],
        },
        transcript.segments[1],
      ],
    });
    assert.equal(transcript.segments[0].words[1].text, 'bot');
  });
});
