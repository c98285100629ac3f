import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import type { Services } from '../../services/index.js';
import { assetView } from '../../services/assets.js';
import { parseTypesFilter } from '../../domain/assets.js';
import { AppError } from '../../domain/errors.js';
import { requireAuth } from '../gatekeeper.js';
import { planFileLimit, readMultipart, type MultipartForm } from '../multipart.js';
import { IdParams, errorResponses } from '../schemas/common.js';
import { TimelineSchema } from '../schemas/speech.js';
import {
  AssetListQuery,
  AssetPageSchema,
  AssetSchema,
  AssetUploadForm,
  RegisterAssetBody,
  UploadRequestBody,
  UploadTargetSchema,
  UploadedAssetQuery,
  UploadedAssetSchema,
} from '../schemas/assets.js';

/** Accepted names of the file field: `file`, or the media kind. */
export const UPLOAD_FILE_FIELDS = ['file', 'video', 'audio', 'image'] as const;

declare module 'fastify' {
  interface FastifyRequest {
    /** POST /v2/assets/upload as multipart/form-data: the form read before validation. */
    assetForm?: MultipartForm;
  }
}

type UploadRequest = Static<typeof UploadRequestBody>;
type AssetUploadFields = Static<typeof AssetUploadForm>;

function isJsonRequest(req: FastifyRequest): boolean {
  const type = req.headers['content-type'];
  return typeof type === 'string' && type.split(';')[0]!.trim().toLowerCase() === 'application/json';
}

export const assetRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const tags = ['assets'];
  const tmpDir = services.config.tempDir;

  app.post<{ Body: UploadRequest | AssetUploadFields }>(
    '/v2/assets/upload',
    {
      // A multipart form is read (files streamed to disk) before validation; its fields and file are
      // then checked by the form's schema like any body.
      preValidation: async (req) => {
        if (!req.isMultipart()) return;
        const form = await readMultipart(req, {
          tmpDir,
          fileFields: UPLOAD_FILE_FIELDS,
          limitSuggestion: `Send one file of at most ${services.config.maxUploadBytes} bytes, at most 32 fields and at most 1 MiB per field.`,
          maxFileBytes: planFileLimit(requireAuth(req).organization, services.assets),
        });
        req.assetForm = form;
        const file = form.files[0];
        if (!file || form.files.length > 1) {
          throw new AppError('invalid_request', {
            field: 'file',
            message: file ? 'Upload one file per request.' : 'The form has no file field (file).',
          });
        }
        req.body = { ...form.fields, file: file.path };
      },
      onResponse: async (req) => {
        await req.assetForm?.cleanup();
      },
      schema: {
        tags,
        operationId: 'assets.createUpload',
        summary:
          'application/json {fileName, contentType, size}: a direct upload (201 {uploadUrl, url, expiresIn}); multipart/form-data: the file itself (201 Asset)',
        body: {
          content: {
            'application/json': { schema: UploadRequestBody },
            'multipart/form-data': { schema: AssetUploadForm },
          },
        },
        response: {
          201: Type.Union([UploadTargetSchema, AssetSchema]),
          ...errorResponses(400, 401, 404, 413, 415, 422, 429),
        },
      },
    },
    async (req, reply) => {
      const { organization, key } = requireAuth(req);
      const form = req.assetForm;
      if (form) {
        const file = form.files[0]!;
        const asset = await services.assets.upload({
          organization,
          keyId: key?.id ?? null,
          path: file.path,
          size: file.size,
          fileName: file.fileName,
          name: form.fields.name,
          projectId: form.fields.projectId,
          visibility: form.fields.visibility,
        });
        return reply.code(201).send(assetView(asset, await services.assets.url(asset)));
      }
      // Other media types reach the handler unchecked (only JSON and multipart have a schema).
      const body = req.body;
      if (!isJsonRequest(req) || !('fileName' in body)) {
        throw new AppError('unsupported_media_type', {
          message:
            'Send application/json {fileName, contentType, size} to upload directly, or multipart/form-data with the file.',
        });
      }
      if (body.size > services.config.maxUploadBytes) {
        throw new AppError('invalid_request', {
          field: 'size',
          message: `size must be at most ${services.config.maxUploadBytes} bytes.`,
        });
      }
      const target = await services.assets.presignUpload({
        organization,
        keyId: key?.id ?? null,
        fileName: body.fileName,
        contentType: body.contentType,
        size: body.size,
      });
      return reply.code(201).send(target);
    },
  );

  app.post(
    '/v2/assets',
    {
      schema: {
        tags,
        operationId: 'assets.create',
        summary: 'Register a direct upload (the url of POST /v2/assets/upload, after the PUT) as an asset',
        body: RegisterAssetBody,
        response: { 201: AssetSchema, ...errorResponses(400, 401, 404, 422, 429) },
      },
    },
    async (req, reply) => {
      const { organization, key } = requireAuth(req);
      const asset = await services.assets.register({
        organization,
        keyId: key?.id ?? null,
        url: req.body.url,
        type: req.body.type,
        name: req.body.name,
        visibility: req.body.visibility,
        projectId: req.body.projectId,
        tmpDir,
      });
      return reply.code(201).send(assetView(asset, await services.assets.url(asset)));
    },
  );

  app.get(
    '/v2/assets/uploaded',
    {
      schema: {
        tags,
        operationId: 'assets.findUploaded',
        summary: 'The newest asset with this SHA-256 (and type) stored with this API key, or null',
        querystring: UploadedAssetQuery,
        response: { 200: UploadedAssetSchema, ...errorResponses(400, 401) },
      },
    },
    async (req) => {
      const { organization, key } = requireAuth(req);
      const a = await services.assets.findUploaded(
        organization.id,
        key?.id ?? null,
        req.query.contentSha256,
        req.query.type,
      );
      return { asset: a ? assetView(a, await services.assets.url(a)) : null };
    },
  );

  app.get(
    '/v2/assets/:id/download',
    {
      schema: {
        tags,
        operationId: 'assets.getDownloadUrl',
        summary: 'A signed URL (text/plain) that downloads the file; fetch it without the API key',
        params: IdParams,
        produces: ['text/plain'],
        response: { 200: Type.String(), ...errorResponses(401, 404) },
      },
    },
    async (req, reply) => {
      const { organization } = requireAuth(req);
      const url = await services.assets.downloadUrl(organization.id, req.params.id);
      return reply.type('text/plain; charset=utf-8').send(url);
    },
  );

  app.get(
    '/v2/assets',
    {
      schema: {
        tags,
        operationId: 'assets.list',
        summary: 'List assets, one page at a time (filter, search, sort)',
        querystring: AssetListQuery,
        response: { 200: AssetPageSchema, ...errorResponses(400, 401, 404) },
      },
    },
    async (req) => {
      const { organization } = requireAuth(req);
      const q = req.query;
      const page = await services.assets.list(organization.id, {
        projectId: q.projectId,
        limit: q.limit,
        cursor: q.cursor,
        searchQuery: q.searchQuery,
        sortBy: q.sortBy,
        types: parseTypesFilter(q.types),
      });
      const items = await Promise.all(
        page.items.map(async (a) => assetView(a, await services.assets.url(a))),
      );
      // nextCursor is left out on the last page.
      return page.nextCursor === null
        ? { items, totalCount: page.totalCount }
        : { items, totalCount: page.totalCount, nextCursor: page.nextCursor };
    },
  );

  app.get(
    '/v2/assets/:id',
    {
      schema: {
        tags,
        operationId: 'assets.get',
        summary: 'Get an asset',
        params: IdParams,
        response: { 200: AssetSchema, ...errorResponses(401, 404) },
      },
    },
    async (req) => {
      const { organization } = requireAuth(req);
      const a = await services.assets.get(organization.id, req.params.id);
      return assetView(a, await services.assets.url(a));
    },
  );

  app.get(
    '/v2/assets/:id/timeline',
    {
      schema: {
        tags,
        operationId: 'assets.getTimeline',
        summary: 'Word and phoneme timeline of a synthesized (TTS) asset',
        params: IdParams,
        response: { 200: TimelineSchema, ...errorResponses(401, 404) },
      },
    },
    async (req) => {
      const { organization } = requireAuth(req);
      return await services.assets.timelineOf(organization.id, req.params.id);
    },
  );

  app.delete(
    '/v2/assets/:id',
    {
      schema: {
        tags,
        operationId: 'assets.delete',
        summary: 'Delete an asset (409 asset_in_use while a pending or processing generation uses it)',
        params: IdParams,
        response: { 200: AssetSchema, ...errorResponses(401, 404, 409) },
      },
    },
    async (req) => {
      const { organization } = requireAuth(req);
      return assetView(await services.assets.delete(organization.id, req.params.id));
    },
  );
};
