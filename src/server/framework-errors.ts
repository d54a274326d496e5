/**
 * fastify's and Node's own refusals, answered in our envelope ({error: {code, message}})
 * instead of theirs ({"error":"Bad Request","code":"FST_ERR_..."}), so a client parses one
 * shape whatever refused its request. None of these is a server fault: they log at debug.
 */
import http from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { ServerErrorCode } from '../wire/error-codes.js';
import { SERVER_ERROR_CODES, errorBody, type WireError } from './errors.js';

/** The router's refusals of a path, before any route or hook runs (fastify's `frameworkErrors`). */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  request.log.debug({ code: error.code }, 'request refused by the router');
  const code: ServerErrorCode = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'PATH_TOO_LONG' : error.code === 'FST_ERR_BAD_URL' ? 'INVALID_PATH' : 'BAD_REQUEST';
  const message =
    code === 'PATH_TOO_LONG'
      ? 'path: a segment is longer than any id or topic the server accepts'
      : code === 'INVALID_PATH'
        ? 'path: not a valid URL path (a bad percent-escape)'
        : 'the request was refused before reaching a route';
  void reply.code(SERVER_ERROR_CODES[code].status).send(errorBody(code, message));
}

/**
 * A request Node's HTTP parser refused (malformed, headers too large, too slow): no request
 * object exists, so the answer is written on the socket, as fastify's default does.
 */
export function answerClientError(this: { log: { debug(object: object, message: string): void } }, error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const code: ServerErrorCode = error.code === 'HPE_HEADER_OVERFLOW' ? 'HEADERS_TOO_LARGE' : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'REQUEST_TIMEOUT' : 'BAD_REQUEST';
  const message = code === 'HEADERS_TOO_LARGE' ? 'headers: larger than the server accepts' : code === 'REQUEST_TIMEOUT' ? 'the request did not arrive in time' : 'not a valid HTTP request';
  this.log.debug({ code: error.code }, 'malformed request refused');
  const status = SERVER_ERROR_CODES[code].status;
  const body = JSON.stringify(errorBody(code, message));
  if (socket.writable)
    socket.write(`HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? ''}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n${body}`);
  socket.destroy(error);
}

/** Errors of plugins that name a client fault by a 4xx status only (e.g. @fastify/static's). */
export function mapStatusError(error: FastifyError): WireError | null {
  const status = error.statusCode;
  if (typeof status !== 'number' || status < 400 || status >= 500) return null;
  // @fastify/static refuses dot segments (/ui/../v1/stats) with a 403 "Forbidden".
  if (error.code === 'FST_STATIC_FORBIDDEN_PATH') return wire('INVALID_PATH', 'path: dot segments (. and ..) are not served');
  const code = statusCodeToServerCode(status);
  return wire(code, code === 'BAD_REQUEST' ? `request refused (${error.message.slice(0, 160)})` : error.message.slice(0, 160));
}

function statusCodeToServerCode(status: number): ServerErrorCode {
  switch (status) {
    case 404:
      return 'ROUTE_NOT_FOUND';
    case 413:
      return 'BODY_TOO_LARGE';
    case 414:
      return 'PATH_TOO_LONG';
    case 415:
      return 'UNSUPPORTED_MEDIA_TYPE';
    case 431:
      return 'HEADERS_TOO_LARGE';
    default:
      return 'BAD_REQUEST';
  }
}

function wire(code: ServerErrorCode, message: string): WireError {
  return { status: SERVER_ERROR_CODES[code].status, body: errorBody(code, message) };
}
