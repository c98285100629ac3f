import { Type, type TSchema } from '@sinclair/typebox';

export const ErrorBodySchema = Type.Object(
  {
    message: Type.String(),
    statusCode: Type.Integer(),
    errorCode: Type.Optional(Type.String()),
    suggestion: Type.Optional(Type.String()),
    field: Type.Optional(Type.String()),
    docsUrl: Type.Optional(Type.String()),
    requestId: Type.Optional(Type.String()),
    generationId: Type.Optional(Type.String()),
  },
  { $id: 'ErrorBody', additionalProperties: true },
);

export const Uuid = Type.String({ format: 'uuid' });
export const IdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 200 }) });
export const Nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

/** Standard error responses for the OpenAPI document. */
export function errorResponses(...codes: number[]): Record<number, typeof ErrorBodySchema> {
  const out: Record<number, typeof ErrorBodySchema> = {};
  for (const c of codes) out[c] = ErrorBodySchema;
  return out;
}
