// The Batch resource as clients see it (api-details 7.3: snake_case created_at and metrics next to
// camelCase outputUrl and webhookUrl, as the public API mixes them), and one line of its results file.
import type { BatchRecord, BatchResultRow } from '../store/batches.js';
import { pendingCount, type BatchStatus } from '../domain/batches.js';
import { redactedWebhookUrl } from '../domain/webhooks.js';

export interface BatchView {
  id: string;
  created_at: string;
  status: BatchStatus;
  metrics: {
    total_generations: number;
    success_count: number;
    failed_count: number;
    pending_count: number;
  };
  outputUrl: string;
  webhookUrl: string | null;
  updated_at: string;
  finished_at: string | null;
  canceled_at: string | null;
  error?: string;
  error_code?: string;
}

export function batchView(b: BatchRecord, outputUrl: string): BatchView {
  return {
    id: b.id,
    created_at: b.createdAt,
    status: b.status,
    metrics: {
      total_generations: b.total,
      success_count: b.succeeded,
      failed_count: b.failed,
      pending_count: pendingCount(b),
    },
    outputUrl,
    webhookUrl: b.webhookUrl === null ? null : redactedWebhookUrl(b.webhookUrl),
    updated_at: b.updatedAt,
    finished_at: b.finishedAt,
    canceled_at: b.canceledAt,
    ...(b.errorCode ? { error: b.errorMessage ?? b.errorCode, error_code: b.errorCode } : {}),
  };
}

export interface BatchResultLine {
  request_id: string;
  line: number;
  generation_id: string | null;
  status: string;
  outputUrl?: string;
  error?: string;
  error_code?: string;
}

/** A record's line: its generation's state, or why it never became one. */
export function batchResultLine(row: BatchResultRow, outputUrl: string | null): BatchResultLine {
  const base = { request_id: row.requestId, line: row.line, generation_id: row.generationId };
  if (row.status === 'queued') return { ...base, status: 'PENDING' };
  if (row.status === 'failed' || row.status === 'canceled')
    return {
      ...base,
      status: row.status === 'failed' ? 'FAILED' : 'CANCELED',
      ...(row.errorMessage ? { error: row.errorMessage } : {}),
      ...(row.errorCode ? { error_code: row.errorCode } : {}),
    };
  const status = row.generationStatus ?? 'FAILED';
  if (status === 'COMPLETED') return { ...base, status, ...(outputUrl ? { outputUrl } : {}) };
  return {
    ...base,
    status,
    ...(row.generationError ? { error: row.generationError } : {}),
    ...(row.generationErrorCode ? { error_code: row.generationErrorCode } : {}),
  };
}
