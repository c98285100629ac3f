import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../services/index.js';
import { MODELS } from '../../domain/models.js';
import { requireAuth } from '../gatekeeper.js';
import { errorResponses } from '../schemas/common.js';

// The official client's ModelInfo: id, name, type, version, description?, deprecatedAt?
const ModelInfo = Type.Object({
  id: Type.String(),
  name: Type.String(),
  type: Type.String(),
  version: Type.String(),
  description: Type.Optional(Type.String()),
  deprecatedAt: Type.Optional(Type.String()),
  acceptsImage: Type.Boolean(),
});

export const modelRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app) => {
  app.get(
    '/v2/models',
    {
      schema: {
        tags: ['models'],
        operationId: 'models.list',
        summary: 'The models this server accepts',
        response: { 200: Type.Array(ModelInfo), ...errorResponses(401) },
      },
    },
    async (request) => {
      requireAuth(request);
      return MODELS.map((m) => ({
        id: m.id,
        name: m.name,
        type: 'lipsync',
        version: m.version,
        description: m.description,
        ...(m.deprecatedAt ? { deprecatedAt: m.deprecatedAt } : {}),
        acceptsImage: m.acceptsImage,
      }));
    },
  );
};
