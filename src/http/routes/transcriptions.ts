// Transcriptions: create (deduplicated by source and window), read, and correct by hand (our
// extension). Thin: one service call each.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Services } from '../../services/index.js';
import { requireAuth } from '../gatekeeper.js';
import { IdParams, errorResponses } from '../schemas/common.js';
import {
  CorrectTranscriptionBody,
  CreateTranscriptionBody,
  TranscriptionSchema,
} from '../schemas/transcriptions.js';

export const transcriptionRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (
  app,
  { services },
) => {
  const { transcriptions } = services;
  const tags = ['transcriptions'];

  app.post(
    '/v2/transcriptions',
    {
      schema: {
        tags,
        operationId: 'transcriptions.create',
        summary: 'Transcribe a stored video or audio (word times); the same source and window reuse the job',
        body: CreateTranscriptionBody,
        response: { 201: TranscriptionSchema, ...errorResponses(400, 401, 422, 429) },
      },
    },
    async (request, reply) => {
      const r = await transcriptions.create(requireAuth(request), request.body);
      // A reused job is still the answer to "transcribe this": 201 as the docs say, marked.
      if (r.reused) void reply.header('Transcription-Reused', 'true');
      return reply.code(201).send(await transcriptions.view(r.transcription));
    },
  );

  app.get(
    '/v2/transcriptions/:id',
    {
      schema: {
        tags,
        operationId: 'transcriptions.get',
        summary: 'Get a transcription job',
        params: IdParams,
        response: { 200: TranscriptionSchema, ...errorResponses(401, 404) },
      },
    },
    async (request, reply) => {
      const t = await transcriptions.get(requireAuth(request).organization.id, request.params.id);
      if (t.status === 'PENDING' || t.status === 'PROCESSING') void reply.header('Retry-After', '3');
      return await transcriptions.view(t);
    },
  );

  app.patch(
    '/v2/transcriptions/:id',
    {
      schema: {
        tags,
        operationId: 'transcriptions.correct',
        summary:
          'Extension: correct words of a completed transcription; 202 while alignment re-times them (the next revision)',
        params: IdParams,
        body: CorrectTranscriptionBody,
        response: {
          200: TranscriptionSchema,
          202: TranscriptionSchema,
          ...errorResponses(400, 401, 404, 409),
        },
      },
    },
    async (request, reply) => {
      const auth = requireAuth(request);
      const r = await transcriptions.correct(auth.organization.id, request.params.id, request.body);
      return reply.code(r.queued ? 202 : 200).send(await transcriptions.view(r.transcription));
    },
  );
};
