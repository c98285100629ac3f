import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../services/index.js';
import { projectView } from '../../services/projects.js';
import { requireAuth } from '../gatekeeper.js';
import { IdParams, errorResponses } from '../schemas/common.js';
import { ProjectBody, ProjectListQuery, ProjectSchema } from '../schemas/projects.js';

export const projectRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const tags = ['projects'];

  app.post(
    '/v2/projects',
    {
      schema: {
        tags,
        operationId: 'projects.create',
        summary: 'Create a project',
        body: ProjectBody,
        response: { 201: ProjectSchema, ...errorResponses(400, 401, 422, 429) },
      },
    },
    async (req, reply) => {
      const { organization } = requireAuth(req);
      const p = await services.projects.create(organization.id, req.body.name);
      return reply.code(201).send(projectView(p));
    },
  );

  app.get(
    '/v2/projects',
    {
      schema: {
        tags,
        operationId: 'projects.list',
        summary: 'List projects',
        querystring: ProjectListQuery,
        response: { 200: Type.Array(ProjectSchema), ...errorResponses(400, 401) },
      },
    },
    async (req) => {
      const { organization } = requireAuth(req);
      const list = await services.projects.list(organization.id, req.query.limit ?? 100, req.query.cursor);
      return list.map(projectView);
    },
  );

  app.get(
    '/v2/projects/:id',
    {
      schema: {
        tags,
        operationId: 'projects.get',
        summary: 'Get a project',
        params: IdParams,
        response: { 200: ProjectSchema, ...errorResponses(401, 404) },
      },
    },
    async (req) => {
      const { organization } = requireAuth(req);
      return projectView(await services.projects.get(organization.id, req.params.id));
    },
  );

  for (const method of ['patch', 'put'] as const) {
    app[method](
      '/v2/projects/:id',
      {
        schema: {
          tags,
          // PUT is the same rename, kept for clients of the older documentation.
          operationId: method === 'patch' ? 'projects.update' : 'projects.replace',
          summary: 'Rename a project',
          params: IdParams,
          body: ProjectBody,
          response: { 200: ProjectSchema, ...errorResponses(400, 401, 404) },
        },
      },
      async (req) => {
        const { organization } = requireAuth(req);
        return projectView(await services.projects.rename(organization.id, req.params.id, req.body.name));
      },
    );
  }

  app.delete(
    '/v2/projects/:id',
    {
      schema: {
        tags,
        operationId: 'projects.delete',
        summary: 'Delete a project',
        params: IdParams,
        response: { 200: ProjectSchema, ...errorResponses(401, 404) },
      },
    },
    async (req) => {
      const { organization } = requireAuth(req);
      return projectView(await services.projects.delete(organization.id, req.params.id));
    },
  );
};
