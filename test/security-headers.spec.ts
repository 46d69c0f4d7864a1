import { afterEach, describe, expect, it } from 'vitest';
import { startApp, type TestApp } from './helpers.js';

let t: TestApp | undefined;
afterEach(async () => t?.close());

describe('security headers', () => {
  it('are on every answer, errors included; no HSTS or https upgrade without TLS', async () => {
    t = await startApp();
    for (const url of ['/api/health', '/api/auth/me', '/api/nope']) {
      const res = await t.request({ method: 'GET', url });
      expect(res.headers['x-content-type-options'], url).toBe('nosniff');
      expect(res.headers['x-frame-options'], url).toBe('SAMEORIGIN');
      expect(res.headers['content-security-policy'], url).toContain("default-src 'self'");
      expect(res.headers['content-security-policy'], url).not.toContain('upgrade-insecure-requests');
      expect(res.headers['strict-transport-security'], url).toBeUndefined();
    }
  });

  it('add HSTS with HSTS_MAX_AGE when TLS is enabled', async () => {
    t = await startApp({ TLS_ENABLED: '1', SERVER_NAME: 'hearth.lan', HSTS_MAX_AGE: '600' });
    const res = await t.request({ method: 'GET', url: '/api/health' });
    expect(res.headers['strict-transport-security']).toBe('max-age=600; includeSubDomains');
    expect(res.headers['content-security-policy']).toContain('upgrade-insecure-requests');
  });
});
