import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../services/container.js';

export const healthRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  app.get(
    '/health',
    {
      config: { auth: false },
      schema: {
        tags: ['health'],
        security: [],
        response: { 200: Type.Object({ status: Type.String(), database: Type.String() }) },
      },
    },
    async () => {
      await services.db.ping();
      return { status: 'ok', database: services.db.dialect };
    },
  );
};
