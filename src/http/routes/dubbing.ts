// Dubbing: the languages catalogue. Thin: one service call.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Services } from '../../services/index.js';
import { requireAuth } from '../gatekeeper.js';
import { errorResponses } from '../schemas/common.js';
import { DubbingLanguagesSchema } from '../schemas/dubbing.js';

export const dubbingRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.get(
    '/v2/dubbing/languages',
    {
      schema: {
        tags: ['dubbing'],
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
};
