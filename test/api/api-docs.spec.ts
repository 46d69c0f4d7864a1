import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderReference } from '../../plugins/api-docs/reference-page.js';
import { startApp, type TestApp } from '../helpers.js';

const INTERACTIVE = ['/api/openapi.json', '/api/swagger', '/api/swagger/', '/api/swagger/json', '/api/swagger/static/swagger-ui-bundle.js', '/api/redoc', '/api/redoc/redoc.standalone.js'];

type Doc = { paths: Record<string, Record<string, { 'x-hearth-access'?: unknown; security?: unknown }>>; components: { schemas: Record<string, unknown> } };

/** Every $ref in the document, to prove each one points at a component that exists. */
function refsOf(node: unknown): string[] {
  if (Array.isArray(node)) return node.flatMap(refsOf);
  if (!node || typeof node !== 'object') return [];
  return Object.entries(node).flatMap(([key, value]) => (key === '$ref' && typeof value === 'string' ? [value] : refsOf(value)));
}

describe('API docs with ENABLE_API_DOCS off (the default)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp();
  });
  afterAll(() => t.close());

  it('serves /docs to anyone: static HTML, no script, every operation with its access', async () => {
    const res = await t.request({ method: 'GET', url: '/docs' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(res.headers['content-security-policy']).toMatch(/^default-src 'none'; style-src 'sha256-[A-Za-z0-9+/=]+'/);
    expect(res.body).not.toMatch(/<script/i);
    expect(res.body).toMatch(/<td class="m">PUT<\/td><td><code>\/api\/auth\/users\/\{id\}<\/code><\/td><td>Update a user[^<]*<\/td><td>Admin<\/td>/);
    expect(res.body).toMatch(/<code>\/api\/health<\/code><\/td><td>[^<]+<\/td><td><span class="pub">Public<\/span>/);
    expect(res.body).toMatch(/<code>\/api\/auth\/oidc\/\{provider_id\}\/login<\/code><\/td><td>[^<]+<\/td><td><span class="pub">Public<\/span> <span class="tier">· ENTERPRISE plan<\/span>/);
    expect(res.body).toMatch(/<code>\/api\/auth\/me<\/code><\/td><td>[^<]+<\/td><td>Any signed-in user/);
    expect(res.body).toContain('ENABLE_API_DOCS=1');
    const doc = t.app.swagger() as unknown as Doc;
    for (const [path, item] of Object.entries(doc.paths)) {
      for (const method of Object.keys(item)) expect(res.body).toContain(`<td class="m">${method.toUpperCase()}</td><td><code>${path}</code>`);
    }
  });

  it('answers the normal 404 on the interactive docs and the raw document', async () => {
    for (const url of INTERACTIVE) {
      const res = await t.request({ method: 'GET', url });
      expect(res.statusCode, url).toBe(404);
      expect(res.json().error.code).toBe('not_found');
    }
  });

  it('builds an OpenAPI 3 document with role and tier per operation and resolvable $refs', () => {
    const doc = t.app.swagger() as unknown as Doc & { openapi: string; info: { title: string }; components: { securitySchemes: unknown } };
    expect(doc.openapi).toMatch(/^3\./);
    expect(doc.info.title).toBe('Hearth');
    expect(doc.components.securitySchemes).toEqual({ bearerAuth: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } });
    const update = doc.paths['/api/auth/users/{id}'].put;
    expect(update['x-hearth-access']).toEqual({ role: 'admin', tier: 'FREE' });
    expect(update.security).toEqual([{ bearerAuth: [] }]);
    expect(doc.paths['/api/health'].get['x-hearth-access']).toBe('public');
    expect(doc.paths['/api/health'].get.security).toBeUndefined();
    // The OIDC sign-in flow is public (no token yet) and declares its tier on the route like any other.
    expect(doc.paths['/api/auth/oidc/{provider_id}/login'].get['x-hearth-access']).toEqual({ public: true, tier: 'ENTERPRISE' });
    expect(doc.paths['/api/auth/oidc/{provider_id}/login'].get.security).toBeUndefined();
    expect(doc.components.schemas.ErrorBody).toBeDefined();
    const refs = refsOf(doc);
    expect(refs).toContain('#/components/schemas/ErrorBody');
    for (const ref of refs) expect(doc.components.schemas[ref.replace('#/components/schemas/', '')], ref).toBeDefined();
  });
});

describe('API docs with ENABLE_API_DOCS on', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ ENABLE_API_DOCS: '1' });
  });
  afterAll(() => t.close());

  it('serves the interactive docs and the document without a token', async () => {
    for (const url of INTERACTIVE) expect((await t.request({ method: 'GET', url })).statusCode, url).toBe(200);
  });

  it('serves /api/openapi.json with the access of each operation', async () => {
    const doc = (await t.request({ method: 'GET', url: '/api/openapi.json' })).json() as Doc;
    expect(doc.paths['/api/auth/users'].get['x-hearth-access']).toEqual({ role: 'admin', tier: 'FREE' });
    expect(doc.paths['/api/auth/me'].get['x-hearth-access']).toEqual({ role: 'viewer', tier: 'FREE' });
    expect(doc.paths['/api/openapi.json']).toBeUndefined(); // the docs pages are not API operations
    expect((await t.request({ method: 'GET', url: '/docs' })).body).toContain('href="/api/openapi.json"');
  });

  it('serves Swagger UI from local assets under a CSP that allows no inline script and no remote host', async () => {
    const res = await t.request({ method: 'GET', url: '/api/swagger' });
    expect(res.body).toContain('src="/api/swagger/static/swagger-ui-bundle.js"');
    expect(res.body).not.toMatch(/https?:\/\//);
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("script-src 'self';");
    expect(csp).not.toMatch(/unsafe-eval|https:|upgrade-insecure-requests/);
    const init = await t.request({ method: 'GET', url: '/api/swagger/static/swagger-initializer.js' });
    expect(init.body).toContain('"validatorUrl":null');
  });

  it('serves ReDoc with the local bundle, pointed at /api/openapi.json, with no inline script', async () => {
    const page = await t.request({ method: 'GET', url: '/api/redoc' });
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.body).toContain('<redoc spec-url="/api/openapi.json"></redoc>');
    expect(page.body.match(/<script[^>]*>/g)).toEqual(['<script src="/api/redoc/redoc.standalone.js">']);
    expect(page.headers['content-security-policy']).toContain("script-src 'self'; worker-src blob:");
    const bundle = await t.request({ method: 'GET', url: '/api/redoc/redoc.standalone.js' });
    expect(bundle.headers['content-type']).toBe('text/javascript; charset=utf-8');
    expect(bundle.body.length).toBeGreaterThan(100_000);
  });
});

describe('reference page rendering', () => {
  it('shows a tier gate and escapes what it prints', () => {
    const html = renderReference({
      info: { title: 'Hearth', version: '9.9.9' },
      paths: { '/api/x/{id}': { post: { summary: 'Do <b>it</b>', tags: ['x'], 'x-hearth-access': { role: 'editor', tier: 'PRO' } } } },
    }, false);
    expect(html).toContain('<td>Do &lt;b&gt;it&lt;/b&gt;</td><td>Editor or admin <span class="tier">· PRO plan</span></td>');
  });
});
