// Batches: create from a JSONL file (multipart), list, get, cancel, and the results file's redirect.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import { readFile } from 'node:fs/promises';
import type { Services } from '../../services/container.js';
import { AppError } from '../../domain/errors.js';
import { BATCH_FILE_MAX_BYTES } from '../../domain/batches.js';
import { requireAuth } from '../gatekeeper.js';
import { readMultipart } from '../multipart.js';
import { IdParams, errorResponses } from '../schemas/common.js';
import { BatchSchema, CreateBatchResponse, ListBatchesQuery, ResultsQuery } from '../schemas/batches.js';

export const batchRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const tags = ['batch'];
  const batches = services.batches;

  app.post(
    '/v2/batch',
    {
      schema: {
        tags,
        summary: 'Create a batch from a JSONL file (multipart: input or file, webhook_url, dry_run)',
        consumes: ['multipart/form-data'],
        response: { 200: CreateBatchResponse, ...errorResponses(400, 401, 402, 413, 422, 429) },
      },
    },
    async (request) => {
      const auth = requireAuth(request);
      const form = await readMultipart(request, {
        tmpDir: services.config.tempDir,
        fileFields: ['input', 'file'],
        limitCode: 'batch_input_invalid',
        maxFileBytes: {
          bytes: BATCH_FILE_MAX_BYTES,
          code: 'batch_input_invalid',
          message: `The input file is larger than 5 MB (${BATCH_FILE_MAX_BYTES} bytes), the most a batch file may have.`,
        },
      });
      try {
        if (form.files.length > 1)
          throw new AppError('batch_input_invalid', {
            field: 'input',
            message: 'Send one JSONL file, in the field "input" (or its alias "file").',
          });
        const file = form.files[0];
        return await batches.create(auth, {
          file: file ? await readFile(file.path) : null,
          webhookUrl: form.fields.webhook_url,
          dryRun: form.fields.dry_run,
        });
      } finally {
        await form.cleanup();
      }
    },
  );

  app.get(
    '/v2/batch',
    {
      schema: {
        tags,
        summary: 'List batches, newest first',
        querystring: ListBatchesQuery,
        response: { 200: Type.Array(BatchSchema), ...errorResponses(400, 401) },
      },
    },
    async (request) => {
      const auth = requireAuth(request);
      const q = request.query;
      const list = await batches.list(auth.organization.id, {
        status: q.status,
        createdAfter: q.created_after,
        createdBefore: q.created_before,
        limit: q.limit,
        cursor: q.cursor,
      });
      return await Promise.all(list.map((b) => batches.view(b)));
    },
  );

  app.get(
    '/v2/batch/:id',
    {
      schema: {
        tags,
        summary: 'Get a batch: status, metrics and the results URL',
        params: IdParams,
        response: { 200: BatchSchema, ...errorResponses(401, 404) },
      },
    },
    async (request) => {
      const auth = requireAuth(request);
      return await batches.view(await batches.get(auth.organization.id, request.params.id));
    },
  );

  app.post(
    '/v2/batch/:id/cancel',
    {
      schema: {
        tags,
        summary: 'Cancel a batch: records not finished are canceled',
        params: IdParams,
        response: { 200: BatchSchema, ...errorResponses(401, 404) },
      },
    },
    async (request) => {
      const auth = requireAuth(request);
      return await batches.view(await batches.cancel(auth.organization.id, request.params.id));
    },
  );

  // The signed outputUrl needs no API key; without a signature the key must be sent.
  app.get(
    '/v2/batch/:id/results',
    {
      config: { auth: false },
      schema: {
        tags,
        summary: 'Redirect (302) to the JSONL results file of a batch',
        params: IdParams,
        querystring: ResultsQuery,
        response: { ...errorResponses(401, 404) },
      },
    },
    async (request, reply) => {
      const b = await batches.resultsTarget(request.params.id, request.query, request.headers['x-api-key']);
      return reply.redirect(await batches.resultsFileUrl(b), 302);
    },
  );
};
