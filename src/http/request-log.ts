// One log line per request, when it has been answered: `request completed` with the method, URL,
// status, time taken (ms) and client address; the request id comes from the request's child logger.
// Fastify's own request logging writes two lines per request through serializers that read the host
// and port too; at LOG_LEVEL=info that was the largest cost of a cheap request (docs/benchmarks.md,
// issue 15). `request received` is written at debug, for tracing requests that never finish.
// URL signatures and credentials are blanked by the logger's last filter (src/logger.ts).
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';

export function registerRequestLog(app: FastifyInstance, logger: Logger): void {
  if (logger.isLevelEnabled('debug')) {
    app.addHook('onRequest', (request, _reply, done) => {
      request.log.debug({ method: request.method, url: request.url }, 'request received');
      done();
    });
  }
  if (!logger.isLevelEnabled('info')) return;
  app.addHook('onResponse', (request, reply, done) => {
    request.log.info(
      {
        method: request.method,
        url: request.url,
        statusCode: reply.statusCode,
        responseTime: Math.round(reply.elapsedTime * 1000) / 1000,
        remoteAddress: request.ip,
      },
      'request completed',
    );
    done();
  });
}
