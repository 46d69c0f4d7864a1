import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply } from 'fastify';
import fp from 'fastify-plugin';
import { uiContentSecurityPolicy } from './content-security-policy.js';

/** Vite writes the UI here (appliance/vite.config.ts); tsup's clean leaves it alone. */
const UI_DIR = path.join('dist', 'appliance');
/** Vite's hashed file names: a changed file gets a new name, so a year is safe. */
const HASHED_ASSETS = '/assets/';
const IMMUTABLE = { maxAge: '365d', immutable: true } as const;
const INDEX = '/index.html';

/** The repository root: the folder above this module with package.json (dist/ when built, plugins/web-ui/ from source). */
function packageRoot(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!existsSync(path.join(dir, 'package.json')) && path.dirname(dir) !== dir) dir = path.dirname(dir);
  return dir;
}

/** Every file of the build as its URL path: only these are ever served, so no request can name another file. */
function listFiles(root: string, base = ''): string[] {
  if (!existsSync(root)) return [];
  return readdirSync(path.join(root, base), { withFileTypes: true }).flatMap((entry) => {
    const relative = path.posix.join(base, entry.name);
    if (entry.isDirectory()) return listFiles(root, relative);
    // Pre-compressed siblings are picked by @fastify/static from Accept-Encoding, never named by a URL.
    return /\.(br|gz)$/.test(entry.name) ? [] : [`/${relative}`];
  });
}

const isApiPath = (pathname: string) => pathname === '/api' || pathname.startsWith('/api/');
/** A path naming a file (an extension in its last segment) is never a page of the single-page app. */
const looksLikeFile = (pathname: string) => /\.[A-Za-z0-9]+$/.test(pathname);

/**
 * The web UI at / on the API's port: the built files, hashed assets cached for a year, and index.html
 * for every other GET outside /api (the app routes in the browser). Unknown /api paths stay the API's
 * JSON 404. Every file carries the UI's strict CSP and helmet's document headers.
 */
export default fp(
  async function webUi(app: FastifyInstance) {
    const root = path.join(packageRoot(), UI_DIR);
    const files = new Set(listFiles(root));
    const built = files.has(INDEX);
    if (!built) app.log.warn(`the web UI is not built (${UI_DIR}/index.html is missing): run npm run build`);
    const csp = uiContentSecurityPolicy({ upgradeInsecureRequests: app.config.tls.enabled });

    await app.register(async (scope) => {
      if (built) await scope.register(fastifyStatic, { root, serve: false, preCompressed: true, index: false });
      // Helmet's document set on the UI's files; an /api path handed on to the 404 stays a plain API answer.
      scope.addHook('onRequest', function documentHeaders(request, reply, done) {
        if (isApiPath(request.url.split('?')[0])) return done();
        app.documentHeaders.call(this, request, reply, done);
      });

      const sendUiFile = (reply: FastifyReply, file: string) => {
        reply.header('content-security-policy', csp);
        if (file.startsWith(HASHED_ASSETS)) return reply.sendFile(file.slice(1), IMMUTABLE);
        // The page and unhashed files are revalidated on every load, so a new release is picked up at once.
        reply.header('cache-control', 'no-cache');
        return reply.sendFile(file.slice(1), { cacheControl: false });
      };

      scope.get('/*', {
        config: { access: { public: true } },
        schema: { hide: true, summary: 'The web UI (single-page app)' },
      }, async (request, reply) => {
        const pathname = request.url.split('?')[0];
        if (isApiPath(pathname)) return reply.callNotFound();
        if (files.has(pathname)) return sendUiFile(reply, pathname);
        if (looksLikeFile(pathname)) return reply.callNotFound();
        if (!built) return reply.code(404).send({ error: { code: 'ui_not_built', message: 'The web UI is not built: run npm run build' } });
        return sendUiFile(reply, INDEX);
      });
    });
  },
  { name: 'web-ui', dependencies: ['hearth-security-headers'] },
);
