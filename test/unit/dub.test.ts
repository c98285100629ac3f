// Dubbing's pure rules (src/domain/dub.ts): what dubParams may say, sentences split per speaker, the
// stored dub's summary, and its subtitles byte for byte; and which generations have a transcript to
// read (src/domain/dub-reads.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { AppError } from '../../src/domain/errors.js';
import {
  dubSourceLang,
  MAX_DUB_TRANSCRIPT_CHARS,
  dubSummary,
  normaliseDubParams,
  renderSubtitles,
  sentencesOf,
  wrapCaption,
  type DubRecord,
  type DubSegment,
  type SourceWord,
} from '../../src/domain/dub.js';
import { completedDub, subtitlesFileName } from '../../src/domain/dub-reads.js';
import type { GenerationStatus } from '../../src/domain/generation-status.js';
import { refusalOf } from '../helpers/refusal.js';

describe('normaliseDubParams', () => {
  it('fills the defaults and lower-cases the languages', () => {
    assert.deepEqual(normaliseDubParams({ targetLang: ' ES ' }), {
      targetLang: 'es',
      sourceLang: null,
      provider: 'local',
      voiceId: null,
      transcript: null,
    });
    assert.deepEqual(
      normaliseDubParams({
        targetLang: 'pt-BR',
        sourceLang: 'EN',
        provider: ' DeepL ',
        voiceId: ' v1 ',
        transcript: '  Hello there.  ',
        numSpeakers: 2,
      }),
      { targetLang: 'pt-br', sourceLang: 'en', provider: 'deepl', voiceId: 'v1', transcript: 'Hello there.' },
    );
  });

  it('reads sourceLang "auto" (any case) and null as unknown, and null optionals as absent', () => {
    for (const sourceLang of ['auto', 'AUTO', ' Auto ', null])
      assert.equal(normaliseDubParams({ targetLang: 'es', sourceLang }).sourceLang, null);
    const n = normaliseDubParams({
      targetLang: 'es',
      provider: null,
      voiceId: null,
      transcript: null,
      numSpeakers: null,
    });
    assert.equal(n.provider, 'local');
    assert.equal(n.voiceId, null);
    assert.equal(n.transcript, null);
  });

  it('refuses what is not an object, unknown keys and malformed languages, naming the field', () => {
    for (const raw of [null, 'es', 5, ['es']])
      assert.deepEqual(
        refusalOf(() => normaliseDubParams(raw)),
        {
          code: 'invalid_request',
          field: 'dubParams',
          status: 400,
        },
      );
    assert.equal(
      refusalOf(() => normaliseDubParams({ targetLang: 'es', voice: 'x' })).field,
      'dubParams.voice',
    );
    for (const targetLang of [undefined, '', 'e', 'english', 'es_ES', 5, 'es-', 'es-toolongsubtag'])
      assert.equal(
        refusalOf(() => normaliseDubParams({ targetLang })).field,
        'dubParams.targetLang',
        `${targetLang}`,
      );
    for (const sourceLang of [5, '', 'english', 'e n'])
      assert.equal(
        refusalOf(() => normaliseDubParams({ targetLang: 'es', sourceLang })).field,
        'dubParams.sourceLang',
        `${sourceLang}`,
      );
  });

  it('numSpeakers is ignored but must still be an integer from 0 to 32', () => {
    for (const numSpeakers of [0, 1, 32]) normaliseDubParams({ targetLang: 'es', numSpeakers });
    for (const numSpeakers of [-1, 33, 1.5, '2'])
      assert.equal(
        refusalOf(() => normaliseDubParams({ targetLang: 'es', numSpeakers })).field,
        'dubParams.numSpeakers',
      );
  });

  it('an unknown provider is 422 dubbing_language_unsupported listing the providers', () => {
    for (const provider of ['google', 5, '']) {
      try {
        normaliseDubParams({ targetLang: 'es', provider });
        assert.fail('accepted');
      } catch (err) {
        assert.ok(err instanceof AppError);
        assert.equal(err.code, 'dubbing_language_unsupported');
        assert.equal(err.status, 422);
        assert.equal(err.extras.field, 'dubParams.provider');
        assert.deepEqual(err.extras.details, { supported: { providers: ['local', 'openai', 'deepl'] } });
      }
    }
  });

  it('voiceId and transcript need content, within their limits', () => {
    for (const voiceId of ['', '   ', 5, 'v'.repeat(201)])
      assert.equal(
        refusalOf(() => normaliseDubParams({ targetLang: 'es', voiceId })).field,
        'dubParams.voiceId',
      );
    assert.equal(normaliseDubParams({ targetLang: 'es', voiceId: 'v'.repeat(200) }).voiceId, 'v'.repeat(200));
    for (const transcript of [5, '', ' ... !? ', 'x'.repeat(MAX_DUB_TRANSCRIPT_CHARS + 1)])
      assert.equal(
        refusalOf(() => normaliseDubParams({ targetLang: 'es', transcript })).field,
        'dubParams.transcript',
      );
    // The limit counts the trimmed text; numbers are words.
    const padded = ` ${'x'.repeat(MAX_DUB_TRANSCRIPT_CHARS)} `;
    assert.equal(
      normaliseDubParams({ targetLang: 'es', transcript: padded }).transcript?.length,
      MAX_DUB_TRANSCRIPT_CHARS,
    );
    assert.equal(normaliseDubParams({ targetLang: 'es', transcript: '42' }).transcript, '42');
  });
});

const w = (
  text: string,
  startMs: number,
  endMs: number,
  speaker: string | null,
  confidence?: number,
): SourceWord => ({
  text,
  startMs,
  endMs,
  speaker,
  ...(confidence === undefined ? {} : { confidence }),
});

describe('sentencesOf', () => {
  it('splits a segment wherever the speaker changes, numbering sentences across segments', () => {
    const s = sentencesOf([
      [w('Hi', 0, 300, 'a', 0.9), w('there', 300, 700, 'a', 0.8), w('Hello', 800, 1200, 'b', 0.5)],
      [w('Bye', 2000, 2400, 'b'), w('now', 2400, 2600, 'a', 0.7), w('then', 2600, 2900, 'b')],
    ]);
    assert.deepEqual(s, [
      { id: 's1', startMs: 0, endMs: 700, speaker: 'a', text: 'Hi there', confidence: 0.85 },
      { id: 's2', startMs: 800, endMs: 1200, speaker: 'b', text: 'Hello', confidence: 0.5 },
      { id: 's3', startMs: 2000, endMs: 2400, speaker: 'b', text: 'Bye', confidence: null },
      { id: 's4', startMs: 2400, endMs: 2600, speaker: 'a', text: 'now', confidence: 0.7 },
      { id: 's5', startMs: 2600, endMs: 2900, speaker: 'b', text: 'then', confidence: null },
    ]);
  });

  it('an unknown speaker is speaker_1 (the same as a named speaker_1), and the end is the latest word end', () => {
    const s = sentencesOf([
      [w('one', 0, 900, null), w('two', 500, 800, 'speaker_1'), w('three', 900, 1000, null)],
    ]);
    assert.deepEqual(s, [
      { id: 's1', startMs: 0, endMs: 1000, speaker: 'speaker_1', text: 'one two three', confidence: null },
    ]);
  });

  it('empty segments give no sentence; the mean confidence is rounded to 3 places', () => {
    assert.deepEqual(sentencesOf([]), []);
    assert.deepEqual(sentencesOf([[], []]), []);
    const [s] = sentencesOf([[w('a', 0, 1, 'x', 0.1), w('b', 1, 2, 'x', 0.2), w('c', 2, 3, 'x', 0.2)]]);
    assert.equal(s.confidence, 0.167);
  });

  it('every word lands in exactly one sentence, and each sentence is one speaker (property)', () => {
    const word = fc.record({
      text: fc.stringMatching(/^[a-z]{1,6}$/),
      startMs: fc.nat(10_000),
      len: fc.nat(1000),
      speaker: fc.constantFrom('a', 'b', null),
    });
    fc.assert(
      fc.property(fc.array(fc.array(word, { maxLength: 8 }), { maxLength: 5 }), (segs) => {
        const segments = segs.map((seg) =>
          seg.map((x) => w(x.text, x.startMs, x.startMs + x.len, x.speaker)),
        );
        const out = sentencesOf(segments);
        const words = segments.flat();
        assert.equal(
          out.map((s) => s.text.split(' ').length).reduce((a, b) => a + b, 0),
          words.length,
        );
        assert.deepEqual(
          out.map((s) => s.id),
          out.map((_, i) => `s${i + 1}`),
        );
        // Consecutive sentences of one segment have different speakers.
        let i = 0;
        for (const seg of segments) {
          let prev: string | null = null;
          let left = seg.length;
          while (left > 0) {
            const s = out[i++];
            if (prev !== null) assert.notEqual(s.speaker, prev);
            prev = s.speaker;
            left -= s.text.split(' ').length;
          }
        }
      }),
    );
  });
});

function seg(over: Partial<DubSegment> & { id: string }): DubSegment {
  return {
    startMs: 0,
    endMs: 1000,
    speaker: 'speaker_1',
    sourceText: 'Hello.',
    translatedText: 'Hola.',
    dubStartMs: 0,
    dubEndMs: 1000,
    stretch: 1,
    fits: true,
    confidence: null,
    ...over,
  };
}

function dubOf(segments: DubSegment[]): DubRecord {
  return {
    sourceLang: 'en',
    targetLang: 'es',
    provider: 'local',
    route: { via: null, quality: 'direct' },
    transcriptSource: 'recognized',
    voices: [
      { speaker: 'speaker_1', provider: 'local', voiceId: 'es-a', name: 'Ana', matched: true },
      { speaker: 'speaker_2', provider: 'local', voiceId: 'es-b', name: 'Beto', matched: false },
    ],
    segments,
  };
}

describe('dubSummary', () => {
  it('counts speakers, fitting and stretched segments, the stretch range and the mean confidence', () => {
    const d = dubOf([
      seg({ id: 's1', stretch: 1, fits: true, confidence: 0.9 }),
      seg({ id: 's2', stretch: 0.85, fits: true, confidence: 0.6 }),
      seg({ id: 's3', stretch: 1.1, fits: false, confidence: null }),
    ]);
    assert.deepEqual(dubSummary(d), {
      sourceLang: 'en',
      targetLang: 'es',
      provider: 'local',
      route: { via: null, quality: 'direct' },
      transcriptSource: 'recognized',
      speakers: 2,
      voices: d.voices,
      segments: 3,
      segmentsFitting: 2,
      segmentsStretched: 2,
      stretchMin: 0.85,
      stretchMax: 1.1,
      meanConfidence: 0.75,
    });
  });

  it('a dub without segments or confidences: stretch 1, mean confidence null', () => {
    const none = dubSummary(dubOf([]));
    assert.equal(none.segments, 0);
    assert.equal(none.stretchMin, 1);
    assert.equal(none.stretchMax, 1);
    assert.equal(none.meanConfidence, null);
    assert.equal(dubSummary(dubOf([seg({ id: 's1' })])).meanConfidence, null);
  });
});

describe('wrapCaption', () => {
  it('breaks at spaces within the width; a longer word keeps its own line', () => {
    assert.deepEqual(wrapCaption('one two three four', 9), ['one two', 'three', 'four']);
    assert.deepEqual(wrapCaption('  a   b  ', 42), ['a b']);
    assert.deepEqual(wrapCaption('', 42), []);
    assert.deepEqual(wrapCaption('tiny enormousword x', 6), ['tiny', 'enormousword', 'x']);
    // Exactly the width fits.
    assert.deepEqual(wrapCaption('abcd efgh', 9), ['abcd efgh']);
  });
});

describe('renderSubtitles', () => {
  const d = dubOf([
    // Out of order on purpose: cues are sorted by start.
    seg({
      id: 's2',
      startMs: 2400,
      endMs: 4000,
      sourceText: 'Fine.',
      translatedText: 'Bien, gracias por preguntar, estoy muy contento de verte aquí hoy.',
      dubStartMs: 2400,
      dubEndMs: 4100,
    }),
    seg({
      id: 's1',
      startMs: 500,
      endMs: 2000,
      sourceText: 'Hello there --> how are you?',
      translatedText: 'Hola, ¿cómo estás?',
      dubStartMs: 500,
      // Runs into s2: the cue ends where s2's begins.
      dubEndMs: 2600,
    }),
    // No text, or no time: no cue.
    seg({
      id: 's3',
      startMs: 5000,
      endMs: 5500,
      sourceText: '  ',
      translatedText: '',
      dubStartMs: 5000,
      dubEndMs: 5500,
    }),
    seg({
      id: 's4',
      startMs: 6000,
      endMs: 6000,
      sourceText: 'Zero.',
      translatedText: 'Cero.',
      dubStartMs: 6000,
      dubEndMs: 6000,
    }),
    seg({
      id: 's5',
      startMs: 3_723_004,
      endMs: 3_725_500,
      sourceText: 'Late.',
      translatedText: 'Tarde.',
      dubStartMs: 3_723_004,
      dubEndMs: 3_725_500,
    }),
  ]);

  it('SubRip of the translation: numbered cues, comma milliseconds, no overlap, wrapped at 42', () => {
    assert.equal(
      renderSubtitles(d, 'srt', 'target'),
      '1\n00:00:00,500 --> 00:00:02,400\nHola, ¿cómo estás?\n\n' +
        '2\n00:00:02,400 --> 00:00:04,100\nBien, gracias por preguntar, estoy muy\ncontento de verte aquí hoy.\n\n' +
        '3\n01:02:03,004 --> 01:02:05,500\nTarde.\n',
    );
  });

  it('WebVTT of the source: header, dot milliseconds, source spans, "-->" in text defused', () => {
    assert.equal(
      renderSubtitles(d, 'vtt', 'source'),
      'WEBVTT\n\n' +
        '00:00:00.500 --> 00:00:02.000\nHello there -> how are you?\n\n' +
        '00:00:02.400 --> 00:00:04.000\nFine.\n\n' +
        '01:02:03.004 --> 01:02:05.500\nLate.\n',
    );
  });

  it('WebVTT escapes & and < in the text (a tag or reference there would hide words); SubRip keeps them', () => {
    const amp = dubOf([
      seg({
        id: 'a',
        dubStartMs: 0,
        dubEndMs: 900,
        translatedText: 'Tom & Jerry: 3 <4, &amp; no <b>tags</b>',
      }),
    ]);
    assert.equal(
      renderSubtitles(amp, 'vtt', 'target'),
      'WEBVTT\n\n00:00:00.000 --> 00:00:00.900\nTom &amp; Jerry: 3 &lt;4, &amp;amp; no &lt;b>tags&lt;/b>\n',
    );
    assert.equal(
      renderSubtitles(amp, 'srt', 'target'),
      '1\n00:00:00,000 --> 00:00:00,900\nTom & Jerry: 3 <4, &amp; no <b>tags</b>\n',
    );
  });

  it('cues that start together keep at least 1 ms; an empty dub is just the header', () => {
    const same = dubOf([
      seg({ id: 'a', dubStartMs: 1000, dubEndMs: 2000, translatedText: 'Uno.' }),
      seg({ id: 'b', dubStartMs: 1000, dubEndMs: 1500, translatedText: 'Dos.' }),
    ]);
    assert.equal(
      renderSubtitles(same, 'srt', 'target'),
      '1\n00:00:01,000 --> 00:00:01,001\nUno.\n\n2\n00:00:01,000 --> 00:00:01,500\nDos.\n',
    );
    assert.equal(renderSubtitles(dubOf([]), 'vtt', 'target'), 'WEBVTT\n\n');
    assert.equal(renderSubtitles(dubOf([]), 'srt', 'target'), '');
  });

  it('cue times never overlap and never run backwards (property)', () => {
    const arb = fc.array(
      fc.record({
        start: fc.nat(100_000),
        len: fc.integer({ min: 1, max: 5000 }),
        text: fc.stringMatching(/^[a-z]{1,8}( [a-z]{1,8}){0,12}$/),
      }),
      { maxLength: 12 },
    );
    fc.assert(
      fc.property(arb, fc.constantFrom('srt' as const, 'vtt' as const), (cues, format) => {
        const dub = dubOf(
          cues.map((c, i) =>
            seg({ id: `s${i}`, dubStartMs: c.start, dubEndMs: c.start + c.len, translatedText: c.text }),
          ),
        );
        const text = renderSubtitles(dub, format, 'target');
        const ms = (s: string) => {
          const [h, m, rest] = s.split(':');
          return (Number(h) * 60 + Number(m)) * 60_000 + Number(rest.replace(/[,.]/, '.')) * 1000;
        };
        const times = [...text.matchAll(/(\S+) --> (\S+)/g)].map((m) => [ms(m[1]), ms(m[2])]);
        assert.equal(times.length, cues.length);
        for (let i = 0; i < times.length; i++) {
          assert.ok(times[i][1] > times[i][0], text);
          if (i > 0) assert.ok(times[i][0] >= times[i - 1][0], text);
          // Overlap only where two cues start at the same time (each keeps 1 ms).
          if (i + 1 < times.length && times[i + 1][0] > times[i][0])
            assert.ok(Math.round(times[i][1]) <= Math.round(times[i + 1][0]), text);
        }
        for (const line of text.split('\n')) if (!line.includes('-->')) assert.ok(line.length <= 42, line);
      }),
    );
  });
});

describe('dubSourceLang', () => {
  it('the language asked for, else the one the recognizer heard (a code only), else English', () => {
    assert.equal(dubSourceLang('es', 'en'), 'es');
    assert.equal(dubSourceLang(null, 'es'), 'es');
    assert.equal(dubSourceLang(null, ' PT-BR '), 'pt-br');
    assert.equal(dubSourceLang(null, 'spanish'), 'en');
    assert.equal(dubSourceLang(null, null), 'en');
  });
});

describe('completedDub', () => {
  const dub = dubOf([seg({ id: 's1' })]);
  const asked = { request: { dub: { targetLang: 'es' } } };
  const g = (
    status: GenerationStatus,
    over: { dub?: DubRecord | null; resolvedInput?: Record<string, unknown> } = {},
  ) => ({
    id: '00000000-0000-4000-8000-000000000000',
    status,
    dub: null,
    resolvedInput: asked,
    ...over,
  });

  it('a completed dub serves its record', () => {
    assert.equal(completedDub(g('COMPLETED', { dub })), dub);
  });

  it('a generation that never asked for a dub is generation_not_dubbed in every state', () => {
    for (const status of ['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED'] as const) {
      assert.deepEqual(
        refusalOf(() => completedDub(g(status, { resolvedInput: {} }))),
        {
          code: 'generation_not_dubbed',
          field: 'id',
          status: 404,
        },
      );
      assert.equal(
        refusalOf(() => completedDub(g(status, { resolvedInput: { request: { dub: null } } }))).code,
        'generation_not_dubbed',
      );
    }
  });

  it('running is generation_not_ready; failed, rejected, canceled or timed out is generation_not_downloadable', () => {
    for (const status of ['PENDING', 'PROCESSING'] as const)
      assert.equal(refusalOf(() => completedDub(g(status))).code, 'generation_not_ready');
    for (const status of ['FAILED', 'REJECTED', 'CANCELED', 'TIMED_OUT'] as const)
      assert.deepEqual(
        refusalOf(() => completedDub(g(status))),
        {
          code: 'generation_not_downloadable',
          field: undefined,
          status: 422,
        },
      );
    assert.equal(refusalOf(() => completedDub(g('COMPLETED'))).code, 'generation_output_unavailable');
  });

  it('names the file <id>.<language code>.<format>', () => {
    assert.equal(subtitlesFileName('abc', dub, 'target', 'vtt'), 'abc.es.vtt');
    assert.equal(subtitlesFileName('abc', dub, 'source', 'srt'), 'abc.en.srt');
  });
});
