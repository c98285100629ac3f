// Schema validation without type coercion of bodies. Fastify's Ajv coerces by default ("5" → 5,
// [5] → 5, true → 1, null → 0): right for query strings and path parameters, which are text, but a JSON
// body must already have the types its schema gives (`"duration": "5"` is a 400). Multipart forms of
// POST /v2/generate reach the schema as an object whose nested fields were JSON-parsed, so they are
// checked as strictly as a JSON body. Two Ajv instances from Fastify's own compiler pool: one that
// coerces (querystring, params, headers) and one that does not (body).
import { AjvCompiler, type BuildCompilerFromPool, type RouteDefinition } from '@fastify/ajv-compiler';
import type { FastifySchemaCompiler } from 'fastify';

type CompilerOptions = Parameters<BuildCompilerFromPool>[1];
/** What the pool's compilers really take: the route definition (the declared type says a schema). */
type RouteCompiler = (route: RouteDefinition) => ReturnType<FastifySchemaCompiler<unknown>>;

export function buildValidatorFactory(): BuildCompilerFromPool {
  const pool = AjvCompiler();
  const factory = (externalSchemas: Parameters<BuildCompilerFromPool>[0], options: CompilerOptions) => {
    const withCoercion = (coerceTypes: 'array' | false): RouteCompiler => {
      const opts = { ...options, customOptions: { ...options?.customOptions, coerceTypes } };
      return pool(externalSchemas, opts as CompilerOptions) as unknown as RouteCompiler;
    };
    const coercing = withCoercion('array');
    const strict = withCoercion(false);
    return (route: RouteDefinition) => (route.httpPart === 'body' ? strict : coercing)(route);
  };
  return factory as unknown as BuildCompilerFromPool;
}

/** The Ajv options of the application (src/http/app.ts); bodies are compiled without coercion. */
export const AJV_OPTIONS = {
  removeAdditional: false,
  coerceTypes: 'array',
  useDefaults: true,
  allErrors: false,
} as const;

/**
 * A validator for one body schema, compiled exactly as the routes compile theirs, for bodies that do
 * not arrive as a request body (a batch's records are POST /v2/generate bodies). Returns the Fastify-
 * shaped validation failure (`validation`, `validationContext`) the error handler turns into a 400.
 */
export function compileBodyValidator(
  schema: object,
  context: string,
): (body: unknown) => { validation: unknown[]; validationContext: string } | null {
  const compile = buildValidatorFactory()({}, { customOptions: { ...AJV_OPTIONS } } as CompilerOptions);
  const validate = (compile as unknown as RouteCompiler)({
    schema,
    httpPart: 'body',
    method: 'POST',
    url: context,
  } as unknown as RouteDefinition);
  return (body) => {
    const r = validate(body) as boolean | { error?: unknown };
    if (r === true) return null;
    const errors = (validate as unknown as { errors?: unknown[] }).errors ?? [];
    return { validation: errors, validationContext: context };
  };
}
