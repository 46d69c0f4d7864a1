import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, UI_INDEX } from '../fixtures/service-process.js';
import { startApp, type TestApp } from '../helpers.js';

/** The built web UI at / on the API's port: files, the single-page fallback, caching and the strict CSP. */
let t: TestApp;
let indexHtml: string;
let scriptPath: string;

beforeAll(async () => {
  ensureBuilt();
  indexHtml = readFileSync(UI_INDEX, 'utf8');
  scriptPath = indexHtml.match(/<script type="module" crossorigin src="([^"]+)"/)![1];
  t = await startApp();
});
afterAll(() => t.close());

const get = (url: string, headers: Record<string, string> = {}) => t.request({ method: 'GET', url, headers });
const directives = (csp: string) => new Map(csp.split(/;\s*/).map((directive) => [directive.split(' ')[0], directive.split(' ').slice(1)]));

describe('the web UI', () => {
  it('serves index.html at / with a CSP that allows no inline script or style and nothing off this origin', async () => {
    const res = await get('/');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toBe(indexHtml);
    expect(res.headers['cache-control']).toBe('no-cache');
    const csp = directives(res.headers['content-security-policy'] as string);
    expect(csp.get('default-src')).toEqual(["'none'"]);
    expect(csp.get('script-src')).toEqual(["'self'"]);
    expect(csp.get('style-src')).toEqual(["'self'"]);
    expect(csp.get('connect-src')).toEqual(["'self'"]);
    expect(csp.get('img-src')).toEqual(["'self'", 'data:', 'blob:']);
    expect(csp.get('worker-src')).toEqual(["'self'"]);
    expect(csp.get('frame-ancestors')).toEqual(["'none'"]);
    expect(csp.get('object-src')).toEqual(["'none'"]);
    expect(csp.get('base-uri')).toEqual(["'none'"]);
    expect(res.headers['content-security-policy']).not.toMatch(/unsafe-(inline|eval)|https?:|\*/);
    // Helmet's document set is there too.
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['cross-origin-opener-policy']).toBe('same-origin');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
  });

  it('has no inline script in the built page: every script names a file of this origin', () => {
    const scripts = [...indexHtml.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/g)];
    expect(scripts.length).toBeGreaterThan(0);
    for (const [, attributes, body] of scripts) {
      expect(attributes).toMatch(/src="\/assets\/[^"]+\.js"/);
      expect(body.trim()).toBe('');
    }
    expect(indexHtml).not.toMatch(/<style|style="|\son[a-z]+=/i);
  });

  it('answers every other GET outside /api with index.html (deep links), and sends its pages no-cache', async () => {
    for (const url of ['/chat', '/chat/1b2c3d', '/reset-password?token=abc', '/admin/users', '/sign-in']) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(200);
      expect(res.body, url).toBe(indexHtml);
      expect(res.headers['content-security-policy'], url).toContain("script-src 'self'");
    }
  });

  it('keeps unknown /api paths the API’s JSON 404, and does not shadow API or docs routes', async () => {
    for (const url of ['/api/nope', '/api', '/api/docs/x/y/z']) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(404);
      expect(res.headers['content-type'], url).toMatch(/^application\/json/);
      expect(res.json().error.code, url).toBe('not_found');
    }
    expect((await get('/api/health')).json().status).toEqual(expect.any(String));
    expect((await get('/docs')).body).toContain('<h1');
    // Only GET falls back: a POST to a page path is the API's 404.
    const post = await t.request({ method: 'POST', url: '/chat', payload: {} });
    expect(post.statusCode).toBe(404);
    expect(post.json().error.code).toBe('not_found');
  });

  it('serves hashed assets cached for a year, and pre-compressed when the browser accepts it', async () => {
    const plain = await get(scriptPath);
    expect(plain.statusCode).toBe(200);
    expect(plain.headers['content-type']).toMatch(/javascript/);
    expect(plain.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    const brotli = await get(scriptPath, { 'accept-encoding': 'br, gzip' });
    expect(brotli.headers['content-encoding']).toBe('br');
    expect(brotli.rawPayload.length).toBeLessThan(plain.rawPayload.length);
    const gzip = await get(scriptPath, { 'accept-encoding': 'gzip' });
    expect(gzip.headers['content-encoding']).toBe('gzip');
  });

  it('answers a missing file with a 404, never with the page (a stale asset must not load HTML as script)', async () => {
    for (const url of ['/assets/index-missing.js', '/favicon.ico', '/index.html.br', '/../package.json', '/assets/../../package.json']) {
      const res = await get(url);
      expect(res.statusCode, url).toBe(404);
      expect(res.body, url).not.toContain('<div id="app">');
    }
  });
});
