import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Type } from 'typebox';
import { OngoingProblem } from './ongoing-problem.js';
import { VISIBLE_TEXT_PATTERN } from './schemas.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** A full disk: logged once while it lasts; a write that succeeds again (an upload stored) ends it. */
    diskFull: OngoingProblem;
  }
}

/**
 * One error type and one JSON shape for every route:
 *   { "error": { "code": "snake_case", "message": "human sentence", "field"?: "body.path" } }
 */
const ErrorBody = Type.Object(
  {
    error: Type.Object({
      code: Type.String(),
      message: Type.String(),
      field: Type.Optional(Type.String()),
    }),
  },
  { $id: 'ErrorBody', description: 'The one error shape of every route' },
);

export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    readonly code: string,
    message: string,
    readonly field?: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'HttpError';
  }
}

export const badRequest = (code: string, message: string, field?: string) => new HttpError(400, code, message, field);
export const unauthorized = (message = 'Authentication required') =>
  new HttpError(401, 'unauthorized', message, undefined, { 'www-authenticate': 'Bearer' });
export const forbidden = (code: string, message: string) => new HttpError(403, code, message);
export const notFound = (what: string) => new HttpError(404, 'not_found', `${what} not found`);
export const conflict = (code: string, message: string, field?: string) => new HttpError(409, code, message, field);
export const payloadTooLarge = (message: string) => new HttpError(413, 'payload_too_large', message);
export const unsupportedMediaType = (message: string) => new HttpError(415, 'unsupported_media_type', message);
export const unprocessable = (code: string, message: string, field?: string) => new HttpError(422, code, message, field);
const diskFull = () =>
  new HttpError(507, 'disk_full', 'The server has no disk space left, so nothing was stored; an administrator must free space. Reading and searching still work');
const multipartMalformed = () =>
  new HttpError(400, 'multipart_malformed', 'The multipart/form-data body is malformed: no boundary, or it ended before its closing boundary', 'body');
export const tooManyRequests = (retryAfterSeconds: number, message = 'Too many requests, retry later') =>
  new HttpError(429, 'too_many_requests', message, undefined, { 'retry-after': String(Math.max(1, Math.ceil(retryAfterSeconds))) });

interface AjvIssue {
  instancePath: string;
  keyword: string;
  message?: string;
  params: Record<string, unknown>;
}

/** "body.user.email" from Ajv's "/user/email" plus the missing property, if any. */
function fieldOf(context: string | undefined, issue: AjvIssue): string {
  const parts = issue.instancePath.split('/').filter(Boolean);
  if (issue.keyword === 'required' && typeof issue.params.missingProperty === 'string') parts.push(issue.params.missingProperty);
  if (issue.keyword === 'additionalProperties' && typeof issue.params.additionalProperty === 'string') parts.push(issue.params.additionalProperty);
  return [context ?? 'body', ...parts].join('.');
}

function describe(issue: AjvIssue, field: string): string {
  if (issue.keyword === 'required') return `${field} is required`;
  if (issue.keyword === 'additionalProperties') return `${field} is not an accepted field`;
  if (issue.keyword === 'enum' && Array.isArray(issue.params.allowedValues)) return `${field} must be one of ${issue.params.allowedValues.join(', ')}`;
  if (issue.keyword === 'pattern' && issue.params.pattern === VISIBLE_TEXT_PATTERN) return `${field} must contain visible text, not only spaces or control characters`;
  return `${field} ${issue.message ?? 'is invalid'}`;
}

/** No room left: the filesystem (ENOSPC), a quota (EDQUOT) or SQLite writing to a full disk (SQLITE_FULL). */
function isDiskFull(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ENOSPC' || code === 'EDQUOT' || code === 'SQLITE_FULL';
}

/** Fastify's (find-my-way's) longest path parameter; a longer one is refused before any route runs. */
export const MAX_PARAM_LENGTH = 100;

/** busboy's words for a multipart body without a boundary, or cut off before its closing boundary. */
const MALFORMED_MULTIPART = /^Multipart: Boundary not found$|unexpected end of multipart data/i;

/** Maps framework errors (validation, parsing, limits) onto the one shape. */
export function toHttpError(error: FastifyError & { validation?: AjvIssue[]; validationContext?: string }): HttpError | undefined {
  if (error instanceof HttpError) return error;
  if (isDiskFull(error)) return diskFull();
  if (error.code === 'FST_MP_PREMATURE_CLOSE' || MALFORMED_MULTIPART.test(error.message)) return multipartMalformed();
  if (error.validation?.length) {
    const issue = error.validation[0];
    const field = fieldOf(error.validationContext, issue);
    return badRequest('validation_failed', describe(issue, field), field);
  }
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return badRequest('malformed_json', 'The request body is not valid JSON');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
    case 'FST_FILES_LIMIT':
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return payloadTooLarge('The request body is larger than this endpoint accepts');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return unsupportedMediaType('This content type is not accepted here');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return badRequest('invalid_content_length', 'Content-Length does not match the body');
    case 'FST_ERR_BAD_URL':
      return badRequest('malformed_url', 'The URL is not valid: a percent-encoded part of its path does not decode', 'path');
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new HttpError(414, 'uri_too_long', `A part of the URL path is longer than ${MAX_PARAM_LENGTH} characters`, 'path');
  }
  if (error.statusCode === 429) return tooManyRequests(Number(error.message.match(/\d+/)?.[0] ?? 60));
  if (error.statusCode && error.statusCode >= 400 && error.statusCode < 500) {
    return new HttpError(error.statusCode, 'bad_request', error.message);
  }
  return undefined;
}

function errorPayload(error: HttpError) {
  return { error: { code: error.code, message: error.message, ...(error.field ? { field: error.field } : {}) } };
}

/**
 * Fastify's `frameworkErrors`: a URL refused while routing (a malformed percent-encoding, a path parameter over
 * MAX_PARAM_LENGTH) gets the one shape and the API's headers too; no hook has run for it.
 */
export function frameworkError(error: FastifyError, _request: FastifyRequest, reply: FastifyReply): void {
  const known = toHttpError(error) ?? badRequest('bad_request', 'The request could not be routed');
  reply.code(known.statusCode).headers({ ...reply.server.apiHeaders, ...known.headers }).send(errorPayload(known));
}

/**
 * Fastify's `clientErrorHandler`: what Node's HTTP parser refuses before Fastify sees a request (headers over Node's
 * 16 KiB, a request line or header that is not HTTP, a client too slow to send its headers) is answered on the raw
 * socket, in the one shape and with the API's headers, and the connection closed. Called with `this` the app.
 */
export function clientError(this: FastifyInstance, error: Error & { code?: string }, socket: Socket): void {
  // A reset connection is gone: nothing to answer (as Fastify's own handler).
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const refusal =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? new HttpError(431, 'headers_too_large', 'The request line and headers are larger than this server accepts (16 KiB)')
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? new HttpError(408, 'request_timeout', 'The request did not arrive in time')
        : badRequest('malformed_request', 'The request is not valid HTTP');
  this.log.debug({ err: error }, 'client error');
  if (socket.writable) {
    const body = JSON.stringify(errorPayload(refusal));
    const headers = { ...this.apiHeaders, 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(body)), connection: 'close' };
    const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('');
    socket.write(`HTTP/1.1 ${refusal.statusCode} ${STATUS_CODES[refusal.statusCode]}\r\n${lines}\r\n${body}`);
  }
  socket.destroy(error);
}

/** The request came with a body that has not been read to its end (an upload refused part-way). */
function bodyLeftUnread(request: FastifyRequest): boolean {
  const hasBody = Number(request.headers['content-length'] ?? 0) > 0 || request.headers['transfer-encoding'] !== undefined;
  return hasBody && !request.raw.readableEnded;
}

/** One error handler and one not-found handler; 5xx answers never carry internals. */
export const errorHandlers = fp(
  async function errorHandlers(app: FastifyInstance) {
    app.addSchema(ErrorBody);
    app.decorate('diskFull', new OngoingProblem(
      app.log,
      'the disk is full (DATA_DIR): uploads and other writes are refused with 507 disk_full until space is freed; reads go on',
      'disk space is available again: writes are accepted',
    ));

    app.setErrorHandler((error: FastifyError, request, reply) => {
      // The unread rest of the body would stall the connection (or be parsed as the next request): end it with this answer.
      if (bodyLeftUnread(request)) reply.header('connection', 'close');
      const known = toHttpError(error);
      if (!known) {
        request.log.error({ err: error }, 'request failed');
        return reply.code(500).send({ error: { code: 'internal_error', message: 'Internal server error' } });
      }
      if (known.code === 'disk_full') app.diskFull.report(error);
      else if (known.statusCode >= 500) request.log.error({ err: error }, 'request failed');
      return reply.code(known.statusCode).headers(known.headers).send(errorPayload(known));
    });

    // Rate limited, so that scanning for routes is slow work.
    app.setNotFoundHandler({ preHandler: app.rateLimit({ max: 120, timeWindow: '1 minute' }) }, (request, reply) => {
      reply.code(404).send({ error: { code: 'not_found', message: `No route ${request.method} ${request.url.split('?')[0]}` } });
    });
  },
  { name: 'hearth-errors', dependencies: ['@fastify/rate-limit'] },
);
