// Transcription shapes (api-details section 1). The rules (one source, window) are in
// src/domain/transcriptions.ts.
import { Type } from '@sinclair/typebox';
import { Nullable } from './common.js';

export const CreateTranscriptionBody = Type.Object(
  {
    sourceVideoUrl: Type.Optional(Nullable(Type.String({ maxLength: 4096 }))),
    sourceAudioUrl: Type.Optional(Nullable(Type.String({ maxLength: 4096 }))),
    assetId: Type.Optional(Nullable(Type.String({ maxLength: 200, description: 'extension: an asset id' }))),
    startMs: Type.Optional(Nullable(Type.Integer({ minimum: 0 }))),
    endMs: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
    maxSourceSeconds: Type.Optional(Nullable(Type.Integer({ minimum: 1 }))),
    projectId: Type.Optional(Nullable(Type.String({ maxLength: 100 }))),
  },
  { additionalProperties: true },
);

/** PATCH /v2/transcriptions/{id} (our extension): words corrected by hand, against a revision. */
export const CorrectTranscriptionBody = Type.Object({
  revision: Type.Integer({ minimum: 1, description: 'the revision the corrections were made on' }),
  words: Type.Array(
    Type.Object({
      id: Type.String({ maxLength: 100, description: 'a word id of the transcript' }),
      text: Type.String({ maxLength: 400, description: 'what was really said there' }),
    }),
    { minItems: 1, maxItems: 1000 },
  ),
});

const Word = Type.Object({
  id: Type.String(),
  text: Type.String(),
  startMs: Type.Integer(),
  endMs: Type.Integer(),
  speakerId: Nullable(Type.String()),
});

export const TranscriptSchema = Type.Object(
  { segments: Type.Array(Type.Object({ id: Type.String(), words: Type.Array(Word) })) },
  { additionalProperties: true },
);

export const TranscriptionSchema = Type.Object({
  id: Type.String(),
  status: Type.Union(['PENDING', 'PROCESSING', 'COMPLETED', 'FAILED'].map((s) => Type.Literal(s))),
  createdAt: Type.String(),
  sourceStartMs: Type.Integer(),
  sourceEndMs: Nullable(Type.Integer()),
  sourceVideoUrl: Nullable(Type.String()),
  sourceAudioUrl: Nullable(Type.String()),
  transcript: Nullable(TranscriptSchema),
  speakerCount: Nullable(Type.Integer()),
  error: Nullable(Type.Object({ code: Nullable(Type.String()), message: Nullable(Type.String()) })),
  projectId: Nullable(Type.String()),
  startedAt: Nullable(Type.String()),
  finishedAt: Nullable(Type.String()),
  revision: Type.Integer({ description: 'extension: 1, then one more for each settled correction' }),
});
