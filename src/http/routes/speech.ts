// Text-to-speech (sync and async jobs) and voices. Thin: each route is one service call.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { Services } from '../../services/index.js';
import { parseIdempotencyKey } from '../../domain/idempotency.js';
import { requireAuth } from '../gatekeeper.js';
import { IdParams, errorResponses } from '../schemas/common.js';
import {
  CloneVoiceBody,
  TtsBody,
  TtsJobSchema,
  TtsSpeechSchema,
  VoiceListQuery,
  VoiceSchema,
} from '../schemas/speech.js';

export const speechRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const { tts, voices } = services;

  app.post(
    '/v2/tts',
    {
      schema: {
        tags: ['text-to-speech'],
        operationId: 'tts.synthesize',
        summary:
          'Synthesize speech now; the audio is stored as a TTS asset (its url works as an audio input)',
        body: TtsBody,
        response: { 200: TtsSpeechSchema, ...errorResponses(400, 401, 402, 422, 429, 500, 503, 504) },
      },
    },
    async (request, reply) => {
      // A client that goes away before the answer stops the synthesis (the response closes unfinished).
      const ac = new AbortController();
      reply.raw.once('close', () => {
        if (!reply.raw.writableFinished) ac.abort();
      });
      return tts.synthesize(requireAuth(request), request.body, ac.signal);
    },
  );

  app.post(
    '/v2/tts/jobs',
    {
      schema: {
        tags: ['text-to-speech'],
        operationId: 'tts.createJob',
        summary: 'Accept an asynchronous text-to-speech job (Idempotency-Key optional)',
        body: TtsBody,
        response: {
          200: TtsJobSchema,
          202: TtsJobSchema,
          ...errorResponses(400, 401, 402, 409, 410, 422, 429, 503),
        },
      },
    },
    async (request, reply) => {
      const auth = requireAuth(request);
      const r = await tts.createJob(
        auth,
        request.body,
        parseIdempotencyKey(request.headers['idempotency-key']),
      );
      if (r.replayed) void reply.header('Idempotency-Replayed', 'true');
      void reply.header('Location', `/v2/tts/jobs/${r.job.id}`);
      if (r.job.status === 'PENDING' || r.job.status === 'PROCESSING') void reply.header('Retry-After', '3');
      return reply.code(r.replayed ? 200 : 202).send(await tts.jobView(r.job));
    },
  );

  app.get(
    '/v2/tts/jobs/:id',
    {
      schema: {
        tags: ['text-to-speech'],
        operationId: 'tts.getJob',
        summary: 'Get a text-to-speech job',
        params: IdParams,
        response: { 200: TtsJobSchema, ...errorResponses(401, 404) },
      },
    },
    async (request, reply) => {
      const auth = requireAuth(request);
      const j = await tts.getJob(auth.organization.id, request.params.id);
      if (j.status === 'PENDING' || j.status === 'PROCESSING') void reply.header('Retry-After', '3');
      return await tts.jobView(j);
    },
  );

  app.get(
    '/v2/voices',
    {
      schema: {
        tags: ['voices'],
        operationId: 'voices.list',
        summary: 'List the voices the organization can use: stock and cloned',
        querystring: VoiceListQuery,
        response: { 200: Type.Array(VoiceSchema), ...errorResponses(400, 401, 402, 503, 504) },
      },
    },
    async (request) => voices.list(requireAuth(request), request.query.provider),
  );

  app.get(
    '/v2/voices/:id',
    {
      schema: {
        tags: ['voices'],
        operationId: 'voices.get',
        summary: 'Get a voice',
        params: IdParams,
        querystring: VoiceListQuery,
        response: { 200: VoiceSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request) => voices.get(requireAuth(request), request.params.id, request.query.provider),
  );

  app.post(
    '/v2/voices',
    {
      schema: {
        tags: ['voices'],
        operationId: 'voices.create',
        summary: 'Clone a voice from a sample stored here (assetId, or the url of an upload)',
        body: CloneVoiceBody,
        response: { 201: VoiceSchema, ...errorResponses(400, 401, 403, 409, 413, 422, 429, 503) },
      },
    },
    async (request, reply) => reply.code(201).send(await voices.clone(requireAuth(request), request.body)),
  );

  app.delete(
    '/v2/voices/:id',
    {
      schema: {
        tags: ['voices'],
        operationId: 'voices.delete',
        summary: 'Delete a cloned voice',
        params: IdParams,
        response: { 200: Type.Boolean(), ...errorResponses(400, 401, 404, 422) },
      },
    },
    async (request) => voices.delete(requireAuth(request), request.params.id),
  );

  // The organization's own voice-provider accounts (the spec's "own connected account").
  const ProviderParams = Type.Object({
    provider: Type.Union([Type.Literal('openai'), Type.Literal('elevenlabs'), Type.Literal('local')]),
  });
  const Connection = Type.Object({ provider: Type.String(), connected: Type.Boolean() });

  app.get(
    '/v2/organizations/provider-keys',
    {
      schema: {
        tags: ['voices'],
        operationId: 'organizations.listProviderKeys',
        summary: 'Which voice providers the organization connected its own account for (never the keys)',
        response: { 200: Type.Array(Connection), ...errorResponses(401) },
      },
    },
    async (request) => services.speech.connected(requireAuth(request).organization),
  );

  app.put(
    '/v2/organizations/provider-keys/:provider',
    {
      schema: {
        tags: ['voices'],
        operationId: 'organizations.setProviderKey',
        summary:
          "Connect the organization's own provider account (owner or admin key); the key is tried first",
        params: ProviderParams,
        body: Type.Object({ apiKey: Type.String({ minLength: 1, maxLength: 512 }) }),
        response: { 200: Connection, ...errorResponses(400, 401, 402, 403, 422, 503, 504) },
      },
    },
    async (request) =>
      services.speech.setOwnKey(requireAuth(request), request.params.provider, request.body.apiKey),
  );

  app.delete(
    '/v2/organizations/provider-keys/:provider',
    {
      schema: {
        tags: ['voices'],
        operationId: 'organizations.deleteProviderKey',
        summary: "Disconnect the organization's own provider account (owner or admin key)",
        params: ProviderParams,
        response: { 200: Connection, ...errorResponses(400, 401, 403) },
      },
    },
    async (request) => services.speech.setOwnKey(requireAuth(request), request.params.provider, null),
  );
};
