// Generations: create (JSON or multipart), get with long-poll, list, delete, download URL, estimate.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { Services } from '../../services/container.js';
import type { GenerationRecord } from '../../store/generations.js';
import type { Organization } from '../../store/organizations.js';
import { generationView } from '../../services/generation-view.js';
import { AppError } from '../../domain/errors.js';
import { parseIdempotencyKey } from '../../domain/idempotency.js';
import { PLAN_LIMITS } from '../../domain/plans.js';
import { requireAuth } from '../gatekeeper.js';
import { readMultipart, type MultipartForm } from '../multipart.js';
import { IdParams, errorResponses } from '../schemas/common.js';
import {
  CreateGenerationBody,
  EstimateBody,
  EstimateSchema,
  GenerationSchema,
  GetGenerationQuery,
  ListGenerationsQuery,
} from '../schemas/generations.js';

declare module 'fastify' {
  interface FastifyRequest {
    generationForm?: MultipartForm;
  }
}

const JSON_FIELDS = ['input', 'options', 'segments', 'dubParams', 'dialogueEdit'];
const FILE_FIELDS = ['video', 'image', 'audio'] as const;

function sha256File(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const h = createHash('sha256');
    createReadStream(path)
      .on('data', (c) => h.update(c))
      .on('error', reject)
      .on('end', () => resolve(h.digest('hex')));
  });
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

  async function outputUrl(g: GenerationRecord, org: Organization): Promise<string | null> {
    if (g.status !== 'COMPLETED') return null;
    if (!g.outputKey) return g.outputUrl;
    const key = PLAN_LIMITS[org.plan].watermark ? (g.watermarkedKey ?? g.outputKey) : g.outputKey;
    return services.blobs.signedUrl(key, { fileName: downloadName(g) });
  }

  function downloadName(g: GenerationRecord, requested?: string): string {
    const base = (requested ?? g.outputFileName ?? `generation-${g.id}`).replace(/\.[A-Za-z0-9]{1,5}$/, '');
    return `${base}.${g.outputFormat}`;
  }

  const view = async (
    g: GenerationRecord,
    org: Organization,
    extra: { progress?: boolean; quality?: boolean } = {},
  ) =>
    generationView(g, {
      outputUrl: await outputUrl(g, org),
      includeProgress: extra.progress,
      includeQuality: extra.quality,
    });

  // Multipart bodies become the same object as a JSON body before schema validation.
  async function parseMultipartBody(request: FastifyRequest): Promise<void> {
    if (!request.isMultipart()) return;
    const form = await readMultipart(request, {
      tmpDir: join(services.config.dataDir, 'tmp'),
      fileFields: FILE_FIELDS,
    });
    request.generationForm = form;
    const body: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(form.fields)) {
      if (JSON_FIELDS.includes(k)) {
        try {
          body[k] = JSON.parse(v);
        } catch {
          throw new AppError('invalid_request', { field: k, message: `${k} must be a JSON string` });
        }
      } else body[k] = v;
    }
    const seen = new Set<string>();
    for (const f of form.files) {
      if (seen.has(f.fieldName))
        throw new AppError('invalid_request', {
          field: f.fieldName,
          message: `only one ${f.fieldName} file is allowed`,
        });
      seen.add(f.fieldName);
    }
    // A file replaces input items of the same type; its assetId is filled in after the idempotency check.
    const input = Array.isArray(body.input) ? (body.input as Record<string, unknown>[]) : [];
    body.input = [
      ...input.filter((i) => !seen.has(String(i?.type))),
      ...[...seen].map((type) => ({ type, assetId: `upload:${type}` })),
    ];
    request.body = body;
  }

  app.post(
    '/v2/generate',
    {
      preValidation: async (request) => parseMultipartBody(request),
      onResponse: async (request) => {
        await request.generationForm?.cleanup();
      },
      schema: {
        tags,
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
      const key = parseIdempotencyKey(request.headers['idempotency-key']);
      const form = request.generationForm;
      let body = request.body as Record<string, unknown>;
      let fingerprintPayload: unknown = body;
      if (form) {
        const hashes: Record<string, string> = {};
        for (const f of form.files) hashes[f.fieldName] = await sha256File(f.path);
        fingerprintPayload = { ...body, files: hashes };
      }
      const result = await gens.create(auth, body as never, {
        idempotencyKey: key,
        fingerprintPayload,
        prepare: form
          ? async () => {
              // Rule 2: each uploaded file is saved as an asset and passed by assetId.
              const ids: Record<string, string> = {};
              for (const f of form.files) {
                const a = await services.assets.upload({
                  organization: auth.organization,
                  keyId: auth.key.id,
                  path: f.path,
                  size: f.size,
                  fileName: f.fileName,
                });
                ids[f.fieldName] = a.id;
              }
              body = {
                ...body,
                input: (body.input as Record<string, unknown>[]).map((i) =>
                  typeof i.assetId === 'string' && i.assetId.startsWith('upload:')
                    ? { type: i.type, assetId: ids[String(i.type)] }
                    : i,
                ),
              };
              return body as never;
            }
          : undefined,
      });
      if (result.replayed) void reply.header('Idempotency-Replayed', 'true');
      return reply
        .code(result.replayed ? 200 : 201)
        .send((await view(result.generation, auth.organization)) as never);
    },
  );

  app.get(
    '/v2/generate/:id',
    {
      schema: {
        tags,
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
        g = await gens.get(auth.organization.id, request.params.id);
      }
      return view(g, auth.organization, {
        progress: include.has('progress'),
        quality: include.has('quality'),
      }) as never;
    },
  );

  app.get(
    '/v2/generations',
    {
      schema: {
        tags,
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
      return (await Promise.all(list.map((g) => view(g, auth.organization)))) as never;
    },
  );

  app.delete(
    '/v2/generations/:id',
    {
      schema: {
        tags,
        params: IdParams,
        response: { 200: GenerationSchema, ...errorResponses(401, 404, 409) },
      },
    },
    async (request) => {
      const auth = requireAuth(request);
      return (await view(
        await gens.delete(auth.organization.id, request.params.id),
        auth.organization,
      )) as never;
    },
  );

  // The official client's estimateCost() posts a whole generation request here and expects a list.
  app.post(
    '/v2/analyze/cost',
    {
      schema: {
        tags,
        summary: 'Estimate the cost of a generation request from its media (probed, not stored)',
        body: CreateGenerationBody,
        response: { 200: Type.Array(EstimateSchema), ...errorResponses(400, 401, 422) },
      },
    },
    async (request) => {
      const auth = requireAuth(request);
      return [await gens.analyzeCost(auth.organization, request.body as never)];
    },
  );

  app.get(
    '/v2/generations/:id/download',
    {
      schema: {
        tags,
        summary: 'A signed download URL for the output (text/plain)',
        params: IdParams,
        querystring: Type.Object({ fileName: Type.Optional(Type.String({ maxLength: 255 })) }),
        response: { 200: Type.String(), ...errorResponses(400, 401, 404, 409, 422, 503) },
      },
    },
    async (request, reply) => {
      const auth = requireAuth(request);
      const t = await gens.downloadTarget(auth.organization, request.params.id);
      let url = t.url;
      if (t.key) {
        try {
          if (!(await services.blobs.exists(t.key))) throw new AppError('generation_output_unavailable');
          // x-accelerate has no faster endpoint on a local store: the standard URL is the fallback.
          url = await services.blobs.signedUrl(t.key, {
            fileName: downloadName(t.generation, request.query.fileName),
          });
        } catch (err) {
          if (err instanceof AppError) throw err;
          throw new AppError('generation_download_unavailable', { headers: { 'Retry-After': '5' } });
        }
      }
      return reply.type('text/plain; charset=utf-8').send(url as string);
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
    { schema: { ...estimateSchema, summary: 'Estimate the cost of a generation' } },
    estimate,
  );
  app.post(
    '/v2/generate/estimate-cost',
    { schema: { ...estimateSchema, summary: 'Alias of /v2/generations/estimate' } },
    estimate,
  );
};
