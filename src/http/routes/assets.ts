import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { Services } from '../../services/container.js';
import { assetView } from '../../services/assets.js';
import { parseTypesFilter } from '../../domain/assets.js';
import { AppError } from '../../domain/errors.js';
import { requireAuth } from '../gatekeeper.js';
import { planFileLimit, readMultipart } from '../multipart.js';
import { IdParams, errorResponses } from '../schemas/common.js';
import { TimelineSchema } from '../schemas/speech.js';
import { AssetListQuery, AssetPageSchema, AssetSchema, AssetUploadForm } from '../schemas/assets.js';

/** Accepted names of the file field: `file`, or the media kind. */
export const UPLOAD_FILE_FIELDS = ['file', 'video', 'audio', 'image'] as const;

export const assetRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const tags = ['assets'];
  const tmpDir = services.config.tempDir;

  app.post(
    '/v2/assets/upload',
    {
      schema: {
        tags,
        consumes: ['multipart/form-data'],
        body: AssetUploadForm,
        response: { 201: AssetSchema, ...errorResponses(400, 401, 404, 413, 415, 422, 429) },
      },
      // The body schema documents the form; readMultipart reads and checks the stream itself.
      validatorCompiler: () => () => true,
    },
    async (req, reply) => {
      const { organization, key } = requireAuth(req);
      const form = await readMultipart(req, {
        tmpDir,
        fileFields: UPLOAD_FILE_FIELDS,
        limitSuggestion: `Send one file of at most ${services.config.maxUploadBytes} bytes, at most 32 fields and at most 1 MiB per field.`,
        maxFileBytes: planFileLimit(organization, services.assets),
      });
      try {
        const file = form.files[0];
        if (!file || form.files.length > 1) {
          throw new AppError('invalid_request', {
            field: 'file',
            message: file ? 'Upload one file per request.' : 'The form has no file field (file).',
          });
        }
        const asset = await services.assets.upload({
          organization,
          keyId: key.id,
          path: file.path,
          size: file.size,
          fileName: file.fileName,
          name: form.fields.name,
          projectId: form.fields.projectId,
          visibility: form.fields.visibility,
        });
        return reply.code(201).send(assetView(asset, await services.assets.url(asset)) as never);
      } finally {
        await form.cleanup();
      }
    },
  );

  app.get(
    '/v2/assets',
    {
      schema: {
        tags,
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
      const body: Record<string, unknown> = { items, totalCount: page.totalCount };
      if (page.nextCursor !== null) body.nextCursor = page.nextCursor;
      return body as never;
    },
  );

  app.get(
    '/v2/assets/:id',
    { schema: { tags, params: IdParams, response: { 200: AssetSchema, ...errorResponses(401, 404) } } },
    async (req) => {
      const { organization } = requireAuth(req);
      const a = await services.assets.get(organization.id, req.params.id);
      return assetView(a, await services.assets.url(a)) as never;
    },
  );

  app.get(
    '/v2/assets/:id/timeline',
    {
      schema: {
        tags,
        summary: 'Word and phoneme timeline of a synthesized (TTS) asset',
        params: IdParams,
        response: { 200: TimelineSchema, ...errorResponses(401, 404) },
      },
    },
    async (req) => {
      const { organization } = requireAuth(req);
      return (await services.assets.timelineOf(organization.id, req.params.id)) as never;
    },
  );

  app.delete(
    '/v2/assets/:id',
    {
      schema: {
        tags,
        summary: 'Delete an asset (409 asset_in_use while a pending or processing generation uses it)',
        params: IdParams,
        response: { 200: AssetSchema, ...errorResponses(401, 404, 409) },
      },
    },
    async (req) => {
      const { organization } = requireAuth(req);
      return assetView(await services.assets.delete(organization.id, req.params.id)) as never;
    },
  );
};
