// GET|HEAD /v2/files/<key>: signed downloads of the local blob store. No API key: the signed URL is the
// credential. Streams the blob (never buffers it) and serves single byte ranges.
// PUT /v2/files/<key>?upload=1&…: direct uploads to the local blob store with an upload signature
// (src/storage/url-signer.ts): exactly the signed size and Content-Type, streamed into the store; a
// body longer than announced is cut off and refused, and nothing of a refused body is kept. Only
// while the upload waits to be registered: afterwards the URL is used up (409 upload_url_used).
import { Transform, type TransformCallback } from 'node:stream';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../services/index.js';
import { AppError } from '../../domain/errors.js';
import { BlobNotFoundError, isValidBlobKey } from '../../storage/blob-store.js';
import { contentDisposition } from '../../storage/content-disposition.js';
import { parseRange } from '../range.js';

function single(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
}

/** Passes exactly `size` bytes: fails as soon as more arrive, and at the end if fewer did. */
class ExactSize extends Transform {
  private bytes = 0;
  constructor(
    private readonly size: number,
    private readonly tooLong: () => Error,
    private readonly tooShort: (bytes: number) => Error,
  ) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: TransformCallback): void {
    this.bytes += chunk.length;
    if (this.bytes > this.size) cb(this.tooLong());
    else cb(null, chunk);
  }
  override _flush(cb: TransformCallback): void {
    cb(this.bytes === this.size ? null : this.tooShort(this.bytes));
  }
}

export const fileRoutes: FastifyPluginAsync<{ services: Services }> = async (app, { services }) => {
  const serve = async (req: FastifyRequest, reply: FastifyReply) => {
    const key = (req.params as Record<string, string | undefined>)['*'] ?? '';
    const q = (req.query ?? {}) as Record<string, unknown>;
    if (!isValidBlobKey(key)) throw new AppError('url_signature_invalid');
    const check = services.urlSigner.check(key, {
      expires: single(q.expires),
      sig: single(q.sig),
      name: single(q.name),
    });
    if (check === 'invalid') throw new AppError('url_signature_invalid');
    if (check === 'expired') throw new AppError('url_expired');

    const st = await services.blobs.stat(key);
    if (!st) throw new AppError('file_not_found');

    const lastModified = st.lastModified.toUTCString();
    void reply
      .header('Accept-Ranges', 'bytes')
      .header('Last-Modified', lastModified)
      .header('Cache-Control', 'private')
      .header('X-Content-Type-Options', 'nosniff')
      .header('Content-Security-Policy', "default-src 'none'; sandbox")
      .type(st.contentType);
    const name = single(q.name);
    if (name !== undefined) void reply.header('Content-Disposition', contentDisposition(name));

    // If-Range with a date other than ours means the client's copy is stale: send the whole file.
    const ifRange = req.headers['if-range'];
    const rangeHeader = ifRange === undefined || ifRange === lastModified ? req.headers.range : undefined;
    const r = parseRange(rangeHeader, st.size);
    if (r.kind === 'unsatisfiable') {
      throw new AppError('range_not_satisfiable', {
        message: `The range ${String(req.headers.range)} lies outside the file of ${st.size} bytes.`,
        headers: { 'Content-Range': `bytes */${st.size}` },
      });
    }
    const range = r.kind === 'range' ? r.range : undefined;
    if (range) {
      void reply.code(206).header('Content-Range', `bytes ${range.start}-${range.end}/${st.size}`);
      void reply.header('Content-Length', String(range.end - range.start + 1));
    } else {
      void reply.code(200).header('Content-Length', String(st.size));
    }
    if (req.method === 'HEAD') return reply.send();

    try {
      return reply.send(await services.blobs.open(key, range));
    } catch (err) {
      if (err instanceof BlobNotFoundError) throw new AppError('file_not_found');
      throw err;
    }
  };

  const upload = async (req: FastifyRequest, reply: FastifyReply) => {
    // A refusal before the body was read to its end closes the connection instead of draining it.
    const fail = (err: AppError): AppError => {
      if (!req.raw.complete) err.extras.headers = { ...err.extras.headers, connection: 'close' };
      return err;
    };
    const key = (req.params as Record<string, string | undefined>)['*'] ?? '';
    const q = (req.query ?? {}) as Record<string, unknown>;
    if (!isValidBlobKey(key)) throw fail(new AppError('url_signature_invalid'));
    const check = services.urlSigner.checkUpload(key, {
      expires: single(q.expires),
      size: single(q.size),
      type: single(q.type),
      sig: single(q.sig),
    });
    if (check.status === 'invalid') throw fail(new AppError('url_signature_invalid'));
    if (check.status === 'expired') {
      throw fail(new AppError('url_expired', { message: 'The upload URL has expired.' }));
    }
    const { size, contentType } = check.grant;
    if ((req.headers['content-type'] ?? '').trim() !== contentType) {
      throw fail(
        new AppError('invalid_request', {
          message: `Send the file with Content-Type: ${contentType}, the type announced for this upload.`,
        }),
      );
    }
    const tooLong = () =>
      fail(
        new AppError('payload_too_large', {
          message: `The body is larger than the ${size} bytes announced for this upload.`,
          suggestion: 'Announce the real size with POST /v2/assets/upload and upload to the new URL.',
        }),
      );
    const tooShort = (bytes: number) =>
      fail(
        new AppError('invalid_request', {
          message: `The body has ${bytes} bytes, not the ${size} announced for this upload.`,
        }),
      );
    const declared = req.headers['content-length'];
    if (declared !== undefined && Number(declared) > size) throw tooLong();
    if (declared !== undefined && Number(declared) < size) throw tooShort(Number(declared));

    const body = new ExactSize(size, tooLong, tooShort);
    const raw = req.raw;
    const aborted = () => {
      if (!raw.complete)
        body.destroy(fail(new AppError('invalid_request', { message: 'The upload was interrupted.' })));
    };
    // Piped (and watched) only once the service has checked the upload: until then nobody reads body.
    const openBody = () => {
      raw.once('close', aborted);
      raw.once('error', aborted);
      if (raw.destroyed) aborted();
      return raw.pipe(body);
    };
    try {
      await services.assets.receiveUpload(key, contentType, openBody);
    } catch (err) {
      raw.unpipe(body);
      throw err instanceof AppError ? fail(err) : err;
    } finally {
      raw.off('close', aborted);
      raw.off('error', aborted);
    }
    return reply.code(200).header('Cache-Control', 'no-store').send();
  };

  // Upload bodies are the files themselves, whatever their type: read by the handler, never parsed.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, _payload, done) => done(null));

  app.route({
    method: 'PUT',
    url: '/v2/files/*',
    schema: { hide: true },
    config: { auth: false, rateRule: { bucket: 'files_upload', max: 600, windowMs: 60_000 } },
    handler: upload,
  });

  app.route({
    method: ['GET', 'HEAD'],
    url: '/v2/files/*',
    schema: { hide: true },
    // Players seek with many range requests: signed files get their own, larger per-IP budget.
    config: { auth: false, rateRule: { bucket: 'files', max: 6000, windowMs: 60_000 } },
    handler: serve,
  });
};
