import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { catalogue } from '../../domain/errors.js';
import type { Services } from '../../services/index.js';

const CatalogEntrySchema = Type.Object({
  code: Type.String(),
  message: Type.String(),
  suggestion: Type.String(),
  status: Type.Integer(),
});

export const errorRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app) => {
  const entries = catalogue();
  app.get(
    '/v2/errors',
    {
      config: { auth: false },
      schema: {
        tags: ['errors'],
        operationId: 'errors.list',
        summary: 'The public catalogue of error codes',
        security: [],
        response: { 200: Type.Array(CatalogEntrySchema) },
      },
    },
    async () => entries,
  );
};
