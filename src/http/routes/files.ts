// GET|HEAD /v2/files/<key>: signed downloads of the local blob store. No API key: the signed URL is the
// credential. Streams the blob (never buffers it) and serves single byte ranges.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../services/container.js';
import { AppError } from '../../domain/errors.js';
import { BlobNotFoundError, isValidBlobKey } from '../../storage/blob-store.js';
import { contentDisposition } from '../../storage/content-disposition.js';
import { parseRange } from '../range.js';

function single(v: unknown): string | undefined {
  return typeof v === 'string' ? v : undefined;
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

  app.route({
    method: ['GET', 'HEAD'],
    url: '/v2/files/*',
    schema: { hide: true },
    // Players seek with many range requests: signed files get their own, larger per-IP budget.
    config: { auth: false, rateRule: { bucket: 'files', max: 6000, windowMs: 60_000 } },
    handler: serve,
  });
};
