// Dialogue edits: create a preview (refused before any job exists when the edits cannot apply) and
// read it. Thin: one service call each.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../services/index.js';
import { requireAuth } from '../gatekeeper.js';
import { IdParams, errorResponses } from '../schemas/common.js';
import { DialogueEditBody } from '../schemas/dialogue-edits.js';

// The job's shape (api-details 2.3); nested documents are described in docs/dialogue-editing.md.
const DialogueEditSchema = Type.Object(
  {
    id: Type.String(),
    status: Type.Union(
      ['PENDING', 'PROCESSING', 'COMPLETED', 'COMPLETED_PARTIAL', 'FAILED'].map((s) => Type.Literal(s)),
    ),
    createdAt: Type.String(),
  },
  { additionalProperties: true },
);

export const dialogueEditRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (
  app,
  { services },
) => {
  const edits = services.dialogueEdits;
  const tags = ['dialogue-edits'];

  app.post(
    '/v2/dialogue-edits',
    {
      schema: {
        tags,
        operationId: 'dialogueEdits.create',
        summary: 'Preview a dialogue edit: change or remove words of a transcribed video',
        body: DialogueEditBody,
        response: { 201: DialogueEditSchema, ...errorResponses(400, 401, 422, 429, 503) },
      },
    },
    async (request, reply) => {
      const d = await edits.create(requireAuth(request), request.body);
      return reply.code(201).send(await edits.view(d));
    },
  );

  app.get(
    '/v2/dialogue-edits/:id',
    {
      schema: {
        tags,
        operationId: 'dialogueEdits.get',
        summary: 'Get a dialogue edit job',
        params: IdParams,
        response: { 200: DialogueEditSchema, ...errorResponses(401, 404) },
      },
    },
    async (request, reply) => {
      const d = await edits.get(requireAuth(request).organization.id, request.params.id);
      if (d.status === 'PENDING' || d.status === 'PROCESSING') void reply.header('Retry-After', '3');
      return await edits.view(d);
    },
  );
};
