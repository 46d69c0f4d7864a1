import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance, onRequestHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import helmet, { type HelmetOptions } from 'helmet';

declare module 'fastify' {
  interface FastifyInstance {
    /** onRequest hook for routes that serve an HTML page: adds helmet's document headers. */
    documentHeaders: onRequestHookHandler;
    /** The headers every API answer carries (stamped by the root onRequest hook; answers made before hooks run add them). */
    apiHeaders: Readonly<Record<string, string>>;
  }
}

/**
 * helmet's headers, computed once at boot. @fastify/helmet runs helmet's whole middleware
 * chain (CSP parsing included) on every request, which cost more than half of an authenticated
 * read on a 2-core box; the headers never vary, so they are captured once and stamped on each
 * reply. A route may still override one (the docs pages set their own CSP).
 */
function helmetHeaders(options: HelmetOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  const response = {
    setHeader: (name: string, value: string | number) => void (headers[name.toLowerCase()] = String(value)),
    removeHeader: (name: string) => void delete headers[name.toLowerCase()],
    getHeader: (name: string) => headers[name.toLowerCase()],
  };
  let failure: unknown;
  helmet(options)({ headers: {} } as IncomingMessage, response as unknown as ServerResponse, (error?: unknown) => {
    failure = error;
  });
  if (failure) throw failure;
  return headers;
}

/**
 * The headers of every answer: OWASP's set for a REST API. The API answers JSON, which no browser
 * renders as a page, so helmet's document policies (script sources, opener isolation, DNS prefetch)
 * do nothing there; what matters is that an answer is never sniffed into HTML, framed, kept in a
 * browser or proxy cache (it may hold tokens or documents) or read by another site. HSTS comes from
 * helmet's options, so it is the same on every answer.
 */
export function apiHeaders(document: Record<string, string>): Record<string, string> {
  return {
    'cache-control': 'no-store',
    'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
    'cross-origin-resource-policy': 'same-origin',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
    'x-frame-options': 'DENY',
    ...(document['strict-transport-security'] ? { 'strict-transport-security': document['strict-transport-security'] } : {}),
  };
}

export const securityHeaders = fp(
  async function securityHeaders(app: FastifyInstance, options: HelmetOptions) {
    const document = helmetHeaders(options);
    const api = apiHeaders(document);
    app.decorate('apiHeaders', api);
    // Callback style: nothing here waits, so no promise per request.
    app.addHook('onRequest', (_request, reply, done) => {
      reply.headers(api);
      done();
    });
    app.decorate('documentHeaders', function stampDocumentHeaders(_request, reply, done) {
      reply.headers(document);
      done();
    } satisfies onRequestHookHandler);
  },
  { name: 'hearth-security-headers' },
);
