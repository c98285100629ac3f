import { Type } from '@sinclair/typebox';
import { ASSET_SORTS, ASSET_TYPES, ASSET_VISIBILITIES } from '../../domain/assets.js';
import { MAX_CONTENT_TYPE_LENGTH } from '../../storage/url-signer.js';
import { Nullable } from './common.js';

/** A string enum, typed as the union of its values. */
const literals = <T extends readonly string[]>(values: T) =>
  Type.Unsafe<T[number]>({ type: 'string', enum: [...values] });

/** Shaped like the official client's Asset; projectId and organizationId are ours. */
export const AssetSchema = Type.Object(
  {
    id: Type.String({ format: 'uuid' }),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
    name: Type.String(),
    url: Type.Optional(Type.String({ description: 'Signed URL of the media, valid for seven days.' })),
    size: Type.Integer({ description: 'File size in bytes.' }),
    format: Type.Optional(Type.String({ description: 'File format, e.g. mp4, wav, png.' })),
    type: literals(ASSET_TYPES),
    inputType: Type.String({ description: 'Source of the asset: UPLOAD.' }),
    durationSeconds: Type.Optional(Type.Number()),
    visibility: literals(ASSET_VISIBILITIES),
    width: Type.Optional(Type.Integer()),
    height: Type.Optional(Type.Integer()),
    projectId: Nullable(Type.String()),
    organizationId: Type.String(),
  },
  { $id: 'Asset' },
);

export const AssetPageSchema = Type.Object(
  {
    items: Type.Array(AssetSchema),
    nextCursor: Type.Optional(Type.String({ description: 'Absent on the last page.' })),
    totalCount: Type.Integer({ description: 'Number of assets matching the filters.' }),
  },
  { $id: 'PaginatedAssets' },
);

export const AssetListQuery = Type.Object({
  projectId: Type.Optional(Type.String({ maxLength: 200 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
  cursor: Type.Optional(Type.String({ maxLength: 2000 })),
  searchQuery: Type.Optional(Type.String({ maxLength: 255 })),
  sortBy: Type.Optional(literals(ASSET_SORTS)),
  types: Type.Optional(
    Type.Array(Type.String({ maxLength: 100 }), {
      maxItems: 10,
      description: 'AUDIO, VIDEO, IMAGE: comma-separated, repeated, or a JSON array.',
    }),
  ),
});

/**
 * The upload form. The multipart helper streams the file to disk first; the form is then checked as
 * { fields…, file: where it was stored }. The service cleans the fields: names are cut to 255
 * characters, visibility is read in any case.
 */
export const AssetUploadForm = Type.Object({
  file: Type.String({
    format: 'binary',
    description: 'The media file (also accepted under the names video, audio or image).',
  }),
  name: Type.Optional(Type.String({ description: 'Cut to 255 characters.' })),
  projectId: Type.Optional(Type.String()),
  visibility: Type.Optional(Type.String({ description: `${ASSET_VISIBILITIES.join(' or ')}, in any case.` })),
});

/** POST /v2/assets/upload with a JSON body: announce a direct upload. */
export const UploadRequestBody = Type.Object(
  {
    fileName: Type.String({ minLength: 1, maxLength: 255 }),
    contentType: Type.String({
      minLength: 3,
      maxLength: MAX_CONTENT_TYPE_LENGTH,
      description: 'The media type the file is PUT with, e.g. video/mp4.',
    }),
    size: Type.Integer({ minimum: 1, description: 'The exact size of the file in bytes (at most 5 GiB).' }),
  },
  { $id: 'CreateUploadRequest' },
);

export const UploadTargetSchema = Type.Object(
  {
    uploadUrl: Type.String({
      description: 'PUT the file here, with the same Content-Type and no API key, before it expires.',
    }),
    url: Type.String({ description: 'Where the file will be readable: register it with POST /v2/assets.' }),
    expiresIn: Type.Integer({ description: 'Seconds until uploadUrl expires.' }),
  },
  { $id: 'CreateUploadResponse' },
);

/** POST /v2/assets: register a direct upload as an asset. */
export const RegisterAssetBody = Type.Object({
  url: Type.String({
    minLength: 1,
    maxLength: 4096,
    description: 'The url POST /v2/assets/upload returned.',
  }),
  type: literals(ASSET_TYPES),
  name: Type.Optional(Type.String({ maxLength: 255 })),
  visibility: Type.Optional(literals(ASSET_VISIBILITIES)),
  projectId: Type.Optional(Type.String({ maxLength: 200 })),
});

export const UploadedAssetQuery = Type.Object({
  contentSha256: Type.String({ pattern: '^[0-9a-fA-F]{64}$', description: 'SHA-256 of the file, hex.' }),
  type: Type.Optional(literals(ASSET_TYPES)),
});

export const UploadedAssetSchema = Type.Object({ asset: Type.Union([AssetSchema, Type.Null()]) });
