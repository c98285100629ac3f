// The organization's settings as the studio and API clients manage them: the webhook signing secret,
// members and invitations (our extension; docs/studio.md), and this month's usage.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../services/index.js';
import { requireAuth } from '../gatekeeper.js';
import { errorResponses } from '../schemas/common.js';
import {
  ChangeRoleBody,
  InvitationBody,
  InvitationSchema,
  MemberParams,
  MemberSchema,
  UsageSchema,
  WebhookSecretQuery,
  WebhookSecretSchema,
} from '../schemas/organizations.js';

export const organizationRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (
  app,
  { services },
) => {
  const tags = ['organizations'];

  app.get(
    '/v2/organizations/webhook/secret',
    {
      schema: {
        tags,
        operationId: 'organizations.getWebhookSecret',
        summary: 'The webhook signing secret (admins and owners)',
        querystring: WebhookSecretQuery,
        response: { 200: WebhookSecretSchema, ...errorResponses(401, 403) },
      },
    },
    async (req) => ({
      secret: await services.organizations.webhookSecret(requireAuth(req), req.query.masked ?? false),
    }),
  );

  app.post(
    '/v2/organizations/webhook/secret/rotate',
    {
      schema: {
        tags,
        operationId: 'organizations.rotateWebhookSecret',
        summary: 'Replace the webhook signing secret (admins and owners); the old one stops at once',
        response: { 200: WebhookSecretSchema, ...errorResponses(401, 403) },
      },
    },
    async (req) => ({ secret: await services.organizations.rotateWebhookSecretAs(requireAuth(req)) }),
  );

  app.get(
    '/v2/organizations/usage',
    {
      schema: {
        tags,
        operationId: 'organizations.usage',
        summary: "This month's generations by status, seconds of output, and the plan's limits",
        response: { 200: UsageSchema, ...errorResponses(401) },
      },
    },
    async (req) => services.organizations.usage(requireAuth(req).organization.id),
  );

  app.get(
    '/v2/organizations/members',
    {
      schema: {
        tags,
        operationId: 'organizations.listMembers',
        summary: 'The users of the organization (a member sees only itself)',
        response: { 200: Type.Array(MemberSchema), ...errorResponses(401) },
      },
    },
    async (req) => services.members.list(requireAuth(req)),
  );

  app.post(
    '/v2/organizations/invitations',
    {
      schema: {
        tags,
        operationId: 'organizations.invite',
        summary: 'Mail a single-use account link for a role (admins up to admin, owners any)',
        body: InvitationBody,
        response: { 201: InvitationSchema, ...errorResponses(400, 401, 403, 409, 502) },
      },
    },
    async (req, reply) => {
      const invitation = await services.members.invite(requireAuth(req), {
        email: req.body.email,
        role: req.body.role ?? 'member',
      });
      return reply.code(201).send(invitation);
    },
  );

  app.patch(
    '/v2/organizations/members/:userId',
    {
      schema: {
        tags,
        operationId: 'organizations.changeMemberRole',
        summary: "Change a member's role (admins and owners; never the last owner's)",
        params: MemberParams,
        body: ChangeRoleBody,
        response: { 200: MemberSchema, ...errorResponses(400, 401, 403, 404, 409) },
      },
    },
    async (req) => services.members.changeRole(requireAuth(req), req.params.userId, req.body.role),
  );

  app.delete(
    '/v2/organizations/members/:userId',
    {
      schema: {
        tags,
        operationId: 'organizations.removeMember',
        summary: 'Remove a member: their sessions end and the keys they created are revoked',
        params: MemberParams,
        response: { 200: MemberSchema, ...errorResponses(401, 403, 404, 409) },
      },
    },
    async (req) => services.members.remove(requireAuth(req), req.params.userId),
  );
};
