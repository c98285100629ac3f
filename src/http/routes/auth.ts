// Web sessions: /api/auth/* (better-auth, through WebSessionService) under the spec's rate limits
// (sign-in, sign-up and codes 10 a minute, GET /api/auth/session 60), and the first-start page that
// makes an account from an account link (the first-start link makes the owner's). No x-api-key: these routes authenticate themselves.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../services/index.js';
import { errorResponses } from '../schemas/common.js';
import { ACCOUNT_SETUP_PAGE } from './account-setup-page.js';

export const authRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const config = { auth: false, sessionEndpoint: true } as const;
  // better-auth checks the bodies of its endpoints itself.
  const hidden = { hide: true };

  async function pass(request: FastifyRequest, reply: FastifyReply) {
    const answer = await services.webSessions.handle({
      method: request.method,
      url: request.url,
      headers: request.headers,
      body: request.body,
      ip: request.ip,
    });
    const cookies: string[] = [];
    for (const [name, value] of answer.headers) {
      if (name === 'set-cookie') cookies.push(value);
      else void reply.header(name, value);
    }
    if (cookies.length > 0) void reply.header('set-cookie', cookies);
    return reply.code(answer.status).send(answer.body);
  }

  // The spec's paths, each under its own rate rule (src/domain/rate-limits.ts).
  for (const url of [
    '/api/auth/sign-in/*',
    '/api/auth/sign-up/*',
    '/api/auth/otp/*',
    '/api/auth/email-otp/*',
    '/api/auth/sign-out',
  ])
    app.post(url, { schema: hidden, config }, pass);
  app.get('/api/auth/session', { schema: { hide: true }, config }, pass);
  // The rest of better-auth (password reset by code, ...) at the default rate.
  app.get('/api/auth/*', { schema: { hide: true }, config }, pass);
  app.post('/api/auth/*', { schema: hidden, config }, pass);

  app.post(
    '/api/auth/account-link',
    {
      config,
      schema: {
        tags: ['auth'],
        operationId: 'auth.claimAccountLink',
        summary: "Make an account with an account link's token (the first-start link makes the owner's)",
        security: [],
        body: Type.Object({
          token: Type.String({ minLength: 1, maxLength: 200 }),
          email: Type.String({ minLength: 3, maxLength: 320 }),
          password: Type.String({ minLength: 1, maxLength: 1000 }),
          name: Type.Optional(Type.String({ maxLength: 200 })),
        }),
        response: {
          201: Type.Object({ organizationId: Type.String(), email: Type.String(), role: Type.String() }),
          ...errorResponses(400, 403, 410, 429),
        },
      },
    },
    async (request, reply) => reply.code(201).send(await services.webSessions.claimAccountLink(request.body)),
  );

  // The page the first-start link opens (the token stays in the fragment, see createAccountLink).
  app.get('/setup', { schema: { hide: true }, config: { auth: false } }, async (_request, reply) =>
    reply
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('referrer-policy', 'no-referrer')
      .header(
        'content-security-policy',
        "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; form-action 'none'; frame-ancestors 'none'",
      )
      .send(ACCOUNT_SETUP_PAGE),
  );
};
