import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import helmet, { type HelmetOptions } from 'helmet';

/**
 * helmet's headers, computed once at boot. @fastify/helmet runs helmet's whole middleware
 * chain (CSP parsing included) on every request, which cost more than half of an authenticated
 * read on a 2-core box; the headers never vary, so they are captured once and stamped on each
 * reply. A route may still override one (the docs pages set their own CSP).
 */
export function helmetHeaders(options: HelmetOptions): Record<string, string> {
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

export const securityHeaders = fp(
  async function securityHeaders(app: FastifyInstance, options: HelmetOptions) {
    const headers = helmetHeaders(options);
    // Callback style: nothing here waits, so no promise per request.
    app.addHook('onRequest', (_request, reply, done) => {
      reply.headers(headers);
      done();
    });
  },
  { name: 'hearth-security-headers' },
);
