import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { REFERENCE_CSP, type ReferenceDocument, renderReference } from './reference-page.js';

const open = { access: { public: true as const } };
const hidden = { hide: true };

// No inline script anywhere; the UIs inject inline styles, and Redoc's search runs in a blob: worker.
const SWAGGER_CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; frame-ancestors 'self'";
const REDOC_CSP = "default-src 'none'; script-src 'self'; worker-src blob:; child-src blob:; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'self'";

const REDOC_PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>Hearth API reference (ReDoc)</title></head><body>
<redoc spec-url="/api/openapi.json"></redoc>
<script src="/api/redoc/redoc.standalone.js"></script>
</body></html>`;

/** GET /docs: the static reference, always on, built once from the OpenAPI document after boot. */
export async function referenceRoute(app: FastifyInstance): Promise<void> {
  let page: string | undefined;
  app.get('/docs', { config: open, onRequest: app.documentHeaders, schema: { ...hidden, summary: 'Human-readable API reference (HTML)' } }, async (_request, reply) => {
    page ??= renderReference(app.swagger() as unknown as ReferenceDocument, app.config.enableApiDocs);
    return reply.header('content-security-policy', REFERENCE_CSP).type('text/html; charset=utf-8').send(page);
  });
}

/**
 * /api/openapi.json, /api/swagger and /api/redoc, registered only with ENABLE_API_DOCS.
 * Public by the admin's opt-in: a browser cannot attach a bearer token to these pages.
 */
export async function interactiveDocs(app: FastifyInstance): Promise<void> {
  // HTML pages and their assets: helmet's document headers on top of the API's.
  app.addHook('onRequest', app.documentHeaders);
  // swagger-ui's own routes declare no access; this scope's onRoute runs before the guard's boot check.
  app.addHook('onRoute', (route) => {
    if (!route.config?.access) route.config = { ...route.config, ...open };
  });

  app.get('/api/openapi.json', { config: open, schema: { ...hidden, summary: 'The OpenAPI 3 document' } }, async () => app.swagger());

  app.get('/api/redoc', { config: open, schema: hidden }, async (_request, reply) =>
    reply.header('content-security-policy', REDOC_CSP).type('text/html; charset=utf-8').send(REDOC_PAGE));

  const redocBundle = await readFile(createRequire(import.meta.url).resolve('redoc/bundles/redoc.standalone.js'));
  app.get('/api/redoc/redoc.standalone.js', { config: open, schema: hidden }, async (_request, reply) =>
    reply.type('text/javascript; charset=utf-8').header('cache-control', 'public, max-age=86400').send(redocBundle));

  await app.register(swaggerUi, { routePrefix: '/api/swagger', staticCSP: SWAGGER_CSP, uiConfig: { validatorUrl: null } });
}
