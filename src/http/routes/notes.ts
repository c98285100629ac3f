// Review notes pinned to moments of a generation's output (our extension, docs/generations.md#notes).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../services/index.js';
import { noteView } from '../../services/notes.js';
import { requireAuth } from '../gatekeeper.js';
import { IdParams, errorResponses } from '../schemas/common.js';
import { NoteBody, NoteParams, NotePatchBody, NoteSchema } from '../schemas/notes.js';

export const noteRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const tags = ['notes'];
  const notes = services.notes;

  app.get(
    '/v2/generations/:id/notes',
    {
      schema: {
        tags,
        operationId: 'notes.list',
        summary: "List a generation's notes, in timeline order (our extension)",
        params: IdParams,
        response: { 200: Type.Array(NoteSchema), ...errorResponses(401, 404) },
      },
    },
    async (req) => {
      const { organization } = requireAuth(req);
      return (await notes.list(organization.id, req.params.id)).map(noteView);
    },
  );

  app.post(
    '/v2/generations/:id/notes',
    {
      schema: {
        tags,
        operationId: 'notes.create',
        summary: 'Pin a note to a moment of the output (our extension)',
        params: IdParams,
        body: NoteBody,
        response: { 201: NoteSchema, ...errorResponses(400, 401, 404, 409) },
      },
    },
    async (req, reply) => {
      const auth = requireAuth(req);
      return reply.code(201).send(noteView(await notes.add(auth, req.params.id, req.body)));
    },
  );

  app.patch(
    '/v2/generations/:id/notes/:noteId',
    {
      schema: {
        tags,
        operationId: 'notes.update',
        summary: "Change a note's moment or text, or resolve it (our extension)",
        params: NoteParams,
        body: NotePatchBody,
        response: { 200: NoteSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (req) => {
      const { organization } = requireAuth(req);
      return noteView(await notes.update(organization.id, req.params.id, req.params.noteId, req.body));
    },
  );

  app.delete(
    '/v2/generations/:id/notes/:noteId',
    {
      schema: {
        tags,
        operationId: 'notes.delete',
        summary: 'Delete a note (our extension)',
        params: NoteParams,
        response: { 200: NoteSchema, ...errorResponses(401, 404) },
      },
    },
    async (req) => {
      const { organization } = requireAuth(req);
      return noteView(await notes.delete(organization.id, req.params.id, req.params.noteId));
    },
  );
};
