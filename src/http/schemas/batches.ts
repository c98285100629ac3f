import { Type } from '@sinclair/typebox';
import { Nullable } from './common.js';

const BatchStatusSchema = Type.Union([
  Type.Literal('PENDING'),
  Type.Literal('JOBS_CREATED'),
  Type.Literal('PROCESSING'),
  Type.Literal('COMPLETED'),
  Type.Literal('FAILED'),
]);

export const BatchSchema = Type.Object(
  {
    id: Type.String(),
    created_at: Type.String({ format: 'date-time' }),
    status: BatchStatusSchema,
    metrics: Type.Object({
      total_generations: Type.Integer(),
      success_count: Type.Integer(),
      failed_count: Type.Integer(),
      pending_count: Type.Integer({ description: 'Records pending or processing.' }),
    }),
    outputUrl: Type.String({
      description: 'Signed URL; a GET answers 302 to the JSONL results file (one line per record).',
    }),
    webhookUrl: Nullable(Type.String()),
    updated_at: Type.String({ format: 'date-time' }),
    finished_at: Nullable(Type.String({ format: 'date-time' })),
    canceled_at: Nullable(Type.String({ format: 'date-time' })),
    error: Type.Optional(Type.String()),
    error_code: Type.Optional(Type.String()),
  },
  { $id: 'Batch', additionalProperties: false },
);

export const BatchValidatedSchema = Type.Object(
  {
    status: Type.Literal('VALIDATED'),
    summary: Type.Object({
      total_records: Type.Integer(),
      request_ids: Type.Object({ first: Type.String(), last: Type.String() }),
      models: Type.Record(Type.String(), Type.Integer()),
      assets_resolved: Type.Integer(),
      projects_resolved: Type.Integer(),
      text_inputs: Type.Integer(),
    }),
  },
  { $id: 'BatchValidated', additionalProperties: false },
);

export const CreateBatchResponse = Type.Union([BatchSchema, BatchValidatedSchema]);

/**
 * The form of POST /v2/batch. The multipart helper streams the file to disk first; the form is then
 * checked as { input: where the file was stored, webhook_url, dry_run }. A form without a file is the
 * service's batch_input_invalid.
 */
export const BatchForm = Type.Object({
  input: Type.Optional(
    Type.String({ format: 'binary', description: 'The JSONL file, one request per line (alias: file).' }),
  ),
  webhook_url: Type.Optional(Type.String()),
  dry_run: Type.Optional(Type.String({ description: 'true: validate the file, create nothing.' })),
});

export const ListBatchesQuery = Type.Object({
  status: Type.Optional(Type.String({ maxLength: 32 })),
  created_after: Type.Optional(Type.String({ maxLength: 64 })),
  created_before: Type.Optional(Type.String({ maxLength: 64 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100 })),
  cursor: Type.Optional(
    Type.String({ maxLength: 200, description: 'Id of the last batch of the previous page.' }),
  ),
});

export const ResultsQuery = Type.Object({
  expires: Type.Optional(Type.String({ maxLength: 20 })),
  sig: Type.Optional(Type.String({ maxLength: 128 })),
});
