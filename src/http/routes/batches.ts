// Batches: create from a JSONL file (multipart), list, get, cancel, and the results file's redirect.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from '@sinclair/typebox';
import { readFile } from 'node:fs/promises';
import type { Services } from '../../services/index.js';
import { AppError } from '../../domain/errors.js';
import { BATCH_FILE_MAX_BYTES } from '../../domain/batches.js';
import { requireAuth } from '../gatekeeper.js';
import { readMultipart, type MultipartForm } from '../multipart.js';
import { IdParams, errorResponses } from '../schemas/common.js';
import {
  BatchForm,
  BatchSchema,
  CreateBatchResponse,
  ListBatchesQuery,
  ResultsQuery,
} from '../schemas/batches.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** POST /v2/batch: the form read before validation. */
    batchForm?: MultipartForm;
  }
}

/** The form as its schema sees it; input is where the file was stored (never a text field's value). */
function batchFormBody(form: MultipartForm): Static<typeof BatchForm> {
  const file = form.files[0];
  const { webhook_url, dry_run } = form.fields;
  return {
    ...(file ? { input: file.path } : {}),
    ...(webhook_url !== undefined ? { webhook_url } : {}),
    ...(dry_run !== undefined ? { dry_run } : {}),
  };
}

export const batchRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const tags = ['batch'];
  const batches = services.batches;

  app.post(
    '/v2/batch',
    {
      // The form is read (the file streamed to disk) before validation; its fields and the file's
      // place are then checked by the form's schema like any body.
      preValidation: async (request) => {
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
        request.batchForm = form;
        if (form.files.length > 1)
          throw new AppError('batch_input_invalid', {
            field: 'input',
            message: 'Send one JSONL file, in the field "input" (or its alias "file").',
          });
        request.body = batchFormBody(form);
      },
      onResponse: async (request) => {
        await request.batchForm?.cleanup();
      },
      schema: {
        tags,
        operationId: 'batch.create',
        summary: 'Create a batch from a JSONL file (multipart: input or file, webhook_url, dry_run)',
        consumes: ['multipart/form-data'],
        body: BatchForm,
        response: { 200: CreateBatchResponse, ...errorResponses(400, 401, 402, 413, 422, 429) },
      },
    },
    async (request) => {
      const auth = requireAuth(request);
      const { input, webhook_url, dry_run } = request.body;
      return batches.create(auth, {
        file: input === undefined ? null : await readFile(input),
        webhookUrl: webhook_url,
        dryRun: dry_run,
      });
    },
  );

  app.get(
    '/v2/batch',
    {
      schema: {
        tags,
        operationId: 'batch.list',
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
        operationId: 'batch.get',
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
        operationId: 'batch.cancel',
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
        operationId: 'batch.getResults',
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
