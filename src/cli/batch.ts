// `lipsync batch …`: batches through a running server's HTTP API, as any client would make them (a
// JSONL file of generation requests uploaded as multipart, then status, list, cancel and results).
// Needs a server and an API key; nothing here touches the database. The batch's outputUrl is never
// printed (it grants access to every record's output): `batch results` downloads what it points to.
import { openAsBlob } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { Option, type Command } from 'commander';
import { ProgressBar } from './generate.js';
import {
  apiError,
  apiFrom,
  ClientError,
  download,
  connectionOptions,
  sleep,
  usageError,
  type Api,
  type ApiResponse,
} from './http.js';

type Print = (json: boolean, obj: Record<string, unknown>, text: string) => void;

interface ApiOpts {
  server?: string;
  key?: string;
  json?: boolean;
}

interface Batch {
  id: string;
  status: string;
  created_at: string;
  metrics: { total_generations: number; success_count: number; failed_count: number; pending_count: number };
  outputUrl?: string;
  webhookUrl: string | null;
  finished_at: string | null;
  canceled_at: string | null;
  error?: string;
  error_code?: string;
}

const STATUSES = ['PENDING', 'JOBS_CREATED', 'PROCESSING', 'COMPLETED', 'FAILED'];
const ENDED = new Set(['COMPLETED', 'FAILED']);

function apiOptions(cmd: Command): Command {
  return connectionOptions(cmd).option('--json', 'print one JSON object');
}

/** The batch as printed: everything but the signed outputUrl. */
function shown(b: Batch): Record<string, unknown> {
  const v: Record<string, unknown> = { ...b };
  delete v.outputUrl;
  return v;
}

function counts(b: Batch): string {
  const m = b.metrics;
  return `${m.total_generations} records: ${m.success_count} succeeded, ${m.failed_count} failed, ${m.pending_count} pending`;
}

function batchText(b: Batch): string {
  const when = [`created ${b.created_at}`];
  if (b.canceled_at) when.push(`canceled ${b.canceled_at}`);
  if (b.finished_at) when.push(`finished ${b.finished_at}`);
  const lines = [`${b.id}  ${b.status}  ${counts(b)}`, when.join(', ')];
  if (b.webhookUrl) lines.push(`webhook ${b.webhookUrl}`);
  if (b.error_code) lines.push(`error: ${b.error_code}: ${b.error ?? ''}`);
  return lines.join('\n');
}

/**
 * The record a refusal names: lineNumber (dialogue-edit refusals), line (file errors), else the
 * message's leading "Line N" (other record refusals carry it only there).
 */
function refusedLine(body: any): number | null {
  if (!body || typeof body !== 'object') return null;
  for (const v of [body.lineNumber, body.line]) if (Number.isInteger(v) && v > 0) return v as number;
  const m = typeof body.message === 'string' ? /^line (\d+)\b/i.exec(body.message) : null;
  return m ? Number(m[1]) : null;
}

/** The server counts non-empty lines only; the line as an editor shows it, when blank lines differ. */
async function physicalLine(file: string, record: number): Promise<number | null> {
  try {
    const lines = (await readFile(file, 'utf8')).split('\n');
    let seen = 0;
    for (let i = 0; i < lines.length; i++) if (lines[i].trim() && ++seen === record) return i + 1;
  } catch {
    // the line number from the server is still reported
  }
  return null;
}

async function submitError(file: string, r: ApiResponse): Promise<ClientError> {
  const err = apiError(`submitting ${file}`, r);
  const line = refusedLine(r.json);
  if (line === null) return err;
  const fileLine = await physicalLine(file, line);
  let message = /\bline \d+/i.test(err.message) ? err.message : `${err.message} (line ${line})`;
  if (fileLine !== null && fileLine !== line)
    message += ` (the server counts non-empty lines: this is line ${fileLine} of ${file})`;
  return new ClientError(message, { ...err.details, line, ...(fileLine !== null ? { fileLine } : {}) });
}

async function getBatch(api: Api, id: string): Promise<Batch> {
  const r = await api('GET', `/v2/batch/${encodeURIComponent(id)}`);
  if (r.status !== 200) throw apiError(`reading batch ${id}`, r);
  return r.json as Batch;
}

interface SubmitOpts extends ApiOpts {
  dryRun?: boolean;
  webhookUrl?: string;
  watch?: boolean;
  poll: number;
}

async function submit(file: string, opts: SubmitOpts, print: Print): Promise<void> {
  if (opts.watch && opts.dryRun) throw usageError('--watch has nothing to follow with --dry-run');
  if (!(opts.poll > 0)) throw usageError('--poll must be a positive number of seconds');
  const api = apiFrom(opts);
  let blob: Blob;
  try {
    blob = await openAsBlob(file, { type: 'application/x-ndjson' });
  } catch (err) {
    throw new ClientError(`cannot read ${file}: ${(err as Error).message}`);
  }
  const form = new FormData();
  form.append('input', blob, basename(file));
  if (opts.webhookUrl !== undefined) form.append('webhook_url', opts.webhookUrl);
  if (opts.dryRun) form.append('dry_run', 'true');
  const r = await api('POST', '/v2/batch', form);
  if (r.status !== 200) throw await submitError(file, r);

  if (opts.dryRun) {
    const s = r.json.summary as Record<string, any>;
    const models = Object.entries(s.models as Record<string, number>)
      .map(([m, n]) => `${m} x${n}`)
      .join(', ');
    print(
      !!opts.json,
      r.json,
      [
        `VALIDATED: ${s.total_records} records (${s.request_ids.first} .. ${s.request_ids.last}); nothing was created`,
        `models ${models}; ${s.assets_resolved} assets, ${s.projects_resolved} projects resolved; ${s.text_inputs} text inputs`,
      ].join('\n'),
    );
    return;
  }

  let b = r.json as Batch;
  if (opts.watch) {
    const bar = opts.json ? null : new ProgressBar();
    while (!ENDED.has(b.status)) {
      bar?.update(progressText(b), percent(b));
      await sleep(opts.poll * 1000);
      b = await getBatch(api, b.id);
    }
    bar?.update(progressText(b), percent(b));
    bar?.done();
    if (b.status !== 'COMPLETED' || b.metrics.failed_count > 0) {
      const why = b.error_code ? ` (${b.error_code}: ${b.error ?? ''})` : '';
      throw new ClientError(
        `batch ${b.id} ended ${b.status}${why}: ${b.metrics.failed_count} of ${b.metrics.total_generations} records failed; \`lipsync batch results ${b.id}\` lists them`,
        shown(b),
      );
    }
  }
  print(!!opts.json, shown(b), batchText(b));
}

const percent = (b: Batch) =>
  b.metrics.total_generations
    ? (100 * (b.metrics.success_count + b.metrics.failed_count)) / b.metrics.total_generations
    : 0;

function progressText(b: Batch): string {
  const m = b.metrics;
  return `${b.status.toLowerCase()} ${m.success_count + m.failed_count}/${m.total_generations} (${m.failed_count} failed) ${b.id}`;
}

/** Downloads the results file the outputUrl redirects to (no API key sent); counts its statuses. */
async function results(id: string, opts: ApiOpts & { out?: string }): Promise<Record<string, unknown>> {
  const b = await getBatch(apiFrom(opts), id);
  if (!b.outputUrl) throw new ClientError(`batch ${id} has no results URL`);
  const out = opts.out ?? `batch-${b.id}-results.jsonl`;
  await download(b.outputUrl, out, `the results of batch ${b.id}`);
  const statuses: Record<string, number> = {};
  let records = 0;
  const text = await readFile(out, 'utf8');
  for (const [i, line] of text.split('\n').entries()) {
    if (!line.trim()) continue;
    let status: unknown;
    try {
      status = (JSON.parse(line) as { status?: unknown }).status;
    } catch {
      status = undefined;
    }
    if (typeof status !== 'string')
      throw new ClientError(`the results file ${out} has an unreadable line ${i + 1}`);
    statuses[status] = (statuses[status] ?? 0) + 1;
    records++;
  }
  return { id: b.id, batchStatus: b.status, output: out, records, statuses };
}

export function registerBatchCommands(program: Command, print: Print): void {
  const batch = program
    .command('batch')
    .description('batches of generations from a JSONL file, through a running server (Scale and Enterprise)');

  apiOptions(
    batch
      .command('submit')
      .description('upload a JSONL file of generation requests as a batch')
      .argument('<file>', 'one {"request_id", "endpoint": "/v2/generate", "payload"} object per line')
      .option('--dry-run', 'validate every record and resolve its assets; create nothing')
      .option('--webhook-url <url>', 'notified (signed) when the batch ends')
      .option('--watch', 'follow the batch to its end with a progress bar; exit 1 if any record failed')
      .option('--poll <seconds>', 'seconds between progress checks with --watch', (v) => Number(v), 1),
  ).action((file: string, opts: SubmitOpts) => submit(file, opts, print));

  apiOptions(batch.command('status').description("a batch's status and counters").argument('<id>')).action(
    async (id: string, opts: ApiOpts) => {
      const b = await getBatch(apiFrom(opts), id);
      print(!!opts.json, shown(b), batchText(b));
    },
  );

  apiOptions(
    batch
      .command('list')
      .description("the organization's batches, newest first (the newest 100)")
      .addOption(new Option('--status <status>', 'only batches in this status').choices(STATUSES)),
  ).action(async (opts: ApiOpts & { status?: string }) => {
    const q = opts.status ? `?status=${opts.status}` : '';
    const r = await apiFrom(opts)('GET', `/v2/batch${q}`);
    if (r.status !== 200) throw apiError('listing batches', r);
    const list = r.json as Batch[];
    print(
      !!opts.json,
      { batches: list.map(shown) },
      list.map((b) => `${b.id}  ${b.status.padEnd(12)}  ${counts(b)}  created ${b.created_at}`).join('\n') ||
        '(no batches)',
    );
  });

  apiOptions(
    batch.command('cancel').description('cancel a batch: records not finished are canceled').argument('<id>'),
  ).action(async (id: string, opts: ApiOpts) => {
    const r = await apiFrom(opts)('POST', `/v2/batch/${encodeURIComponent(id)}/cancel`);
    if (r.status !== 200) throw apiError(`canceling batch ${id}`, r);
    const b = r.json as Batch;
    // The API answers a batch that had already ended with the batch unchanged.
    const text = b.canceled_at
      ? `canceled batch ${b.id} (${b.status}; ${counts(b)})`
      : `batch ${b.id} had already ended ${b.status}; nothing was canceled`;
    print(!!opts.json, shown(b), text);
  });

  apiOptions(
    batch
      .command('results')
      .description('download the JSONL results file (one line per record) and count its statuses')
      .argument('<id>')
      .option('--out <file>', 'where to write it (default batch-<id>-results.jsonl)'),
  ).action(async (id: string, opts: ApiOpts & { out?: string }) => {
    const r = await results(id, opts);
    const statuses = Object.entries(r.statuses as Record<string, number>)
      .map(([s, n]) => `${n} ${s}`)
      .join(', ');
    print(
      !!opts.json,
      r,
      `${r.output}\n${r.records} records: ${statuses || 'none'} (batch ${r.batchStatus})`,
    );
  });
}
