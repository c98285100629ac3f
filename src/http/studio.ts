// The web studio (studio/, bundled into dist/studio by `npm run build`): its page at `/` and its files
// under /studio/, public like the API document (the page signs in through /api/auth). The studio
// routes itself with the URL fragment, so nothing else needs a fallback page.
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { FastifyInstance } from 'fastify';
import fastifyStatic from '@fastify/static';

/** dist/studio of this package, found from this file both when built (dist/http) and under tsx (src/http). */
export function studioDir(): string {
  return join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'dist', 'studio');
}

// The page loads only its own files; API calls go to the same origin; media may come from the
// storage's signed URLs (another origin with S3), as blobs, or as data URLs of the thumbnails.
const PAGE_POLICY = [
  "default-src 'self'",
  "img-src 'self' blob: data: https: http:",
  "media-src 'self' blob: https: http:",
  "connect-src 'self' https: http:",
  "object-src 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

export async function registerStudio(app: FastifyInstance): Promise<void> {
  const root = studioDir();
  const built = existsSync(join(root, 'index.html'));
  await app.register(async (studio) => {
    studio.addHook('onRoute', (route) => {
      route.config = { ...route.config, auth: false };
      route.schema = { ...route.schema, hide: true };
    });
    if (built) {
      await studio.register(fastifyStatic, {
        root,
        prefix: '/studio/',
        index: false,
        cacheControl: true,
        maxAge: '1h',
      });
    }
    studio.get('/', async (_request, reply) => {
      void reply
        .header('cache-control', 'no-store')
        .header('content-security-policy', PAGE_POLICY)
        .header('referrer-policy', 'same-origin')
        .header('x-content-type-options', 'nosniff');
      if (!built)
        return reply
          .code(503)
          .type('text/plain; charset=utf-8')
          .send('The studio is not built on this server: run `npm run build`. The API works without it.');
      return reply.sendFile('index.html', root, { cacheControl: false });
    });
  });
}
