// Schema validation without type coercion of bodies. Fastify's Ajv coerces by default ("5" → 5,
// [5] → 5, true → 1, null → 0): right for query strings and path parameters, which are text, but a JSON
// body must already have the types its schema gives (`"duration": "5"` is a 400). Multipart forms of
// POST /v2/generate reach the schema as an object whose nested fields were JSON-parsed, so they are
// checked as strictly as a JSON body. Two Ajv instances from Fastify's own compiler pool: one that
// coerces (querystring, params, headers) and one that does not (body).
import { AjvCompiler, type BuildCompilerFromPool } from '@fastify/ajv-compiler';

/** What the pool's compilers take: a schema, in their declared type. */
type CompilerInput = Parameters<ReturnType<BuildCompilerFromPool>>[0];

/**
 * Fastify hands the compiler the route's definition (method, url, httpPart, schema, …), which the
 * pool reads as it is; its declared type calls that a schema, an object of any properties.
 */
function isBodyRoute(route: CompilerInput): boolean {
  return typeof route === 'object' && route.httpPart === 'body';
}

export function buildValidatorFactory(): BuildCompilerFromPool {
  const pool = AjvCompiler();
  return (externalSchemas, options) => {
    const withCoercion = (coerceTypes: 'array' | false) =>
      pool(externalSchemas, {
        ...options,
        mode: undefined, // JSON Schema (Ajv), never JTD: the options are Ajv's
        customOptions: { ...options?.customOptions, coerceTypes },
      });
    const coercing = withCoercion('array');
    const strict = withCoercion(false);
    return (route) => (isBodyRoute(route) ? strict : coercing)(route);
  };
}

/** The Ajv options of the application (src/http/app.ts); bodies are compiled without coercion. */
export const AJV_OPTIONS = {
  removeAdditional: false,
  coerceTypes: 'array',
  useDefaults: true,
  allErrors: false,
  discriminator: true,
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
  const compile = buildValidatorFactory()({}, { customOptions: { ...AJV_OPTIONS } });
  const validate = compile({ schema, httpPart: 'body', method: 'POST', url: context });
  return (body) => {
    if (validate(body) === true) return null;
    return { validation: validate.errors ?? [], validationContext: context };
  };
}
