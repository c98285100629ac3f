// The one way multipart requests are read (asset upload now; generate and batch later): file parts are
// streamed to temp files in <dataDir>/tmp/ (never buffered whole), fields are collected, and on any error
// or limit every partial temp file is removed and a catalogue error is thrown.
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { Transform, type TransformCallback } from 'node:stream';
import type { FastifyRequest } from 'fastify';
import type { Multipart, MultipartFile as BusboyFile } from '@fastify/multipart';
import type { Config } from '../config.js';
import type { Organization } from '../store/organizations.js';
import { AppError, isAppError, type ErrorCode } from '../domain/errors.js';
import { ensurePrivateDir, makeFilePrivate, PRIVATE_FILE_MODE } from '../private-files.js';
import { streamToFile } from '../stream-to-file.js';

const MiB = 1024 * 1024;

/** The spec's parser limits (Limits: multipart per file, files, fields, parts, field size). */
export function multipartLimits(config: Config) {
  return {
    fileSize: config.maxUploadBytes,
    files: 3,
    fields: 32,
    parts: 35,
    fieldSize: MiB,
    fieldNameSize: 200,
    headerPairs: 2000,
  };
}

/**
 * The plan's per-file limit as a streaming check for readMultipart: a file over it stops the upload
 * at once with 422 file_size_exceeds_plan_limit (the code of the spec and of POST /v2/assets/upload).
 */
export function planFileLimit(
  organization: Organization,
  plans: { maxFileBytes(organization: Organization): number },
): NonNullable<MultipartOptions['maxFileBytes']> {
  const bytes = plans.maxFileBytes(organization);
  return {
    bytes,
    code: 'file_size_exceeds_plan_limit',
    message: `The file is larger than the ${organization.plan} plan allows (${bytes} bytes).`,
  };
}

export interface UploadedFile {
  readonly fieldName: string;
  /** The client's file name, or null when none was sent. */
  readonly fileName: string | null;
  /** The client's declared content type (never trusted for the media type). */
  readonly mimeType: string;
  /** The temp file holding the content; moved or removed by cleanup(). */
  readonly path: string;
  readonly size: number;
}

export interface MultipartForm {
  readonly files: UploadedFile[];
  readonly fields: Readonly<Record<string, string>>;
  /** Removes the temp files that are still there; safe to call more than once. */
  cleanup(): Promise<void>;
}

export interface MultipartOptions {
  /** Folder for temp files, normally <dataDir>/tmp. */
  readonly tmpDir: string;
  /** File field names accepted; a file under another name is a 400. */
  readonly fileFields: readonly string[];
  /** The code of parser-limit errors (413); default generation_input_validation_failed. */
  readonly limitCode?: ErrorCode;
  /** The suggestion of parser-limit errors, when the catalogue's does not fit the endpoint. */
  readonly limitSuggestion?: string;
  /** A lower per-file limit with its own error, checked while streaming (e.g. the plan's file size). */
  readonly maxFileBytes?: { readonly bytes: number; readonly code: ErrorCode; readonly message?: string };
}

const PARSER_LIMIT_CODES = new Set([
  'FST_PARTS_LIMIT',
  'FST_FILES_LIMIT',
  'FST_FIELDS_LIMIT',
  'FST_REQ_FILE_TOO_LARGE',
]);

/** Counts bytes and fails the stream as soon as a file passes `max`. */
class ByteLimit extends Transform {
  bytes = 0;
  constructor(
    private readonly max: number,
    private readonly onExceed: () => Error,
  ) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.max) cb(this.onExceed());
    else cb(null, chunk);
  }
}

export async function readMultipart(request: FastifyRequest, opts: MultipartOptions): Promise<MultipartForm> {
  if (!request.isMultipart()) {
    throw new AppError('unsupported_media_type', {
      message: 'This endpoint expects a multipart/form-data body.',
    });
  }
  const limitCode = opts.limitCode ?? 'generation_input_validation_failed';
  const temps: string[] = [];
  const files: UploadedFile[] = [];
  const fields: Record<string, string> = {};
  const cleanup = async () => {
    await Promise.all(temps.map((p) => rm(p, { force: true })));
  };
  // An error before the body was read to its end: close the connection instead of draining the rest.
  const fail = (err: AppError): AppError => {
    if (!request.raw.complete) err.extras.headers = { ...err.extras.headers, connection: 'close' };
    return err;
  };
  const limitError = (what: string) =>
    fail(
      new AppError(limitCode, {
        status: 413,
        message: `Multipart limit exceeded: ${what}.`,
        suggestion: opts.limitSuggestion,
      }),
    );

  try {
    await ensurePrivateDir(opts.tmpDir, { tighten: true });
    for await (const part of request.parts()) {
      if (part.type === 'field') {
        readField(part, fields, limitError);
        continue;
      }
      if (!opts.fileFields.includes(part.fieldname)) {
        part.file.resume();
        throw fail(
          new AppError('invalid_request', {
            field: part.fieldname,
            message: `Unexpected file field ${JSON.stringify(part.fieldname)}; use ${opts.fileFields.join(', ')}.`,
          }),
        );
      }
      if (part.filename) {
        try {
          rejectNul(part.fieldname, part.filename, 'file name');
        } catch (err) {
          part.file.resume();
          throw fail(err as AppError);
        }
      }
      const path = join(opts.tmpDir, `upload-${randomUUID()}`);
      temps.push(path);
      const size = await saveFile(part, path, opts, limitError, fail);
      files.push({
        fieldName: part.fieldname,
        fileName: part.filename ? part.filename : null,
        mimeType: part.mimetype,
        path,
        size,
      });
    }
  } catch (err) {
    await cleanup();
    throw toMultipartError(err, limitError, fail);
  }
  return { files, fields, cleanup };
}

function readField(
  part: Extract<Multipart, { type: 'field' }>,
  fields: Record<string, string>,
  limitError: (what: string) => AppError,
): void {
  if (part.valueTruncated) throw limitError(`field ${JSON.stringify(part.fieldname)} is over 1 MiB`);
  if (part.fieldnameTruncated) throw limitError('a field name is too long');
  rejectNul(part.fieldname, part.fieldname, 'field name');
  if (Object.prototype.hasOwnProperty.call(fields, part.fieldname)) {
    throw new AppError('invalid_request', {
      field: part.fieldname,
      message: `The field ${JSON.stringify(part.fieldname)} is given more than once.`,
    });
  }
  // @fastify/multipart parses fields sent as application/json; keep every field as its text.
  const text = typeof part.value === 'string' ? part.value : JSON.stringify(part.value);
  rejectNul(part.fieldname, text, 'value');
  fields[part.fieldname] = text;
}

/** U+0000 in any text of the form is a 400 naming the field (PostgreSQL cannot store it). */
function rejectNul(field: string, text: string, what: string): void {
  if (!text.includes('\u0000')) return;
  const name = field.replaceAll('\u0000', '\\u0000');
  throw new AppError('invalid_request', {
    field: name,
    message: `The ${what} of ${name} must not contain the NUL character (U+0000).`,
  });
}

async function saveFile(
  part: BusboyFile,
  path: string,
  opts: MultipartOptions,
  limitError: (what: string) => AppError,
  fail: (err: AppError) => AppError,
): Promise<number> {
  const lower = opts.maxFileBytes;
  const counter = new ByteLimit(lower ? lower.bytes : Number.MAX_SAFE_INTEGER, () =>
    fail(
      new AppError(lower!.code, {
        field: part.fieldname,
        message: lower!.message ?? `The file is larger than ${lower!.bytes} bytes.`,
      }),
    ),
  );
  await streamToFile(part.file, [counter], path, { flags: 'wx', mode: PRIVATE_FILE_MODE });
  await makeFilePrivate(path);
  if (part.file.truncated) throw limitError(`file ${JSON.stringify(part.fieldname)} is over the size limit`);
  return counter.bytes;
}

/** busboy reports a malformed body (bad boundary, early end, bad part header) as a bare Error. */
function isParserError(err: unknown): boolean {
  return err instanceof Error && Object.getPrototypeOf(err) === Error.prototype && !('code' in err);
}

function toMultipartError(
  err: unknown,
  limitError: (what: string) => AppError,
  fail: (err: AppError) => AppError,
): unknown {
  if (isAppError(err)) return err;
  const e = err as { code?: string; message?: string };
  if (e.code && PARSER_LIMIT_CODES.has(e.code)) return limitError(e.message ?? e.code);
  if (e.code === 'FST_INVALID_MULTIPART_CONTENT_TYPE') {
    return new AppError('unsupported_media_type', {
      message: 'This endpoint expects a multipart/form-data body.',
    });
  }
  if (e.code === 'ERR_STREAM_PREMATURE_CLOSE' || e.code === 'ECONNRESET') {
    return fail(new AppError('invalid_request', { message: 'The upload was interrupted.' }));
  }
  // Malformed bodies: @fastify/multipart's FST_ errors (an invalid JSON field, a prototype-polluting
  // name) and busboy's parse errors, which are plain Errors without a code. System errors (the disk)
  // carry an errno code and programming errors another class: those stay 500s.
  if ((e.code && e.code.startsWith('FST_')) || isParserError(err)) {
    return fail(new AppError('invalid_request', { message: `Malformed multipart body: ${e.message}` }));
  }
  return err; // disk and other server-side failures stay 500s
}
