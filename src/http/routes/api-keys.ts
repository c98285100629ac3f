// Key management through the API, with the role rules of the domain layer: members see and manage only
// keys they created; admins and owners every key of their organization.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../services/index.js';
import { actorOf, apiKeyView } from '../../services/api-keys.js';
import { requireAuth } from '../gatekeeper.js';
import { IdParams, Nullable, errorResponses } from '../schemas/common.js';

const ApiKeySchema = Type.Object(
  {
    id: Type.String(),
    organizationId: Type.String(),
    name: Type.String(),
    prefix: Type.String(),
    role: Type.String(),
    createdByKeyId: Nullable(Type.String()),
    /** The signed-in user who created the key (web sessions); null otherwise. */
    createdByUserId: Nullable(Type.String()),
    createdAt: Type.String(),
    lastUsedAt: Nullable(Type.String()),
    expiresAt: Nullable(Type.String()),
    revokedAt: Nullable(Type.String()),
    status: Type.String(),
  },
  { $id: 'ApiKey' },
);
const CreatedKeySchema = Type.Intersect([ApiKeySchema, Type.Object({ key: Type.String() })]);

export const apiKeyRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const tags = ['api-keys'];

  app.get(
    '/v2/api-keys',
    {
      schema: {
        tags,
        operationId: 'apiKeys.list',
        summary: 'List the API keys of the organization (never the secret keys)',
        response: { 200: Type.Array(ApiKeySchema), ...errorResponses(401) },
      },
    },
    async (req) => {
      const a = requireAuth(req);
      return (await services.apiKeys.list(a.organization.id, actorOf(a))).map(apiKeyView);
    },
  );

  app.post(
    '/v2/api-keys',
    {
      schema: {
        tags,
        operationId: 'apiKeys.create',
        summary: 'Create an API key; the secret key is shown only in this answer',
        body: Type.Object({
          name: Type.Optional(Nullable(Type.String({ maxLength: 200 }))),
          role: Type.Optional(
            Type.Union([Type.Literal('owner'), Type.Literal('admin'), Type.Literal('member')]),
          ),
          expiresAt: Type.Optional(Nullable(Type.String({ format: 'date-time' }))),
        }),
        response: { 201: CreatedKeySchema, ...errorResponses(400, 401, 403) },
      },
    },
    async (req, reply) => {
      const a = requireAuth(req);
      const created = await services.apiKeys.create({
        organizationId: a.organization.id,
        name: req.body.name,
        role: req.body.role ?? 'member',
        expiresAt: req.body.expiresAt,
        actor: actorOf(a),
      });
      return reply.code(201).send({ ...apiKeyView(created.record), key: created.key });
    },
  );

  app.patch(
    '/v2/api-keys/:id',
    {
      schema: {
        tags,
        operationId: 'apiKeys.update',
        summary: 'Rename an API key',
        params: IdParams,
        body: Type.Object({ name: Type.String({ maxLength: 200 }) }),
        response: { 200: ApiKeySchema, ...errorResponses(400, 401, 403, 404) },
      },
    },
    async (req) => {
      const a = requireAuth(req);
      const k = await services.apiKeys.rename(req.params.id, req.body.name, {
        organizationId: a.organization.id,
        actor: actorOf(a),
      });
      return apiKeyView(k);
    },
  );

  app.delete(
    '/v2/api-keys/:id',
    {
      schema: {
        tags,
        operationId: 'apiKeys.delete',
        summary: 'Revoke an API key',
        params: IdParams,
        response: { 200: ApiKeySchema, ...errorResponses(401, 403, 404) },
      },
    },
    async (req) => {
      const a = requireAuth(req);
      const k = await services.apiKeys.revoke(req.params.id, {
        organizationId: a.organization.id,
        actor: actorOf(a),
      });
      return apiKeyView(k);
    },
  );
};
