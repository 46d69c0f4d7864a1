import { afterEach, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from '../helpers.js';

let t: TestApp | undefined;
afterEach(async () => t?.close());

/** What every answer carries: OWASP's REST set. */
const API_HEADERS = {
  'cache-control': 'no-store',
  'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
  'cross-origin-resource-policy': 'same-origin',
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
};

describe('security headers', () => {
  it('every API answer, errors included, is unsniffable, unframeable and uncached; no HSTS without TLS', async () => {
    t = await startApp();
    const token = (await t.login()).access;
    for (const [url, status] of [['/api/health', 200], ['/api/auth/me', 200], ['/api/nope', 404], ['/api/auth/users', 200]] as const) {
      const res = await t.request({ method: 'GET', url, token });
      expect(res.statusCode, url).toBe(status);
      expect(res.headers, url).toMatchObject(API_HEADERS);
      expect(res.headers['strict-transport-security'], url).toBeUndefined();
      expect(res.headers['x-dns-prefetch-control'], url).toBeUndefined(); // a document policy: pages only
    }
    const anonymous = await t.request({ method: 'GET', url: '/api/auth/me' });
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.headers).toMatchObject(API_HEADERS);
  });

  it("HTML pages get helmet's document headers, their own CSP, and no https upgrade without TLS", async () => {
    t = await startApp({ ENABLE_API_DOCS: 'true' });
    for (const url of ['/docs', '/api/redoc', '/api/redoc/redoc.standalone.js']) {
      const res = await t.request({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers, url).toMatchObject({
        'x-content-type-options': 'nosniff',
        'x-frame-options': 'SAMEORIGIN',
        'x-dns-prefetch-control': 'off',
        'cross-origin-opener-policy': 'same-origin',
        'origin-agent-cluster': '?1',
        'referrer-policy': 'no-referrer',
      });
      expect(res.headers['content-security-policy'], url).not.toContain('upgrade-insecure-requests');
    }
    // The bundle sets no CSP of its own: helmet's.
    expect((await t.request({ method: 'GET', url: '/api/redoc/redoc.standalone.js' })).headers['content-security-policy']).toContain("default-src 'self'");
  });

  it('add HSTS with HSTS_MAX_AGE when TLS is enabled, on answers and pages alike', async () => {
    t = await startApp({ TLS_ENABLED: '1', SERVER_NAME: 'hearth.lan', HSTS_MAX_AGE: '600', ENABLE_API_DOCS: 'true' });
    for (const url of ['/api/health', '/docs', '/api/redoc/redoc.standalone.js']) {
      expect((await t.request({ method: 'GET', url })).headers['strict-transport-security'], url).toBe('max-age=600; includeSubDomains');
    }
    expect((await t.request({ method: 'GET', url: '/api/redoc/redoc.standalone.js' })).headers['content-security-policy']).toContain('upgrade-insecure-requests');
  });
});
