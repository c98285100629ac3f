// POST /v2/dialogue-edits shapes (api-details 2.1; docs/dialogue-editing.md). The schema checks each
// edit's shape; whether the edits can apply to the transcript (known, contiguous, untouched words) is
// the validator's (src/speech/dialogue/validate.ts), and the body limit bounds the sizes.
import { Type, type Static } from '@sinclair/typebox';

const ChangeEdit = Type.Object({
  kind: Type.Literal('change'),
  wordId: Type.String(),
  replacement: Type.String(),
  pronunciation: Type.Optional(Type.String()),
});

const RemoveEdit = Type.Object({
  kind: Type.Literal('remove'),
  wordIds: Type.Array(Type.String()),
});

/**
 * One edit: a change or a removal, chosen by `kind`. A oneOf with a discriminator (TypeBox's Union
 * writes anyOf, which Ajv cannot discriminate): a refusal names the field of the edit's own kind
 * (`edits[0].wordIds must be array`), not the first branch's.
 */
export const DialogueEditItem = Type.Unsafe<Static<typeof ChangeEdit> | Static<typeof RemoveEdit>>({
  type: 'object',
  required: ['kind'],
  oneOf: [ChangeEdit, RemoveEdit],
  discriminator: { propertyName: 'kind' },
});

export const DialogueEditBody = Type.Object(
  {
    transcript: Type.Unknown({ description: 'the transcript of GET /v2/transcriptions/{id}' }),
    edits: Type.Array(DialogueEditItem, { maxItems: 1000 }),
    sourceVideoUrl: Type.String({ maxLength: 4096 }),
    startMs: Type.Optional(Type.Unknown()),
    endMs: Type.Optional(Type.Unknown()),
    voiceId: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
    rerunOfJobId: Type.Optional(Type.Union([Type.String({ maxLength: 200 }), Type.Null()])),
    projectId: Type.Optional(Type.Union([Type.String({ maxLength: 100 }), Type.Null()])),
  },
  { additionalProperties: true },
);
