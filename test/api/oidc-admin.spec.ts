import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { snapshot } from '../helpers.js';
import { DAY, admin, call, callback, createProvider, idp, me, providerBody, redeem, signIn, startLogin, t, useOidcApp } from '../oidc-fixture.js';
import { redirectUriFor } from '../oidc-idp.js';

/** OIDC provider administration (ENTERPRISE, admin): CRUD with a write-only secret, the /test probe, and the gates. */
useOidcApp();

describe('admin CRUD under /api/admin/oidc/providers', () => {
  it('creates, lists, reads, updates and deletes; the client secret is write-only and sealed at rest', async () => {
    const created = await createProvider();
    expect(created).toEqual({
      id: expect.any(String), name: 'corp', display_name: 'Corp SSO', client_id: idp.clientId, secret_set: true,
      discovery_url: idp.discoveryUrl, redirect_uri: redirectUriFor('corp'), scopes: 'openid email profile groups',
      admin_groups: ['hearth-admins'], allow_private_network: true, created_at: expect.any(String), updated_at: expect.any(String),
    });
    const sealed = async () => (await t.app.db.selectFrom('oidc_providers').select('client_secret_sealed').executeTakeFirstOrThrow()).client_secret_sealed;
    expect(await sealed()).toMatch(/^v1\./);
    expect((await call({ method: 'GET', url: '/api/admin/oidc/providers', token: admin })).json()).toEqual([created]);
    expect((await call({ method: 'GET', url: `/api/admin/oidc/providers/${created.id}`, token: admin })).json()).toEqual(created);

    const patch = (payload: object) => call({ method: 'PATCH', url: `/api/admin/oidc/providers/${created.id}`, token: admin, payload });
    const renamed = await patch({ name: 'corp2', display_name: 'Corp' });
    expect(renamed.json()).toMatchObject({ name: 'corp2', display_name: 'Corp', secret_set: true, client_id: idp.clientId });
    // The kept secret was re-sealed for the new name.
    expect(t.app.secretBox.open((await sealed())!, 'oidc:corp2')).toBe(idp.clientSecret);
    expect((await patch({ client_secret: null })).json().secret_set).toBe(false);
    expect(await sealed()).toBeNull();
    expect((await patch({ client_secret: idp.clientSecret, name: 'corp' })).json().secret_set).toBe(true);
    expect((await me((await signIn('sub-alice')).access_token)).username).toBe('alice');

    expect((await call({ method: 'DELETE', url: `/api/admin/oidc/providers/${created.id}`, token: admin })).statusCode).toBe(204);
    expect((await call({ method: 'GET', url: `/api/admin/oidc/providers/${created.id}`, token: admin })).statusCode).toBe(404);
    expect((await call({ method: 'DELETE', url: `/api/admin/oidc/providers/${created.id}`, token: admin })).statusCode).toBe(404);
  });

  it('refuses a second provider of the same name with 409', async () => {
    const first = await createProvider();
    const other = await createProvider({ name: 'other' });
    const before = await snapshot(t.app, 'oidc_providers');
    const dup = await call({ method: 'POST', url: '/api/admin/oidc/providers', token: admin, payload: providerBody() });
    expect(dup.statusCode).toBe(409);
    expect(dup.json().error).toMatchObject({ code: 'provider_name_taken', field: 'body.name' });
    const rename = await call({ method: 'PATCH', url: `/api/admin/oidc/providers/${other.id}`, token: admin, payload: { name: first.name } });
    expect(rename.statusCode).toBe(409);
    expect(await snapshot(t.app, 'oidc_providers')).toEqual(before);
  });

  it.each([
    [{ name: 'Corp' }, 'body.name', 'validation_failed'],
    [{ name: 'a b' }, 'body.name', 'validation_failed'],
    [{ client_id: undefined }, 'body.client_id', 'validation_failed'],
    [{ client_secret: '' }, 'body.client_secret', 'validation_failed'],
    [{ discovery_url: 'not a url' }, 'body.discovery_url', 'validation_failed'],
    [{ discovery_url: 'ftp://idp.test/.well-known/openid-configuration' }, 'body.discovery_url', 'validation_failed'],
    [{ discovery_url: 'http://idp.lan/.well-known/openid-configuration' }, 'body.discovery_url', 'insecure_discovery_url'],
    [{ redirect_uri: 'javascript:alert(1)' }, 'body.redirect_uri', 'validation_failed'],
    [{ scopes: 'email profile' }, 'body.scopes', 'scopes_missing_openid'],
    [{ scopes: 'openid  email' }, 'body.scopes', 'validation_failed'],
    [{ admin_groups: 'hearth-admins' }, 'body.admin_groups', 'validation_failed'],
    [{ is_default: true }, 'body.is_default', 'validation_failed'],
  ])('refuses bad input %o with 400 and changes nothing', async (overrides, field, code) => {
    const existing = await createProvider({ name: 'existing' });
    const before = await snapshot(t.app, 'oidc_providers');
    const created = await call({ method: 'POST', url: '/api/admin/oidc/providers', token: admin, payload: providerBody(overrides) });
    expect(created.statusCode).toBe(400);
    expect(created.json().error).toMatchObject({ code, field });
    const patchable = Object.fromEntries(Object.entries(overrides).filter(([key]) => key !== 'client_id'));
    if (Object.keys(patchable).length) {
      const patched = await call({ method: 'PATCH', url: `/api/admin/oidc/providers/${existing.id}`, token: admin, payload: patchable });
      expect(patched.statusCode).toBe(400);
    }
    expect(await snapshot(t.app, 'oidc_providers')).toEqual(before);
  });

  it('refuses a discovery_url the SSRF guard refuses: loopback unless allow_private_network, metadata in any form always', async () => {
    const before = await snapshot(t.app, 'oidc_providers');
    const refused = async (overrides: Record<string, unknown>, reason: RegExp) => {
      const res = await call({ method: 'POST', url: '/api/admin/oidc/providers', token: admin, payload: providerBody(overrides) });
      expect(res.statusCode, JSON.stringify(overrides)).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'url_not_allowed', field: 'body.discovery_url', message: expect.stringMatching(reason) });
    };
    // allow_private_network defaults to false, and the test IdP is on loopback.
    await refused({ allow_private_network: undefined }, /discovery_url is not allowed: 127\.0\.0\.1 resolves to a loopback address \(allow_private_network is off\)/);
    await refused({ allow_private_network: false }, /loopback/);
    for (const host of ['[64:ff9b::a9fe:a9fe]', '[::a9fe:a9fe]', '[::ffff:a9fe:a9fe]', '169.254.169.254', '[fd00:ec2::254]', 'metadata.google.internal']) {
      await refused({ discovery_url: `https://${host}/.well-known/openid-configuration` }, /metadata/);
    }
    expect(await snapshot(t.app, 'oidc_providers')).toEqual(before);

    const { id } = await createProvider();
    const saved = await snapshot(t.app, 'oidc_providers');
    const patch = (payload: object) => call({ method: 'PATCH', url: `/api/admin/oidc/providers/${id}`, token: admin, payload });
    const off = await patch({ allow_private_network: false });
    expect(off.statusCode).toBe(400);
    expect(off.json().error).toMatchObject({ code: 'url_not_allowed', field: 'body.allow_private_network', message: expect.stringMatching(/loopback/) });
    const metadata = await patch({ discovery_url: 'https://[64:ff9b::a9fe:a9fe]/.well-known/openid-configuration' });
    expect(metadata.statusCode).toBe(400);
    expect(metadata.json().error).toMatchObject({ code: 'url_not_allowed', field: 'body.discovery_url', message: expect.stringMatching(/metadata.*NAT64/) });
    expect(await snapshot(t.app, 'oidc_providers')).toEqual(saved);
    expect((await patch({ allow_private_network: true })).json().allow_private_network).toBe(true);
  });

  it('refuses an empty update and unknown ids', async () => {
    const { id } = await createProvider();
    expect((await call({ method: 'PATCH', url: `/api/admin/oidc/providers/${id}`, token: admin, payload: {} })).statusCode).toBe(400);
    expect((await call({ method: 'PATCH', url: '/api/admin/oidc/providers/nope', token: admin, payload: { display_name: 'x' } })).statusCode).toBe(404);
    expect((await call({ method: 'POST', url: '/api/admin/oidc/providers/nope/test', token: admin })).statusCode).toBe(404);
    expect((await call({ method: 'GET', url: '/api/auth/oidc/nope/login' })).statusCode).toBe(404);
  });
});

describe('POST /api/admin/oidc/providers/{id}/test', () => {
  const servers: http.Server[] = [];
  const listen = async (handler: http.RequestListener) => {
    const server = http.createServer(handler);
    servers.push(server);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };
  afterEach(async () => {
    for (const server of servers.splice(0)) {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
  const testProvider = async (discoveryUrl: string, name: string) => {
    const { id } = await createProvider({ name, discovery_url: discoveryUrl });
    return (await call({ method: 'POST', url: `/api/admin/oidc/providers/${id}/test`, token: admin })).json();
  };

  it('reports the endpoints of a working provider', async () => {
    expect(await testProvider(idp.discoveryUrl, 'corp')).toEqual({
      ok: true, issuer: idp.issuer, authorization_endpoint: `${idp.issuer}/auth`, token_endpoint: `${idp.issuer}/token`, jwks_uri: `${idp.issuer}/jwks`,
    });
  });

  it('reports an unreachable provider, one whose issuer does not match, and one that never answers (5 s)', async () => {
    const closed = await listen(() => undefined);
    servers.pop()!.close();
    expect(await testProvider(`${closed}/.well-known/openid-configuration`, 'closed')).toMatchObject({ ok: false, error: expect.any(String) });

    const liar = await listen((_req, res) => {
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify({ issuer: 'https://someone-else.test', authorization_endpoint: 'https://x/auth', token_endpoint: 'https://x/token', jwks_uri: 'https://x/jwks' }));
    });
    expect(await testProvider(`${liar}/.well-known/openid-configuration`, 'liar')).toMatchObject({ ok: false, error: expect.stringMatching(/issuer/) });

    const hanging = await listen(() => undefined);
    const startedAt = Date.now();
    expect(await testProvider(`${hanging}/.well-known/openid-configuration`, 'hanging')).toEqual({ ok: false, error: 'timed out after 5 s' });
    expect(Date.now() - startedAt).toBeLessThan(7000);

    // The keys are fetched through the guard too: a jwks_uri on a metadata address is refused, never requested.
    const metadataKeys = await listen((req, res) => {
      res.setHeader('content-type', 'application/json');
      const issuer = `http://${req.headers.host}`;
      res.end(JSON.stringify({ issuer, authorization_endpoint: `${issuer}/auth`, token_endpoint: `${issuer}/token`, jwks_uri: 'http://[64:ff9b::a9fe:a9fe]/jwks' }));
    });
    expect(await testProvider(`${metadataKeys}/.well-known/openid-configuration`, 'metadata-keys')).toMatchObject({
      ok: false, error: expect.stringMatching(/http:\/\/\[64:ff9b::a9fe:a9fe\]\/jwks is not allowed: .*metadata/),
    });

    // A provider whose LAN access was turned off after it was saved is not contacted at all.
    let contacted = 0;
    const lan = await listen((_req, res) => void (contacted++, res.end('{}')));
    const { id } = await createProvider({ name: 'lan', discovery_url: `${lan}/.well-known/openid-configuration` });
    await t.app.db.updateTable('oidc_providers').set({ allow_private_network: 0 }).where('id', '=', id).execute();
    const lanResult = (await call({ method: 'POST', url: `/api/admin/oidc/providers/${id}/test`, token: admin })).json();
    expect(lanResult).toMatchObject({ ok: false, error: expect.stringMatching(/is not allowed: 127\.0\.0\.1 resolves to a loopback address \(allow_private_network is off\)/) });
    expect(contacted).toBe(0);

    // The login itself answers 502 when the provider cannot be reached.
    const login = await call({ method: 'GET', url: '/api/auth/oidc/closed/login' });
    expect(login.statusCode).toBe(502);
    expect(login.json().error.code).toBe('oidc_provider_unreachable');
  }, 20_000);
});

describe('access: ENTERPRISE and admin', () => {
  it('below ENTERPRISE the admin API answers 403 tier_required, the login page lists nothing and the flow is closed', async () => {
    const { id } = await createProvider();
    const { authorizationUrl, state } = await startLogin();
    const back = await idp.authorize(authorizationUrl.href, 'sub-alice');
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 366 * DAY); // the license lapses: FREE
    const token = (await t.login()).access; // the earlier one expired too
    const before = await snapshot(t.app, 'oidc_providers');
    for (const [method, url] of [['GET', '/api/admin/oidc/providers'], ['GET', `/api/admin/oidc/providers/${id}`], ['DELETE', `/api/admin/oidc/providers/${id}`], ['POST', `/api/admin/oidc/providers/${id}/test`]] as const) {
      const res = await call({ method, url, token });
      expect(res.statusCode, `${method} ${url}`).toBe(403);
      expect(res.json().error.code).toBe('tier_required');
    }
    expect((await call({ method: 'POST', url: '/api/admin/oidc/providers', token, payload: providerBody({ name: 'x' }) })).statusCode).toBe(403);
    expect(await snapshot(t.app, 'oidc_providers')).toEqual(before);

    expect((await call({ method: 'GET', url: '/api/auth/oidc/providers' })).json()).toEqual([]);
    for (const res of [await call({ method: 'GET', url: '/api/auth/oidc/corp/login' }), await callback(back, state), await redeem('anything')]) {
      expect(res.statusCode).toBe(403);
      expect(res.json().error.code).toBe('tier_required');
    }
  });

  it('a viewer gets 403 role_required and an anonymous caller 401; the public list needs no token', async () => {
    const { id } = await createProvider();
    const viewer = await t.userWithRole('viewer');
    for (const token of [viewer.access, undefined]) {
      const list = await call({ method: 'GET', url: '/api/admin/oidc/providers', token });
      const create = await call({ method: 'POST', url: '/api/admin/oidc/providers', token, payload: providerBody({ name: 'x' }) });
      const test = await call({ method: 'POST', url: `/api/admin/oidc/providers/${id}/test`, token });
      for (const res of [list, create, test]) {
        expect(res.statusCode).toBe(token ? 403 : 401);
        expect(res.json().error.code).toBe(token ? 'role_required' : 'unauthorized');
      }
    }
    expect((await call({ method: 'GET', url: '/api/auth/oidc/providers' })).json()).toEqual([
      { name: 'corp', display_name: 'Corp SSO', login_url: '/api/auth/oidc/corp/login' },
    ]);
  });

  it('throttles the public entry points per client address (120 a minute, shared)', async () => {
    for (let i = 0; i < 60; i++) await call({ method: 'GET', url: '/api/auth/oidc/nope/login' });
    for (let i = 0; i < 59; i++) await redeem(undefined);
    expect((await redeem(undefined)).statusCode).toBe(401); // the 120th still passes
    const limited = await call({ method: 'GET', url: '/api/auth/oidc/corp/callback?state=x' });
    expect(limited.statusCode).toBe(429);
    expect(limited.json().error.code).toBe('too_many_requests');
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
  });
});
