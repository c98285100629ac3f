// Dubbing: the languages catalogue, and a completed dub's transcript, subtitles and segment audio. Thin: one
// service call each.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../services/index.js';
import { requireAuth } from '../gatekeeper.js';
import { IdParams, errorResponses } from '../schemas/common.js';
import {
  DubbingLanguagesSchema,
  DubTranscriptSchema,
  SegmentParams,
  SubtitlesQuery,
} from '../schemas/dubbing.js';

export const dubbingRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const tags = ['dubbing'];

  app.get(
    '/v2/dubbing/languages',
    {
      schema: {
        tags,
        operationId: 'dubbing.languages',
        summary: 'Source and target languages of dubbing per translation provider, with quality notes',
        response: { 200: DubbingLanguagesSchema, ...errorResponses(401) },
      },
    },
    async (request) => {
      requireAuth(request);
      return services.translation.languages();
    },
  );

  app.get(
    '/v2/generations/:id/transcript',
    {
      schema: {
        tags,
        operationId: 'dubbing.transcript',
        summary: "A completed dub's transcript: per segment the source and translated text and timing",
        params: IdParams,
        response: { 200: DubTranscriptSchema, ...errorResponses(401, 404, 409, 422) },
      },
    },
    async (request) => {
      const auth = requireAuth(request);
      return services.generations.dubTranscript(auth.organization, request.params.id);
    },
  );

  app.get(
    '/v2/generations/:id/dub/segments/:segmentId/audio',
    {
      schema: {
        tags,
        operationId: 'dubbing.segmentAudio',
        summary: "A signed URL of one segment's dubbed speech, a WAV (text/plain)",
        params: SegmentParams,
        response: { 200: Type.String(), ...errorResponses(401, 404, 409, 422, 503) },
      },
    },
    async (request, reply) => {
      const auth = requireAuth(request);
      const { id, segmentId } = request.params;
      const url = await services.generations.dubSegmentAudioUrl(auth.organization, id, segmentId);
      return reply.type('text/plain; charset=utf-8').send(url);
    },
  );

  app.get(
    '/v2/generations/:id/subtitles',
    {
      schema: {
        tags,
        operationId: 'dubbing.subtitles',
        summary: "A completed dub's subtitles (SubRip or WebVTT), in the source or the target language",
        params: IdParams,
        querystring: SubtitlesQuery,
        response: {
          200: {
            description: 'the subtitles file (attachment)',
            content: {
              'application/x-subrip': { schema: Type.String() },
              'text/vtt': { schema: Type.String() },
            },
          },
          ...errorResponses(400, 401, 404, 409, 422),
        },
      },
    },
    async (request, reply) => {
      const auth = requireAuth(request);
      const { format = 'srt', lang = 'target' } = request.query;
      const file = await services.generations.dubSubtitles(
        auth.organization,
        request.params.id,
        format,
        lang,
      );
      return reply
        .type(file.contentType)
        .header('content-disposition', `attachment; filename="${file.fileName}"`)
        .send(file.text);
    },
  );
};
