// Generations: create (JSON or multipart), get with long-poll, list, delete, download URL, estimate.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { Services } from '../../services/index.js';
import type { GenerationRecord } from '../../store/generations.js';
import { AppError } from '../../domain/errors.js';
import { parseIdempotencyKey } from '../../domain/idempotency.js';
import { formToGenerationBody, GENERATION_FILE_FIELDS } from '../../services/generation-uploads.js';
import { requireAuth } from '../gatekeeper.js';
import { planFileLimit, readMultipart, type MultipartForm } from '../multipart.js';
import { IdParams, errorResponses } from '../schemas/common.js';
import {
  CreateGenerationBody,
  EstimateBody,
  EstimateSchema,
  GenerationForm,
  GenerationSchema,
  GetGenerationQuery,
  ListGenerationsQuery,
} from '../schemas/generations.js';

declare module 'fastify' {
  interface FastifyRequest {
    generationForm?: MultipartForm;
  }
}

function csv(v: string | undefined): string[] | undefined {
  const list = v
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  return list && list.length ? list : undefined;
}

export const generationRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (
  app,
  { services },
) => {
  const tags = ['generations'];
  const gens = services.generations;

  // Multipart bodies become the same object as a JSON body before schema validation.
  async function parseMultipartBody(request: FastifyRequest): Promise<void> {
    if (!request.isMultipart()) return;
    const form = await readMultipart(request, {
      tmpDir: services.config.tempDir,
      fileFields: GENERATION_FILE_FIELDS,
      maxFileBytes: planFileLimit(requireAuth(request).organization, services.assets),
    });
    request.generationForm = form;
    request.body = formToGenerationBody(form);
  }

  app.post(
    '/v2/generate',
    {
      preValidation: async (request) => parseMultipartBody(request),
      onResponse: async (request) => {
        await request.generationForm?.cleanup();
      },
      config: {
        // The form becomes the JSON body before validation, so only the document shows its fields.
        swaggerTransform: ({ schema, url }) => ({
          schema: {
            ...schema,
            body: {
              content: {
                'application/json': { schema: CreateGenerationBody },
                'multipart/form-data': { schema: GenerationForm },
              },
            },
          },
          url,
        }),
      },
      schema: {
        tags,
        operationId: 'generations.create',
        summary: 'Create a generation (application/json or multipart/form-data)',
        body: CreateGenerationBody,
        response: {
          200: GenerationSchema,
          201: GenerationSchema,
          ...errorResponses(400, 401, 409, 410, 413, 422, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const auth = requireAuth(request);
      const result = await gens.create(auth, request.body, {
        idempotencyKey: parseIdempotencyKey(request.headers['idempotency-key']),
        upload: request.generationForm,
      });
      if (result.replayed) void reply.header('Idempotency-Replayed', 'true');
      return reply
        .code(result.replayed ? 200 : 201)
        .send(await gens.view(result.generation, auth.organization));
    },
  );

  app.get(
    '/v2/generate/:id',
    {
      config: { authPreload: 'generation' },
      schema: {
        tags,
        operationId: 'generations.get',
        summary: 'Get a generation; wait=true long-polls until a terminal state or the timeout',
        params: IdParams,
        querystring: GetGenerationQuery,
        response: { 200: GenerationSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (request, reply) => {
      const auth = requireAuth(request);
      const q = request.query;
      const include = new Set(csv(q.include) ?? []);
      if (q.timeout !== undefined && (q.timeout < 1 || q.timeout > 10)) {
        throw new AppError('invalid_request', {
          field: 'timeout',
          message: 'timeout must be from 1 to 10 seconds',
        });
      }
      if (q.wait && include.has('progress')) {
        throw new AppError('invalid_request', {
          field: 'include',
          message: 'wait=true cannot be combined with include=progress',
        });
      }
      let g: GenerationRecord;
      if (q.wait) {
        const timeout = q.timeout ?? 5;
        const ac = new AbortController();
        request.raw.once('close', () => ac.abort());
        g = await gens.wait(auth.organization.id, request.params.id, timeout * 1000, ac.signal);
        void reply
          .header('Retry-After', '2')
          .header('X-Wait-Mode', 'long_poll')
          .header('X-Wait-Timeout-Seconds', String(timeout));
      } else {
        g = await gens.getFor(auth, request.params.id);
      }
      const { view, text } = await gens.viewWithJson(
        g,
        auth.organization,
        { progress: include.has('progress'), quality: include.has('quality') },
        (v) => {
          const out = reply.serialize(v);
          return typeof out === 'string' ? out : new TextDecoder().decode(out);
        },
      );
      // The text this route's serializer wrote (kept with a cached record) is what goes out.
      return reply
        .type('application/json; charset=utf-8')
        .serializer(() => text)
        .send(view);
    },
  );

  app.get(
    '/v2/generations',
    {
      schema: {
        tags,
        operationId: 'generations.list',
        summary: 'List generations, newest first',
        querystring: ListGenerationsQuery,
        response: { 200: Type.Array(GenerationSchema), ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      const auth = requireAuth(request);
      const q = request.query;
      const list = await gens.list(auth.organization.id, {
        status: csv(q.status)?.map((s) => s.toUpperCase()),
        ids: csv(q.ids),
        source: csv(q.source),
        projectId: q.projectId,
        limit: q.limit,
        cursor: q.cursor,
      });
      return await Promise.all(list.map((g) => gens.view(g, auth.organization)));
    },
  );

  app.delete(
    '/v2/generations/:id',
    {
      schema: {
        tags,
        operationId: 'generations.delete',
        summary: 'Delete a finished generation and its output (409 while it is pending or processing)',
        params: IdParams,
        response: { 200: GenerationSchema, ...errorResponses(401, 404, 409) },
      },
    },
    async (request) => {
      const auth = requireAuth(request);
      return await gens.view(await gens.delete(auth.organization.id, request.params.id), auth.organization);
    },
  );

  app.post(
    '/v2/generations/:id/cancel',
    {
      schema: {
        tags,
        operationId: 'generations.cancel',
        summary:
          'Cancel a generation: a pending one at once, a processing one at its next heartbeat (an ended one is returned as it is)',
        params: IdParams,
        response: { 200: GenerationSchema, ...errorResponses(401, 404) },
      },
    },
    async (request) => {
      const auth = requireAuth(request);
      return await gens.view(
        await gens.cancelFor(auth.organization.id, request.params.id),
        auth.organization,
      );
    },
  );

  // The official client's estimateCost() posts a whole generation request here and expects a list.
  app.post(
    '/v2/analyze/cost',
    {
      schema: {
        tags,
        operationId: 'generations.estimateCost',
        summary: 'Estimate the cost of a generation request from its media (probed, not stored)',
        body: CreateGenerationBody,
        response: { 200: Type.Array(EstimateSchema), ...errorResponses(400, 401, 422) },
      },
    },
    async (request) => {
      const auth = requireAuth(request);
      return [await gens.analyzeCost(auth.organization, request.body)];
    },
  );

  app.get(
    '/v2/generations/:id/download',
    {
      schema: {
        tags,
        operationId: 'generations.getDownloadUrl',
        summary: 'A signed download URL for the output (text/plain)',
        params: IdParams,
        querystring: Type.Object({ fileName: Type.Optional(Type.String({ maxLength: 255 })) }),
        response: { 200: Type.String(), ...errorResponses(400, 401, 404, 409, 422, 503) },
      },
    },
    async (request, reply) => {
      const auth = requireAuth(request);
      const url = await gens.downloadUrl(auth.organization, request.params.id, request.query.fileName);
      return reply.type('text/plain; charset=utf-8').send(url);
    },
  );

  const estimate = async (
    request: FastifyRequest<{ Body: { model: string; duration: number; fps?: number } }>,
  ) => {
    const auth = requireAuth(request);
    return gens.estimate(auth.organization, request.body);
  };
  const estimateSchema = {
    tags,
    body: EstimateBody,
    response: { 200: EstimateSchema, ...errorResponses(400, 401, 422) },
  };
  app.post(
    '/v2/generations/estimate',
    {
      schema: {
        ...estimateSchema,
        operationId: 'generations.estimate',
        summary: 'Estimate the cost of a generation from its model and duration',
      },
    },
    estimate,
  );
  app.post(
    '/v2/generate/estimate-cost',
    {
      schema: {
        ...estimateSchema,
        operationId: 'generations.estimateAlias',
        summary: 'Alias of /v2/generations/estimate',
      },
    },
    estimate,
  );
};
