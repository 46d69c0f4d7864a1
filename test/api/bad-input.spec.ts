import { randomUUID } from 'node:crypto';
import net from 'node:net';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { declaredRoutes } from '../../core/auth/guard.js';
import { MAX_PARAM_LENGTH } from '../../core/errors.js';
import { generateLicenseKeyPair, issueLicense } from '../../plugins/license/license-key.js';
import { snapshot, startApp, type TestApp } from '../helpers.js';

/** What a refusal made while routing must carry as much as any other answer (test/api/security-headers.spec.ts). */
const API_HEADERS = { 'cache-control': 'no-store', 'x-content-type-options': 'nosniff', 'x-frame-options': 'DENY' };

/** The one error shape (core/errors.ts), or why a body is not it. */
function shapeProblem(res: LightMyRequestResponse): string | null {
  let body: { error?: { code?: unknown; message?: unknown } } | undefined;
  try {
    body = res.json();
  } catch {
    return `not JSON: ${res.body.slice(0, 120)}`;
  }
  return typeof body?.error?.code === 'string' && typeof body.error.message === 'string' ? null : `not the error shape: ${res.body.slice(0, 120)}`;
}

/** Sends raw bytes to a listening app and reads the answer until the server closes the connection: status line, headers, JSON body. */
async function raw(app: TestApp['app'], bytes: string): Promise<{ status: string; headers: Record<string, string>; body: unknown }> {
  const { port } = app.server.address() as net.AddressInfo;
  const answer = await new Promise<string>((resolve, reject) => {
    let received = '';
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (received += chunk));
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
  });
  const [head, body] = answer.split('\r\n\r\n');
  const [status, ...lines] = head.split('\r\n');
  return { status, headers: Object.fromEntries(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()])), body: JSON.parse(body) };
}

const signer = generateLicenseKeyPair();

describe('bad input', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startApp({ LICENSE_PUBLIC_KEYS: signer.publicKeyBase64 });
    // ENTERPRISE, so that every route's own checks run rather than the tier gate.
    const license = issueLicense(signer.privateKeyPem, {
      id: randomUUID(), licensee: 'Corp', tier: 'ENTERPRISE', limits: { documents: 1000, file_size_bytes: 1 << 30, storage_bytes: 1 << 40 },
      issued_at: new Date().toISOString(), expires_at: new Date(Date.now() + 30 * 86_400_000).toISOString(),
    } as never);
    const res = await t.request({ method: 'POST', url: '/api/license', token: (await t.login()).access, payload: { license_key: license } });
    expect(res.statusCode).toBe(200);
  });
  afterAll(() => t.close());

  it('a malformed percent-encoding in the path: 400 malformed_url, in the one shape, with the API headers', async () => {
    const token = (await t.login()).access;
    for (const url of ['/api/documents/%E0%A4%A', '/api/documents/%', '/api/nope/%zz']) {
      const res = await t.request({ method: 'GET', url, token });
      expect(res.statusCode, url).toBe(400);
      expect(res.json(), url).toEqual({ error: { code: 'malformed_url', message: expect.stringContaining('not valid'), field: 'path' } });
      expect(res.headers, url).toMatchObject(API_HEADERS);
    }
  });

  it(`a path parameter over ${MAX_PARAM_LENGTH} characters: 414 uri_too_long in the one shape; at ${MAX_PARAM_LENGTH} the route answers`, async () => {
    const token = (await t.login()).access;
    // (A GET, or a path that ends on such a parameter, falls through to no route: 404 not_found, in the same shape.)
    const long = await t.request({ method: 'POST', url: `/api/metadata/${'d'.repeat(MAX_PARAM_LENGTH + 1)}/rules`, token, payload: {} });
    expect(long.statusCode).toBe(414);
    expect(long.json()).toEqual({ error: { code: 'uri_too_long', message: `A part of the URL path is longer than ${MAX_PARAM_LENGTH} characters`, field: 'path' } });
    expect(long.headers).toMatchObject(API_HEADERS);
    // The message does not echo the path back.
    expect(long.body).not.toContain('ddddd');
    const atLimit = await t.request({ method: 'POST', url: `/api/metadata/${'d'.repeat(MAX_PARAM_LENGTH)}/rules`, token, payload: {} });
    expect(atLimit.statusCode).toBe(400);
    expect(atLimit.json().error.code).toBe('validation_failed');
  });

  it('a JSON body holding a "__proto__" or "constructor.prototype" key: 400 forbidden_json_key saying so (it is valid JSON), nothing changed', async () => {
    const token = (await t.login()).access;
    const json = { 'content-type': 'application/json' };
    const before = await snapshot(t.app, 'groups');
    const poisoned = [
      '{"name":"Poisoned","__proto__":{"role":"admin"}}',
      '{"name":"Poisoned","constructor":{"prototype":{"role":"admin"}}}',
      '{"name":"Poisoned","nested":[{"\\u005f_proto__":{}}]}',
    ];
    for (const payload of poisoned) {
      const res = await t.request({ method: 'POST', url: '/api/groups', token, payload, headers: json });
      expect(res.statusCode, payload).toBe(400);
      expect(res.json(), payload).toEqual({
        error: { code: 'forbidden_json_key', message: 'The request body is valid JSON, but a key named "__proto__" or "constructor.prototype" is not accepted', field: 'body' },
      });
      expect(res.headers, payload).toMatchObject(API_HEADERS);
    }
    expect(await snapshot(t.app, 'groups')).toEqual(before);
    // What does not parse, or is empty, is still malformed_json.
    for (const payload of ['{"name":', '']) {
      const res = await t.request({ method: 'POST', url: '/api/groups', token, payload, headers: json });
      expect(res.json(), payload).toEqual({ error: { code: 'malformed_json', message: 'The request body is not valid JSON' } });
    }
  });

  it('what Node refuses before any route (headers over 16 KiB, a request that is not HTTP) is answered in the one shape, with the API headers, on a closed connection', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const long = await raw(t.app, `GET /api/docs?q=${'a'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`);
    expect(long.status).toBe('HTTP/1.1 431 Request Header Fields Too Large');
    expect(long.body).toEqual({ error: { code: 'headers_too_large', message: expect.stringContaining('16 KiB') } });
    expect(long.headers).toMatchObject({ ...API_HEADERS, connection: 'close' });
    const garbage = await raw(t.app, 'GARBAGE\r\n\r\n');
    expect(garbage.status).toBe('HTTP/1.1 400 Bad Request');
    expect(garbage.body).toEqual({ error: { code: 'malformed_request', message: 'The request is not valid HTTP' } });
    expect(garbage.headers).toMatchObject(API_HEADERS);
  });

  it('every API route, as an admin and as a viewer, answers junk with a 4xx in the one shape, never a 5xx', async () => {
    const admin = await t.login();
    const viewer = await t.userWithRole('viewer', 'junk-viewer');
    const callers = [
      { name: 'admin', token: admin.access, again: async () => (await t.login()).access },
      { name: 'viewer', token: viewer.access, again: async () => (await t.login('junk-viewer', 'junk-viewer-password-long')).access }, // userWithRole's password
    ];
    const routes = declaredRoutes(t.app).filter((route) => route.method !== 'HEAD' && route.url.startsWith('/api/'));
    expect(routes.length).toBeGreaterThan(100);
    // Each path parameter as an unknown id, as one over the router's limit, and as a broken percent-encoding.
    const paths = (url: string) => ['1', 'x'.repeat(MAX_PARAM_LENGTH + 1), '%E0%A4%A'].map((value) => url.replace(/:\w+(\([^)]*\))?/g, value).replace(/\*/g, value));
    const json = { 'content-type': 'application/json' };
    const bodies = [
      { payload: '{"name":', headers: json },
      { payload: '[1,2]', headers: json },
      { payload: JSON.stringify({ name: { x: [null] }, query: 12, k: 'x', role: 7, url: 'ftp://x', path: '../../etc', limit: -1 }), headers: json },
      { payload: 'plain text', headers: { 'content-type': 'text/plain' } },
    ];
    const problems: string[] = [];
    for (const caller of callers) {
      for (const route of routes) {
        const withBody = ['POST', 'PUT', 'PATCH'].includes(route.method);
        for (const url of paths(route.url)) {
          const tries = [{ url: `${url}?limit=-5&offset=x&k=abc&page=0&q=`, payload: undefined, headers: undefined }, { url: `${url}?limit=1&limit=2&offset=99999999999999999999&sort=%00&status=%3Cscript%3E&from=2026-13-45&to=yesterday&days=1e309&group=%C0%AF`, payload: undefined, headers: undefined }, ...(withBody ? bodies.map((body) => ({ url, ...body })) : [])];
          for (const attempt of tries) {
            const send = () => t.request({ method: route.method as 'GET', url: attempt.url, payload: attempt.payload, headers: attempt.headers, token: caller.token });
            let res = await send();
            // Junk may still end a session (a logout needs no body): sign in again and ask once more.
            if (res.statusCode === 401) {
              caller.token = await caller.again();
              res = await send();
            }
            const tag = `${caller.name} ${route.method} ${route.url} (${attempt.url.slice(0, 50)} ${String(attempt.payload ?? '').slice(0, 12)}) -> ${res.statusCode}`;
            if (res.statusCode >= 500) problems.push(`${tag}: ${res.body.slice(0, 120)}`);
            else if (res.statusCode >= 400) {
              const problem = shapeProblem(res);
              if (problem) problems.push(`${tag}: ${problem}`);
            }
          }
        }
      }
    }
    expect(problems).toEqual([]);
  }, 120_000);
});

describe('a request body trickled byte by byte (REQUEST_TIMEOUT_SECONDS)', () => {
  it('is cut when the whole request has not arrived in time: 408 request_timeout in the one shape, the connection closed', async () => {
    const t = await startApp({ REQUEST_TIMEOUT_SECONDS: '1' });
    try {
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      const started = Date.now();
      const answer = await raw(t.app, 'POST /api/auth/login HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"user');
      // Node checks its timeouts every 30 s: the cut comes within one check of the limit.
      expect(Date.now() - started).toBeLessThan(40_000);
      expect(answer.status).toBe('HTTP/1.1 408 Request Timeout');
      expect(answer.body).toEqual({ error: { code: 'request_timeout', message: 'The request did not arrive in time' } });
    } finally {
      await t.close();
    }
  }, 60_000);
});
