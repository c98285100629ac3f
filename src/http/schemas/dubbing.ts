// Dubbing shapes (docs/dubbing.md); the rules behind them are in src/domain/dubbing-languages.ts.
import { Type } from '@sinclair/typebox';

const Language = Type.Object({ code: Type.String(), name: Type.String() });

const Route = Type.Object({
  from: Type.String(),
  to: Type.String(),
  quality: Type.Union([Type.Literal('direct'), Type.Literal('pivot')]),
  via: Type.Optional(Type.String({ description: 'the pivot language of a two-step route' })),
  note: Type.Optional(Type.String()),
});

export const DubbingLanguagesSchema = Type.Object({
  providers: Type.Array(
    Type.Object({
      provider: Type.Union([Type.Literal('local'), Type.Literal('openai'), Type.Literal('deepl')]),
      available: Type.Boolean({ description: 'configured and installed on this server' }),
      note: Type.String(),
      sources: Type.Array(Language),
      targets: Type.Array(Language),
      pairs: Type.Optional(
        Type.Array(Route, { description: 'the only routes, where not every source reaches every target' }),
      ),
    }),
  ),
});

const Segment = Type.Object({
  id: Type.String(),
  startMs: Type.Number({ description: 'the source speech span, ms' }),
  endMs: Type.Number(),
  speaker: Type.String(),
  sourceText: Type.String(),
  translatedText: Type.String(),
  dubStartMs: Type.Number({ description: 'where the dubbed speech is heard, ms of the output' }),
  dubEndMs: Type.Number(),
  stretch: Type.Number({
    description: 'output length / synthesized length of the translation (1: untouched)',
  }),
  fits: Type.Boolean({ description: 'the dubbed speech ends before the next segment starts' }),
  confidence: Type.Union([Type.Number(), Type.Null()], {
    description: 'mean recognition confidence; null when the transcript was given',
  }),
});

const Voice = Type.Object({
  speaker: Type.String(),
  provider: Type.String(),
  voiceId: Type.String({
    description:
      "the local voice matched to the speaker, the speaker's dubParams.voices entry, or dubParams.voiceId (the same for every speaker)",
  }),
  name: Type.String(),
  matched: Type.Boolean({
    description: "pitch and timbre moved toward the speaker's own (or toward a chosen local clone's)",
  }),
});

/** A completed dub's transcript (src/domain/dub.ts DubRecord) with its generation's id. */
export const DubTranscriptSchema = Type.Object({
  generationId: Type.String(),
  sourceLang: Type.String(),
  targetLang: Type.String(),
  provider: Type.Union([Type.Literal('local'), Type.Literal('openai'), Type.Literal('deepl')]),
  route: Type.Union([
    Type.Object({ via: Type.Union([Type.String(), Type.Null()]), quality: Type.String() }),
    Type.Null(),
  ]),
  transcriptSource: Type.Union([Type.Literal('recognized'), Type.Literal('given')]),
  voices: Type.Array(Voice),
  segments: Type.Array(Segment),
  basedOn: Type.Optional(
    Type.Object(
      {
        generationId: Type.String(),
        regenerated: Type.Array(Type.String(), { description: 'ids of the segments spoken anew' }),
      },
      { description: 'a re-dub: the dub it was made from; its other segments reuse that audio' },
    ),
  ),
  timeline: Type.Optional(
    Type.Object(
      {
        words: Type.Array(Type.Object({ text: Type.String(), startMs: Type.Number(), endMs: Type.Number() })),
        phonemes: Type.Array(
          Type.Object({
            phone: Type.String({ description: 'mouth class, ARPAbet-like; sil for a pause' }),
            startMs: Type.Number(),
            endMs: Type.Number(),
            word: Type.Optional(Type.Integer({ description: 'index into words' })),
          }),
        ),
      },
      { description: "the dubbed speech's words and phones, ms of the output (the synthesizer's own times)" },
    ),
  ),
});

export const SubtitlesQuery = Type.Object({
  format: Type.Optional(Type.Union([Type.Literal('srt'), Type.Literal('vtt')], { default: 'srt' })),
  lang: Type.Optional(
    Type.Union([Type.Literal('source'), Type.Literal('target')], {
      default: 'target',
      description: 'the source speech, or its translation where the dubbed speech is heard',
    }),
  ),
});

/** A dubbed generation's segment (GET …/dub/segments/{segmentId}/audio). */
export const SegmentParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 200 }),
  segmentId: Type.String({ minLength: 1, maxLength: 100 }),
});
