import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type DeclaredRoute, declaredRoutes } from '../../core/auth/guard.js';
import { startApp, type TestApp } from '../helpers.js';

/** The spec's public routes (Authentication §1), plus /docs; routes later issues add may be absent. */
const PUBLIC = [
  /^(GET|HEAD) \/api\/health$/,
  /^(GET|HEAD) \/api\/branding$/,
  /^(GET|HEAD) \/api\/branding\/logo$/,
  /^(GET|HEAD) \/api\/auth\/oidc\/providers$/,
  /^POST \/api\/auth\/(login|refresh|totp\/mfa-login|forgot-password|reset-password)$/,
  /^(GET|HEAD) \/api\/auth\/oidc\/:[^/]+\/(login|callback)$/,
  /^POST \/api\/auth\/oidc\/session$/, // the web UI redeems its OIDC handoff cookie here (no token yet)
  /^(GET|HEAD) \/docs$/,
  /^(GET|HEAD) \/\*$/, // the web UI's files and pages (plugins/web-ui); unknown /api paths stay the API's 404
];
/** Public only when the admin opts in with ENABLE_API_DOCS. */
const DOCS = [/^(GET|HEAD) \/api\/(openapi\.json|redoc|redoc\/redoc\.standalone\.js|swagger|swagger\/.*)$/];

const name = (route: DeclaredRoute) => `${route.method} ${route.url}`;
const matches = (patterns: RegExp[], route: DeclaredRoute) => patterns.some((pattern) => pattern.test(name(route)));
const isPublic = (route: DeclaredRoute) => !!route.access && 'public' in route.access;
/** A concrete URL for a route pattern: every path parameter and wildcard gets a dummy value. */
const concrete = (url: string) => url.replace(/:\w+(\([^)]*\))?/g, '1').replace(/\*/g, 'x');

describe.each<{ label: string; env: Record<string, string>; allowed: RegExp[] }>([
  { label: 'ENABLE_API_DOCS off', env: {}, allowed: PUBLIC },
  { label: 'ENABLE_API_DOCS on', env: { ENABLE_API_DOCS: '1' }, allowed: [...PUBLIC, ...DOCS] },
])('route table, $label', ({ env, allowed }) => {
  let t: TestApp;
  let routes: DeclaredRoute[];
  beforeAll(async () => {
    t = await startApp(env);
    routes = declaredRoutes(t.app);
  });
  afterAll(() => t.close());

  it('has the routes of this release, each with declared access', () => {
    expect(routes.length).toBeGreaterThan(20);
    expect(routes.filter((route) => !route.access)).toEqual([]);
    for (const expected of ['GET /api/health', 'GET /docs', 'POST /api/auth/login', 'POST /api/auth/refresh']) {
      expect(routes.map(name)).toContain(expected);
    }
  });

  it('makes public exactly the routes the spec lists', () => {
    const wrong = routes.filter((route) => isPublic(route) !== matches(allowed, route)).map(name);
    expect(wrong).toEqual([]);
  });

  it('answers 401 to an anonymous request on every other route', async () => {
    const unexpected: string[] = [];
    const protectedRoutes = routes.filter((route) => !isPublic(route));
    expect(protectedRoutes.length).toBeGreaterThan(15);
    for (const route of protectedRoutes) {
      const withBody = ['POST', 'PUT', 'PATCH'].includes(route.method);
      const res = await t.request({ method: route.method as 'GET', url: concrete(route.url), ...(withBody ? { payload: {} } : {}) });
      const code = route.method === 'HEAD' ? 'unauthorized' : res.json().error?.code;
      if (res.statusCode !== 401 || code !== 'unauthorized' || res.headers['www-authenticate'] !== 'Bearer') {
        unexpected.push(`${name(route)} -> ${res.statusCode} ${res.body.slice(0, 80)}`);
      }
    }
    expect(unexpected).toEqual([]);
  });
});

describe('route table without ENABLE_API_DOCS', () => {
  it('registers no interactive docs route at all', async () => {
    const t = await startApp();
    try {
      expect(declaredRoutes(t.app).filter((route) => matches(DOCS, route)).map(name)).toEqual([]);
    } finally {
      await t.close();
    }
  });
});
