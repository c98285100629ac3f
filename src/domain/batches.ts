// Batch rules that need no I/O: reading a JSONL file into records (every refusal names its line),
// the record and concurrency limits of a plan, the batch's statuses and how it ends.
import { AppError } from './errors.js';
import { PLAN_LIMITS, type Plan } from './plans.js';
import { findNul, nulMessage } from './nul.js';

export const BATCH_STATUSES = ['PENDING', 'JOBS_CREATED', 'PROCESSING', 'COMPLETED', 'FAILED'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];
export const ACTIVE_BATCH_STATUSES: readonly BatchStatus[] = ['PENDING', 'JOBS_CREATED', 'PROCESSING'];

export function isBatchStatus(s: string): s is BatchStatus {
  return (BATCH_STATUSES as readonly string[]).includes(s);
}

export const BATCH_FILE_MAX_BYTES = 5 * 1024 * 1024;
export const BATCH_ENDPOINT = '/v2/generate';
export const MAX_REQUEST_ID_CHARS = 255;

/** The generation's `source` for a batch's children (GET /v2/generations?source=batch:<id>). */
export const batchSource = (batchId: string): string => `batch:${batchId}`;
export const BATCH_SOURCE_PREFIX = 'batch:';

export interface BatchRecordLine {
  /** 1-based, counting non-empty lines only (the spec's lineNumber). */
  readonly line: number;
  readonly requestId: string;
  readonly payload: Record<string, unknown>;
}

/** Operator overrides for one organization (null fields: the plan's default). */
export interface BatchLimitOverrides {
  readonly minRecords?: number | null;
  readonly maxRecords?: number | null;
  readonly concurrency?: number | null;
}

export interface BatchLimits {
  readonly minRecords: number;
  readonly maxRecords: number;
  /** Batches of the organization that may be unfinished at once. */
  readonly concurrency: number;
  /** Children of the organization's batches that may run at once (its share of the workers). */
  readonly runningChildren: number;
}

/** Unfinished batches per organization, by plan (plans without batch have none). */
export const DEFAULT_BATCH_CONCURRENCY: Readonly<Record<Plan, number>> = {
  free: 0,
  hobbyist: 0,
  creator: 0,
  growth: 0,
  scale: 2,
  enterprise: 5,
};

export function batchLimits(
  plan: Plan,
  overrides: BatchLimitOverrides | null,
  planConcurrency: Partial<Record<Plan, number>> = {},
): BatchLimits {
  return {
    minRecords: overrides?.minRecords ?? 20,
    maxRecords: overrides?.maxRecords ?? 500,
    concurrency: overrides?.concurrency ?? planConcurrency[plan] ?? DEFAULT_BATCH_CONCURRENCY[plan],
    runningChildren: PLAN_LIMITS[plan].concurrency,
  };
}

/** 402 unless the plan includes batch processing. */
export function assertBatchPlan(plan: Plan): void {
  if (!PLAN_LIMITS[plan].batch)
    throw new AppError('plan_upgrade_required', {
      message: `Batch processing needs the Scale or Enterprise plan; this organization is on the ${plan} plan.`,
      suggestion: 'Upgrade to the Scale plan, or send the generations one by one with POST /v2/generate.',
    });
}

/** 429 when the organization already has as many unfinished batches as it may. */
export function assertBatchCapacity(limits: BatchLimits, active: number): void {
  if (active >= limits.concurrency)
    throw new AppError('concurrency_limit_reached', {
      message: `Your plan allows ${limits.concurrency} batch${limits.concurrency === 1 ? '' : 'es'} running at once; ${active} ${active === 1 ? 'is' : 'are'} not finished yet.`,
      suggestion: 'Wait until a running batch is COMPLETED or FAILED (GET /v2/batch), or cancel one.',
      retryAfter: 30,
      headers: { 'Retry-After': '30' },
      details: { batchConcurrencyLimit: limits.concurrency, activeBatches: active },
    });
}

// The spec names a record's line in the message only (lineNumber is for dialogue-edit refusals).
const fileError = (message: string): AppError =>
  new AppError('batch_input_invalid', { field: 'input', message });

/**
 * Reads the JSONL file: UTF-8 without a BOM, LF line endings, one JSON object per non-empty line with
 * request_id (unique), endpoint (exactly /v2/generate) and payload (an object). Throws 400
 * batch_input_invalid naming the first bad line; nothing else is checked here.
 */
export function parseBatchFile(bytes: Buffer, limits: Pick<BatchLimits, 'minRecords' | 'maxRecords'>) {
  if (bytes.length > BATCH_FILE_MAX_BYTES)
    throw fileError(
      `The input file is ${bytes.length} bytes; a batch file may have at most 5 MB (${BATCH_FILE_MAX_BYTES} bytes).`,
    );
  if (bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf)
    throw fileError('The input file starts with a byte order mark (BOM); save it as UTF-8 without a BOM.');
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw fileError('The input file is not valid UTF-8.');
  }
  const records: BatchRecordLine[] = [];
  const seen = new Map<string, number>();
  let line = 0;
  let physical = 0;
  for (const raw of text.split('\n')) {
    physical++;
    if (raw.endsWith('\r'))
      throw fileError(
        `${raw.trim() ? `Line ${line + 1} (file line ${physical})` : `File line ${physical} (blank)`} ends with CRLF; use LF (\\n) line endings.`,
      );
    if (!raw.trim()) continue;
    line++;
    records.push(readRecord(raw, line, seen));
    if (records.length > limits.maxRecords)
      throw fileError(
        `The input file has more than ${limits.maxRecords} records (the most a batch may have).`,
      );
  }
  if (records.length < limits.minRecords)
    throw fileError(
      `The input file has ${records.length} record${records.length === 1 ? '' : 's'}; a batch needs at least ${limits.minRecords}.`,
    );
  return records;
}

function readRecord(raw: string, line: number, seen: Map<string, number>): BatchRecordLine {
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    throw fileError(`Line ${line}: not valid JSON.`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v))
    throw fileError(`Line ${line}: each line must be a JSON object with request_id, endpoint and payload.`);
  // Every string of the record, names included, before any of it is used: a NUL stored on
  // PostgreSQL would fail the batch's insert or its children's, on SQLite one child at run time.
  const nul = findNul(v);
  if (nul !== null)
    throw new AppError('batch_input_invalid', { field: nul, message: `Line ${line}: ${nulMessage(nul)}` });
  const o = v as Record<string, unknown>;
  const unknown = Object.keys(o).filter((k) => !['request_id', 'endpoint', 'payload'].includes(k));
  if (unknown.length)
    throw fileError(
      `Line ${line}: unknown field ${JSON.stringify(unknown[0])}; a record has request_id, endpoint and payload.`,
    );
  const id = o.request_id;
  if (typeof id !== 'string' || !id.trim() || id.length > MAX_REQUEST_ID_CHARS)
    throw fileError(
      `Line ${line}: request_id must be a non-empty string of at most ${MAX_REQUEST_ID_CHARS} characters.`,
    );
  const first = seen.get(id);
  if (first !== undefined)
    throw fileError(`Line ${line}: request_id ${JSON.stringify(id)} was already used on line ${first}.`);
  seen.set(id, line);
  if (o.endpoint !== BATCH_ENDPOINT)
    throw fileError(
      `Line ${line}: endpoint must be exactly "${BATCH_ENDPOINT}" (got ${JSON.stringify(o.endpoint ?? null)}).`,
    );
  if (typeof o.payload !== 'object' || o.payload === null || Array.isArray(o.payload))
    throw fileError(`Line ${line}: payload must be a generation request object.`);
  return { line, requestId: id, payload: o.payload as Record<string, unknown> };
}

/**
 * A record's refusal as POST /v2/batch answers it: the line first in the message, the record's field
 * under payload, status 400 (the spec's batch responses have no 422; the catalogue code says what
 * failed, as it would for POST /v2/generate), lineNumber on dialogue-edit refusals (spec). Outages
 * (5xx) keep their status: the file is fine, retry later.
 */
export function recordError(err: AppError, line: number): AppError {
  const dialogue = err.code.startsWith('dialogue_edit_');
  return new AppError(err.code, {
    ...err.extras,
    status: err.status >= 500 ? err.status : 400,
    message: `Line ${line}: ${err.message}`,
    suggestion: err.suggestion,
    field: err.extras.field ? `payload.${err.extras.field}` : 'input',
    ...(dialogue ? { lineNumber: line } : {}),
    cause: err,
  });
}

export interface BatchCounters {
  readonly total: number;
  readonly succeeded: number;
  readonly failed: number;
}

export function pendingCount(c: BatchCounters): number {
  return Math.max(0, c.total - c.succeeded - c.failed);
}

/**
 * How a batch ends once every record has ended: FAILED when it was canceled or no record succeeded,
 * otherwise COMPLETED (the results file tells which records failed).
 */
export function finalBatchStatus(c: BatchCounters, canceled: boolean): BatchStatus {
  return canceled || c.succeeded === 0 ? 'FAILED' : 'COMPLETED';
}

/** The status while records are still running: PROCESSING once any child has started. */
export function runningBatchStatus(childrenStarted: boolean): BatchStatus {
  return childrenStarted ? 'PROCESSING' : 'JOBS_CREATED';
}
