// Re-dubbing's pure rules (src/domain/redub.ts, dubParams.basedOn in src/domain/dub.ts): what a
// re-dub may ask, which earlier generations qualify, the corrections checked against the earlier
// transcript, the new timing plan (corrected segments fitted again, the rest kept as they were) and
// the reused segments' words and phones.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { normaliseDubParams, type DubRecord, type DubSegment } from '../../src/domain/dub.js';
import { fitSegment } from '../../src/domain/dub-timing.js';
import {
  appendKeptTimeline,
  changedVoices,
  checkEdits,
  maxRedubTextChars,
  redubBase,
  replanRedub,
  respoken,
} from '../../src/domain/redub.js';
import type { DubbedGeneration } from '../../src/domain/dub-reads.js';
import type { GenerationStatus } from '../../src/domain/generation-status.js';
import { refusalOf } from '../helpers/refusal.js';

function seg(id: string, startMs: number, endMs: number, dubEndMs = endMs, stretch = 1): DubSegment {
  return {
    id,
    startMs,
    endMs,
    speaker: 'speaker_1',
    sourceText: `source ${id}`,
    translatedText: `texto ${id}`,
    dubStartMs: startMs,
    dubEndMs,
    stretch,
    fits: true,
    confidence: null,
  };
}

function record(segments: DubSegment[]): DubRecord {
  return {
    sourceLang: 'en',
    targetLang: 'es',
    provider: 'local',
    route: { via: null, quality: 'direct' },
    transcriptSource: 'given',
    voices: [{ speaker: 'speaker_1', provider: 'local', voiceId: 'espeak-es', name: 'es', matched: true }],
    segments,
    timeline: {
      words: segments.map((s) => ({ text: s.translatedText, startMs: s.dubStartMs, endMs: s.dubEndMs })),
      phonemes: segments.flatMap((s, i) => [
        { phone: 'sil', startMs: s.dubStartMs, endMs: s.dubStartMs + 10 },
        { phone: 'aa', startMs: s.dubStartMs + 10, endMs: s.dubEndMs, word: i },
      ]),
    },
    kept: {
      clips: segments.map((s, i) => ({
        id: s.id,
        key: `jobs/j/t/dub-${s.id}.wav`,
        words: [i, i + 1],
        phonemes: [2 * i, 2 * i + 2],
      })),
      speakers: [{ speaker: 'speaker_1', providerVoiceId: 'espeak-es', profile: null }],
    },
  };
}

const THREE = record([seg('s1', 1000, 2000, 2100), seg('s2', 3000, 4000, 3900, 0.9), seg('s3', 5000, 6000)]);

function generation(status: GenerationStatus, dub: DubRecord | null, asked = true): DubbedGeneration {
  return { id: 'g', status, dub, resolvedInput: asked ? { request: { dub: { targetLang: 'es' } } } : {} };
}

describe('dubParams.basedOn', () => {
  const id = '7d1c3c55-59e4-4f6c-9d1f-3f7f3ad1c0de';

  it('takes the earlier dub and the corrections; the languages come from the earlier dub', () => {
    const d = normaliseDubParams({ basedOn: id, segments: [{ id: 's2', translatedText: '  Hola.  ' }] });
    assert.deepEqual(d.basedOn, { generationId: id, segments: [{ id: 's2', translatedText: 'Hola.' }] });
    assert.equal(d.targetLang, '');
    const timed = normaliseDubParams({
      basedOn: id,
      targetLang: 'ES',
      segments: [{ id: 's1', startMs: 100.4, endMs: 900 }],
    });
    assert.equal(timed.targetLang, 'es');
    assert.deepEqual(timed.basedOn?.segments, [{ id: 's1', startMs: 100, endMs: 900 }]);
  });

  it('refuses what a re-dub cannot change, empty or duplicate corrections, and segments alone', () => {
    const cases: [unknown, string][] = [
      [
        { basedOn: id, provider: 'deepl', segments: [{ id: 's1', translatedText: 'x' }] },
        'dubParams.provider',
      ],
      [
        { basedOn: id, transcript: 'Hi.', segments: [{ id: 's1', translatedText: 'x' }] },
        'dubParams.transcript',
      ],
      [{ basedOn: 5, segments: [{ id: 's1', translatedText: 'x' }] }, 'dubParams.basedOn'],
      [{ basedOn: id, segments: [] }, 'dubParams.segments'],
      [{ basedOn: id }, 'dubParams.segments'],
      [
        { basedOn: id, segments: [{ id: 's1', translatedText: '  ' }] },
        'dubParams.segments[0].translatedText',
      ],
      [
        { basedOn: id, segments: [{ id: 's1', translatedText: '?!' }] },
        'dubParams.segments[0].translatedText',
      ],
      [{ basedOn: id, segments: [{ id: 's1' }] }, 'dubParams.segments[0]'],
      [{ basedOn: id, segments: [{ id: '', translatedText: 'x' }] }, 'dubParams.segments[0].id'],
      [{ basedOn: id, segments: [{ id: 's1', text: 'x' }] }, 'dubParams.segments[0].text'],
      [{ basedOn: id, segments: [{ id: 's1', startMs: 5 }] }, 'dubParams.segments[0].endMs'],
      [{ basedOn: id, segments: [{ id: 's1', startMs: 500, endMs: 400 }] }, 'dubParams.segments[0].endMs'],
      [
        {
          basedOn: id,
          segments: [
            { id: 's1', translatedText: 'a' },
            { id: 's1', translatedText: 'b' },
          ],
        },
        'dubParams.segments[1].id',
      ],
      [{ targetLang: 'es', segments: [{ id: 's1', translatedText: 'x' }] }, 'dubParams.segments'],
    ];
    for (const [params, field] of cases) {
      const r = refusalOf(() => normaliseDubParams(params));
      assert.deepEqual(r, { code: 'invalid_request', field, status: 400 }, JSON.stringify(params));
    }
  });
});

describe('dubParams.voices', () => {
  const id = '7d1c3c55-59e4-4f6c-9d1f-3f7f3ad1c0de';

  it('names a voice per speaker on a dub and on a re-dub (where corrections are then optional)', () => {
    const d = normaliseDubParams({ targetLang: 'es', voices: { speaker_2: ' espeak-es1 ' } });
    assert.deepEqual(d.voices, { speaker_2: 'espeak-es1' });
    assert.equal(d.voiceId, null);
    assert.equal(normaliseDubParams({ targetLang: 'es' }).voices, undefined);
    const r = normaliseDubParams({ basedOn: id, voices: { speaker_1: 'espeak-es1' } });
    assert.deepEqual(r.basedOn, { generationId: id, segments: [], voices: { speaker_1: 'espeak-es1' } });
  });

  it('refuses both voiceId and voices, and malformed entries', () => {
    const cases: [unknown, string][] = [
      [{ targetLang: 'es', voiceId: 'a', voices: { speaker_1: 'b' } }, 'dubParams.voices'],
      [{ targetLang: 'es', voices: ['espeak-es1'] }, 'dubParams.voices'],
      [{ targetLang: 'es', voices: {} }, 'dubParams.voices'],
      [{ targetLang: 'es', voices: { 'a b': 'x' } }, 'dubParams.voices'],
      [{ targetLang: 'es', voices: JSON.parse('{"__proto__": "espeak-es1"}') }, 'dubParams.voices'],
      [{ targetLang: 'es', voices: { constructor: 'espeak-es1' } }, 'dubParams.voices'],
      [{ targetLang: 'es', voices: { speaker_1: ' ' } }, 'dubParams.voices.speaker_1'],
      [{ basedOn: id, voices: { speaker_1: 7 } }, 'dubParams.voices.speaker_1'],
      [{ basedOn: id, voices: null }, 'dubParams.segments'],
    ];
    for (const [params, field] of cases) {
      const r = refusalOf(() => normaliseDubParams(params));
      assert.deepEqual(r, { code: 'invalid_request', field, status: 400 }, JSON.stringify(params));
    }
  });

  const TWO: DubRecord = {
    ...THREE,
    voices: [
      ...THREE.voices,
      { speaker: 'speaker_2', provider: 'local', voiceId: 'espeak-es1', name: 'es1', matched: false },
    ],
    segments: THREE.segments.map((s) => (s.id === 's2' ? { ...s, speaker: 'speaker_2' } : s)),
  };

  it('keeps only the speakers whose voice changes; an unknown speaker is refused', () => {
    assert.deepEqual(changedVoices(TWO, { speaker_1: 'espeak-es1', speaker_2: 'espeak-es1' }), {
      speaker_1: 'espeak-es1',
    });
    assert.deepEqual(changedVoices(TWO, { speaker_2: 'espeak-es1' }), {});
    const r = refusalOf(() => changedVoices(TWO, { speaker_3: 'espeak-es1' }));
    assert.deepEqual(r, { code: 'invalid_request', field: 'dubParams.voices.speaker_3', status: 400 });
  });

  it("re-speaks exactly a revoiced speaker's segments, with any corrections kept", () => {
    const edits = checkEdits(TWO, [{ id: 's3', translatedText: 'Hola.' }], 10_000);
    const again = respoken(TWO, edits, ['speaker_2']);
    assert.deepEqual([...again.keys()].sort(), ['s2', 's3']);
    assert.deepEqual(again.get('s2'), { id: 's2' });
    assert.deepEqual(again.get('s3'), { id: 's3', translatedText: 'Hola.' });
    const revoiced1 = respoken(TWO, new Map(), ['speaker_1']);
    assert.deepEqual([...revoiced1.keys()], ['s1', 's3']);
    // Re-spoken segments are fitted again; the other speaker's keeps its plan.
    const plan = replanRedub(
      TWO,
      revoiced1,
      new Map([
        ['s1', 800],
        ['s3', 900],
      ]),
      10_000,
    );
    assert.deepEqual(plan.segments[1], TWO.segments[1]);
    assert.equal(plan.segments[0].translatedText, TWO.segments[0].translatedText);
  });
});

describe('redubBase', () => {
  it('takes a completed dub that kept its segment audio', () => {
    assert.equal(redubBase(generation('COMPLETED', THREE)).kept.clips.length, 3);
  });

  it('refuses an unknown, undubbed, unfinished or failed generation, and a dub without kept audio', () => {
    const { kept: _kept, ...old } = THREE;
    const cases: [DubbedGeneration | null, string, number][] = [
      [null, 'generation_not_found', 404],
      [generation('COMPLETED', null, false), 'generation_not_dubbed', 422],
      [generation('PROCESSING', null), 'generation_not_ready', 409],
      [generation('PENDING', null), 'generation_not_ready', 409],
      [generation('FAILED', null), 'generation_not_downloadable', 422],
      [generation('COMPLETED', old), 'generation_output_unavailable', 422],
    ];
    for (const [g, code, status] of cases)
      assert.deepEqual(
        refusalOf(() => redubBase(g)),
        { code, field: 'dubParams.basedOn', status },
        code,
      );
  });
});

describe('checkEdits', () => {
  it('knows every corrected id and keeps the segments in time order', () => {
    const ok = checkEdits(THREE, [{ id: 's2', translatedText: 'x', startMs: 2500, endMs: 4200 }], 8000);
    assert.deepEqual([...ok.keys()], ['s2']);
    assert.deepEqual(
      refusalOf(() =>
        checkEdits(
          THREE,
          [
            { id: 's1', translatedText: 'x' },
            { id: 's9', translatedText: 'y' },
          ],
          8000,
        ),
      ),
      {
        code: 'invalid_request',
        field: 'dubParams.segments[1].id',
        status: 400,
      },
    );
    assert.equal(
      refusalOf(() => checkEdits(THREE, [{ id: 's2', startMs: 5500, endMs: 5900 }], 8000)).field,
      'dubParams.segments[0].startMs',
    );
    assert.equal(
      refusalOf(() => checkEdits(THREE, [{ id: 's2', startMs: 500, endMs: 900 }], 8000)).field,
      'dubParams.segments[0].startMs',
    );
  });
  it('a corrected span must end within the earlier video: its length bounds the mix and the price', () => {
    const at = (startMs: number, endMs: number) =>
      refusalOf(() => checkEdits(THREE, [{ id: 's3', startMs, endMs }], 8000));
    assert.deepEqual(at(86_399_000, 86_400_000), {
      code: 'invalid_request',
      field: 'dubParams.segments[0].startMs',
      status: 400,
    });
    assert.equal(at(5000, 8001).field, 'dubParams.segments[0].endMs');
    assert.equal(at(8000, 9000).field, 'dubParams.segments[0].startMs');
    assert.deepEqual([...checkEdits(THREE, [{ id: 's3', startMs: 5000, endMs: 8000 }], 8000).keys()], ['s3']);
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 86_399_999 }),
        fc.integer({ min: 1, max: 86_400_000 }),
        (a, b) => {
          const e = { id: 's3', startMs: Math.min(a, b - 1), endMs: b };
          let ok = true;
          try {
            checkEdits(THREE, [e], 8000);
          } catch {
            ok = false;
          }
          if (ok) assert.ok(e.endMs <= 8000, JSON.stringify(e));
        },
      ),
    );
  });

  it('a corrected text is bounded by its room: 30 characters a second up to the next segment, plus 20', () => {
    assert.equal(maxRedubTextChars(0), 20);
    assert.equal(maxRedubTextChars(1000), 50);
    assert.equal(maxRedubTextChars(2000), 80);
    // s2 has 3000-5000 ms (up to s3's start): 80 characters.
    assert.equal(checkEdits(THREE, [{ id: 's2', translatedText: 'a'.repeat(80) }], 8000).size, 1);
    assert.deepEqual(
      refusalOf(() => checkEdits(THREE, [{ id: 's2', translatedText: 'a'.repeat(81) }], 8000)),
      {
        code: 'invalid_request',
        field: 'dubParams.segments[0].translatedText',
        status: 400,
      },
    );
    // Characters, not UTF-16 units: 80 emoji fit as well as 80 letters.
    assert.equal(checkEdits(THREE, [{ id: 's2', translatedText: `a${'😀'.repeat(79)}` }], 8000).size, 1);
    // The last segment's room runs to the end of the video (5000-8000 ms: 110).
    assert.equal(checkEdits(THREE, [{ id: 's3', translatedText: 'a'.repeat(110) }], 8000).size, 1);
    assert.equal(
      refusalOf(() => checkEdits(THREE, [{ id: 's3', translatedText: 'a'.repeat(111) }], 8000)).field,
      'dubParams.segments[0].translatedText',
    );
    // The room is measured after the corrections: s3 moved to 4000 ms leaves s2 1000 ms, 50 characters.
    assert.equal(
      refusalOf(() =>
        checkEdits(
          THREE,
          [
            { id: 's3', startMs: 4000, endMs: 6000 },
            { id: 's2', translatedText: 'a'.repeat(51) },
          ],
          8000,
        ),
      ).field,
      'dubParams.segments[1].translatedText',
    );
  });
});

describe('replanRedub', () => {
  it('fits a corrected segment again and keeps every other segment exactly where it was', () => {
    const edits = checkEdits(THREE, [{ id: 's2', translatedText: 'una frase mucho más larga' }], 8000);
    const { segments, plans } = replanRedub(THREE, edits, new Map([['s2', 2000]]), 8000);
    assert.deepEqual(plans[1], fitSegment({ startMs: 3000, endMs: 4000, nextStartMs: 5000, speechMs: 2000 }));
    assert.equal(segments[1].translatedText, 'una frase mucho más larga');
    assert.equal(segments[1].stretch, 0.8);
    assert.equal(segments[1].dubEndMs, 3000 + 1600);
    for (const i of [0, 2]) {
      const { fits: _f, ...was } = THREE.segments[i];
      const { fits: _g, ...now } = segments[i];
      assert.deepEqual(now, was);
      assert.equal(plans[i].stretch, THREE.segments[i].stretch);
    }
  });

  it('a moved span moves the room of the segment before it: its fit is measured again, its audio kept', () => {
    const edits = checkEdits(THREE, [{ id: 's2', startMs: 2050, endMs: 2900 }], 8000);
    const { segments } = replanRedub(THREE, edits, new Map([['s2', 850]]), 8000);
    assert.equal(segments[0].dubEndMs, 2100);
    assert.equal(segments[0].fits, false, 's1 now runs over the start of s2');
    assert.equal(segments[1].dubStartMs, 2050);
    assert.equal(segments[1].stretch, 1);
    assert.equal(segments[1].translatedText, 'texto s2', 'a timing correction speaks the same text');
  });

  it('kept segments are never changed, whatever is corrected (property)', () => {
    fc.assert(
      fc.property(
        fc.subarray(['s1', 's2', 's3'], { minLength: 1 }),
        fc.integer({ min: 1, max: 5000 }),
        (ids, ms) => {
          const edits = checkEdits(
            THREE,
            ids.map((id) => ({ id, translatedText: 'x' })),
            8000,
          );
          const { segments } = replanRedub(THREE, edits, new Map(ids.map((id) => [id, ms])), 8000);
          for (const [i, s] of segments.entries()) {
            if (ids.includes(s.id)) continue;
            assert.equal(s.dubStartMs, THREE.segments[i].dubStartMs);
            assert.equal(s.dubEndMs, THREE.segments[i].dubEndMs);
            assert.equal(s.stretch, THREE.segments[i].stretch);
          }
        },
      ),
    );
  });

  it('a corrected segment not spoken again is an internal error, not a silent reuse', () => {
    const edits = checkEdits(THREE, [{ id: 's1', translatedText: 'x' }], 8000);
    assert.throws(() => replanRedub(THREE, edits, new Map(), 8000), /not spoken again/);
  });
});

describe('appendKeptTimeline', () => {
  it('copies a reused segment’s words and phones, its phones pointing at its words where they now sit', () => {
    const into = {
      words: [{ text: 'nuevo', startMs: 0, endMs: 10 }],
      phonemes: [] as never[],
    } as NonNullable<DubRecord['timeline']>;
    const from = THREE.timeline!;
    appendKeptTimeline(into, from, THREE.kept!.clips[2]);
    assert.deepEqual(into.words[1], from.words[2]);
    assert.deepEqual(into.phonemes, [
      { phone: 'sil', startMs: 5000, endMs: 5010 },
      { phone: 'aa', startMs: 5010, endMs: 6000, word: 1 },
    ]);
  });
});
