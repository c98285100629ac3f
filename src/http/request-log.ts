// The request log: one line per request, when it has been answered (`request completed` with the
// method, URL, status, time taken in ms and client address; the request id comes from the request's
// child logger), and `request received` at debug as it arrives, for tracing requests that never
// finish. Fastify's default writes two lines at info through serializers that also read the host
// and port; at LOG_LEVEL=info that was the largest cost of a cheap request (bench/results/2026-history.md,
// issue 15). Fastify's other internal lines (stream errors, serializer failures, ...) are kept as
// they are. URL signatures and credentials are blanked by the logger's last filter (src/logger.ts).
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';

function lineOf(request: FastifyRequest, reply: FastifyReply): Record<string, unknown> {
  return {
    method: request.method,
    url: request.url,
    statusCode: reply.statusCode,
    responseTime: Math.round(reply.elapsedTime * 1000) / 1000,
    remoteAddress: request.ip,
  };
}

export class RequestLogController extends LogController {
  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ method: request.method, url: request.url }, 'request received');
  }

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    if (error) reply.log.error({ ...lineOf(request, reply), err: error }, 'request errored');
    else reply.log.info(lineOf(request, reply), 'request completed');
  }
}
