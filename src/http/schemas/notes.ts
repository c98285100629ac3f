import { Type } from '@sinclair/typebox';
import { MAX_NOTE_TEXT } from '../../domain/notes.js';

export const NoteSchema = Type.Object(
  {
    id: Type.String(),
    generationId: Type.String(),
    atMs: Type.Integer({ minimum: 0, description: 'The moment in the output, in milliseconds' }),
    text: Type.String(),
    resolved: Type.Boolean(),
    author: Type.String({ description: "The signed-in user's email, or the API key's name" }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { $id: 'Note' },
);

const AtMs = Type.Integer({ minimum: 0, maximum: 2_147_483_647 });
const Text = Type.String({ minLength: 1, maxLength: MAX_NOTE_TEXT });

export const NoteBody = Type.Object(
  { atMs: AtMs, text: Text, resolved: Type.Optional(Type.Boolean()) },
  { additionalProperties: false },
);

export const NotePatchBody = Type.Object(
  { atMs: Type.Optional(AtMs), text: Type.Optional(Text), resolved: Type.Optional(Type.Boolean()) },
  { additionalProperties: false, minProperties: 1 },
);

export const NoteParams = Type.Object({
  id: Type.String({ minLength: 1, maxLength: 200 }),
  noteId: Type.String({ minLength: 1, maxLength: 200 }),
});
