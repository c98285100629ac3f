// Text-to-speech and voice shapes (api-details sections 3 and 4; docs/speech.md). The rules behind
// them (lengths, ranges, voices) are in src/domain/tts.ts and the services.
import { Type } from '@sinclair/typebox';
import { Nullable } from './common.js';

const Provider = Type.Union([Type.Literal('local'), Type.Literal('openai'), Type.Literal('elevenlabs')]);

export const TtsBody = Type.Object(
  {
    script: Type.String({ minLength: 1, maxLength: 20000, description: '1 to 5,000 characters' }),
    voiceId: Type.String({ minLength: 1, maxLength: 200 }),
    provider: Type.Optional(Nullable(Provider)),
    stability: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1 }))),
    similarityBoost: Type.Optional(Nullable(Type.Number({ minimum: 0, maximum: 1 }))),
    speed: Type.Optional(Nullable(Type.Number({ minimum: 0.5, maximum: 2, description: 'extension' }))),
  },
  { additionalProperties: true },
);

export const TtsSpeechSchema = Type.Object({
  id: Type.String(),
  url: Type.String(),
  duration: Type.Number({ description: 'seconds' }),
  assetId: Type.String(),
});

export const TtsJobSchema = Type.Object({
  id: Type.String(),
  status: Type.Union(['PENDING', 'PROCESSING', 'SUCCESS', 'FAILED'].map((s) => Type.Literal(s))),
  createdAt: Type.String(),
  url: Nullable(Type.String()),
  duration: Nullable(Type.Number()),
  error: Nullable(Type.Object({ code: Nullable(Type.String()), message: Nullable(Type.String()) })),
  startedAt: Nullable(Type.String()),
  finishedAt: Nullable(Type.String()),
  assetId: Nullable(Type.String()),
});

export const VoiceSchema = Type.Object({
  id: Type.String({ description: 'pass as voiceId' }),
  name: Type.String(),
  provider: Provider,
  voiceId: Type.String({ description: "the provider's own id" }),
  type: Type.Union([Type.Literal('builtin'), Type.Literal('cloned')]),
  labels: Type.Optional(Type.Record(Type.String(), Type.String())),
  baseVoice: Type.Optional(Type.String()),
  createdAt: Type.Optional(Type.String()),
  restriction: Type.Optional(Type.Object({ code: Type.String(), message: Type.String() })),
});

export const VoiceListQuery = Type.Object({ provider: Type.Optional(Provider) });

export const CloneVoiceBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 400 }),
    provider: Type.Optional(Nullable(Provider)),
    url: Type.Optional(Type.String({ maxLength: 4096 })),
    assetId: Type.Optional(Type.String({ maxLength: 200 })),
  },
  { additionalProperties: true },
);

export const TimelineSchema = Type.Object({
  words: Type.Array(Type.Object({ text: Type.String(), startMs: Type.Number(), endMs: Type.Number() })),
  phonemes: Type.Array(
    Type.Object({
      phone: Type.String(),
      startMs: Type.Number(),
      endMs: Type.Number(),
      word: Type.Optional(Type.Number()),
    }),
  ),
});
