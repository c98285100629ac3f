// The webhook delivery log of a generation: every delivery and every attempt (status, error, timing).
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../services/index.js';
import { requireAuth } from '../gatekeeper.js';
import { redactedWebhookUrl } from '../../domain/webhooks.js';
import { IdParams, Nullable, errorResponses } from '../schemas/common.js';

const Attempt = Type.Object({
  attempt: Type.Integer(),
  statusCode: Nullable(Type.Integer()),
  error: Nullable(Type.String()),
  durationMs: Type.Integer(),
  attemptedAt: Type.String(),
});

const Delivery = Type.Object({
  id: Type.String(),
  event: Type.String(),
  url: Type.String(),
  status: Type.String({ description: 'pending, delivered or failed' }),
  attempts: Type.Array(Attempt),
  nextAttemptAt: Nullable(Type.String()),
  createdAt: Type.String(),
});

export const webhookDeliveryRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (
  app,
  { services },
) => {
  app.get(
    '/v2/generations/:id/webhook-deliveries',
    {
      schema: {
        tags: ['generations'],
        operationId: 'generations.listWebhookDeliveries',
        summary: "The generation's webhook delivery log",
        params: IdParams,
        response: { 200: Type.Array(Delivery), ...errorResponses(401, 404) },
      },
    },
    async (request) => {
      const auth = requireAuth(request);
      const g = await services.generations.get(auth.organization.id, request.params.id);
      const log = await services.store.webhooks.listForSubject(g.id);
      return log.deliveries.map((d) => ({
        id: d.id,
        event: d.event,
        url: redactedWebhookUrl(d.url),
        status: d.status,
        nextAttemptAt: d.status === 'pending' ? d.nextAttemptAt : null,
        createdAt: d.createdAt,
        attempts: log.attempts
          .filter((a) => a.deliveryId === d.id)
          .map((a) => ({
            attempt: a.attempt,
            statusCode: a.statusCode,
            error: a.error,
            durationMs: a.durationMs,
            attemptedAt: a.attemptedAt,
          })),
      }));
    },
  );
};
