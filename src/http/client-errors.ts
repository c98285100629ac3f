// Errors Node's HTTP parser raises before a request reaches Fastify (a request not received within
// LIPSYNC_REQUEST_TIMEOUT_SECONDS / LIPSYNC_HEADERS_TIMEOUT_SECONDS, headers too large, bytes that are
// not HTTP): answered with a catalogue error in the spec's error body, then the connection is closed.
import type { Socket } from 'node:net';
import { STATUS_CODES } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import { AppError, type ErrorCode } from '../domain/errors.js';
import { appErrorBody } from './error-body.js';

function codeFor(err: NodeJS.ErrnoException): ErrorCode {
  switch (err.code) {
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return 'request_timeout';
    case 'HPE_HEADER_OVERFLOW':
      return 'request_headers_too_large';
    default:
      return 'invalid_request';
  }
}

/** The raw HTTP/1.1 response for a client error (always `Connection: close`). */
export function clientErrorResponse(err: NodeJS.ErrnoException): string {
  const code = codeFor(err);
  const appErr = new AppError(code, {
    message: code === 'invalid_request' ? 'The request is not valid HTTP.' : undefined,
  });
  const body = JSON.stringify(appErrorBody(appErr));
  return (
    `HTTP/1.1 ${appErr.status} ${STATUS_CODES[appErr.status] ?? 'Error'}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n` +
    'Connection: close\r\n\r\n' +
    body
  );
}

/** Fastify's clientErrorHandler; `this` is the Fastify instance. */
export function handleClientError(
  this: { log: FastifyBaseLogger },
  err: NodeJS.ErrnoException,
  socket: Socket,
): void {
  // A reset connection is gone: nothing to answer.
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  this.log.debug({ err: { code: err.code, message: err.message } }, 'client error');
  // Answer only while no response has begun on this socket (Node's own rule for clientError).
  const pending = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !pending?.headersSent) {
    socket.end(clientErrorResponse(err), () => socket.destroy());
  } else {
    socket.destroy();
  }
}
