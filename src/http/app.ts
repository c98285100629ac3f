// The Fastify application: schemas, hooks, one error handler, routes. Routes stay thin.
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import multipart from '@fastify/multipart';
import type { Services } from '../services/index.js';
import { AppError } from '../domain/errors.js';
import { sendError } from './error-body.js';
import { registerGatekeeper } from './gatekeeper.js';
import { registerMetrics } from './metrics.js';
import { errorRoutes } from './routes/errors.js';
import { projectRoutes } from './routes/projects.js';
import { noteRoutes } from './routes/notes.js';
import { apiKeyRoutes } from './routes/api-keys.js';
import { healthRoutes } from './routes/health.js';
import { generationRoutes } from './routes/generations.js';
import { modelRoutes } from './routes/models.js';
import { dubbingRoutes } from './routes/dubbing.js';
import { webhookDeliveryRoutes } from './routes/webhook-deliveries.js';
import { assetRoutes } from './routes/assets.js';
import { fileRoutes } from './routes/files.js';
import { speechRoutes } from './routes/speech.js';
import { transcriptionRoutes } from './routes/transcriptions.js';
import { dialogueEditRoutes } from './routes/dialogue-edits.js';
import { batchRoutes } from './routes/batches.js';
import { workerRoutes } from './routes/workers.js';
import { authRoutes } from './routes/auth.js';
import { organizationRoutes } from './routes/organizations.js';
import { registerStudio } from './studio.js';
import { multipartLimits } from './multipart.js';
import { registerNulGuard } from './nul-guard.js';
import { RequestLogController } from './request-log.js';
import { requestIdOf } from './request-id.js';
import { handleClientError } from './client-errors.js';
import { AJV_OPTIONS, buildValidatorFactory } from './validation.js';

export type App = FastifyInstance<any, any, any, FastifyBaseLogger, TypeBoxTypeProvider>;

/** Node checks request and header deadlines on this cadence; a quarter of the shorter one, 0.1 to 5 s. */
function connectionsCheckingInterval(config: Services['config']): number {
  const shorter = Math.min(config.headersTimeoutMs, config.requestTimeoutMs);
  return Math.min(5000, Math.max(100, Math.floor(shorter / 4)));
}

export async function buildApp(services: Services): Promise<App> {
  const config = services.config;
  const app = Fastify({
    loggerInstance: services.logger as FastifyBaseLogger,
    bodyLimit: config.bodyLimitBytes,
    trustProxy: config.trustProxy,
    // Receiving a request is bounded (a trickled body or headers get 408 and the connection closes);
    // answering it is not (a long-poll holds the request up to 10 s after it arrived).
    requestTimeout: config.requestTimeoutMs,
    connectionTimeout: config.connectionTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    http: {
      headersTimeout: config.headersTimeoutMs,
      requestTimeout: config.requestTimeoutMs,
      connectionsCheckingInterval: connectionsCheckingInterval(config),
    },
    clientErrorHandler: handleClientError,
    // The router's own refusals (a path parameter over 100 characters, a malformed URL) leave through
    // the one error handler too, instead of Fastify's body. No route means no onSend hook: the request
    // id header is set here.
    frameworkErrors: (err, request, reply) =>
      sendError(err, request, reply.header('x-request-id', request.id)),
    requestIdHeader: false,
    genReqId: requestIdOf,
    // Query strings and path parameters are coerced from text; bodies are not (src/http/validation.ts).
    ajv: { customOptions: { ...AJV_OPTIONS } },
    schemaController: { compilersFactory: { buildValidator: buildValidatorFactory() } },
    return503OnClosing: true,
    // One line per request instead of Fastify's two (src/http/request-log.ts).
    logController: new RequestLogController(),
  }).withTypeProvider<TypeBoxTypeProvider>();

  // A callback hook, not an async one: it runs on every response, and a promise per hook costs.
  app.addHook('onSend', (request, reply, payload, done) => {
    void reply.header('x-request-id', request.id);
    // Draining: no connection is kept for a next request, which the balancer then sends elsewhere.
    if (services.drain.draining) void reply.header('connection', 'close');
    done(null, payload);
  });

  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Lip-sync generation service',
        version: '2.0.0',
        description:
          'Self-hosted lip-sync video generation API (v2). Authenticate with the x-api-key header.',
        license: { name: 'Apache-2.0', identifier: 'Apache-2.0' },
      },
      servers: [{ url: services.config.publicUrl }],
      components: {
        securitySchemes: {
          apiKey: { type: 'apiKey', in: 'header', name: 'x-api-key' },
          // Remote workers (docs/workers.md): Authorization: Bearer <worker token>.
          workerToken: { type: 'http', scheme: 'bearer' },
        },
      },
      security: [{ apiKey: [] }],
    },
  });
  // The documentation pages are public, like the OpenAPI document they show.
  await app.register(async (docs) => {
    docs.addHook('onRoute', (route) => {
      route.config = { ...route.config, auth: false };
    });
    await docs.register(swaggerUi, { routePrefix: '/docs', uiConfig: { docExpansion: 'list' } });
  });

  await app.register(multipart, { limits: multipartLimits(services.config) });
  registerGatekeeper(app, services);
  registerMetrics(app, services);
  registerNulGuard(app);
  app.setErrorHandler((err, request, reply) => sendError(err, request, reply));
  app.setNotFoundHandler((request, reply) =>
    sendError(
      new AppError('route_not_found', {
        message: `No endpoint ${request.method} ${request.url.split('?')[0]}.`,
      }),
      request,
      reply,
    ),
  );

  await app.register(healthRoutes, { services });
  await app.register(errorRoutes, { services });
  await app.register(projectRoutes, { services });
  await app.register(apiKeyRoutes, { services });
  await app.register(organizationRoutes, { services });
  await app.register(assetRoutes, { services });
  await app.register(fileRoutes, { services });
  await app.register(generationRoutes, { services });
  await app.register(noteRoutes, { services });
  await app.register(modelRoutes, { services });
  await app.register(dubbingRoutes, { services });
  await app.register(webhookDeliveryRoutes, { services });
  await app.register(speechRoutes, { services });
  await app.register(transcriptionRoutes, { services });
  await app.register(dialogueEditRoutes, { services });
  await app.register(batchRoutes, { services });
  await app.register(workerRoutes, { services });
  await app.register(authRoutes, { services });
  await registerStudio(app);

  app.get('/v2/openapi.json', { schema: { hide: true }, config: { auth: false } }, async () => app.swagger());

  return app;
}
