import cookie from '@fastify/cookie';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { toHttpError } from '../../core/errors.js';
import { tierAtLeast } from '../../core/tiers.js';
import { TokenPairView } from '../auth/index.js';
import { toProviderView } from './providers.js';
import {
  CallbackQuery,
  CreateProviderBody,
  LoginQuery,
  ProviderIdParams,
  ProviderNameParams,
  ProviderTestResult,
  ProviderView,
  PublicProviderList,
  UpdateProviderBody,
} from './schemas.js';
import { HANDOFF_TTL_MS, LOGIN_STATE_TTL_MS } from './service.js';

const admin = { access: { role: 'admin' as const, tier: 'ENTERPRISE' as const } };
const open = { access: { public: true as const } };
/** The sign-in flow: public (the caller has no token yet), and closed below ENTERPRISE. */
const openOnEnterprise = { access: { public: true as const, tier: 'ENTERPRISE' as const } };
/** Binds a started login to the browser that started it (Lax: it must ride the IdP's redirect back). */
const STATE_COOKIE = 'hearth_oidc_state';
/** Carries the one-time handoff code from the callback to the web UI's POST /api/auth/oidc/session. */
const HANDOFF_COOKIE = 'hearth_oidc_handoff';
const SESSION_PATH = '/api/auth/oidc/session';
/** Where the browser lands after a successful callback: the web UI, which then redeems the handoff. */
const UI_HOME = '/';
/** Where a browser lands after a failed callback: the sign-in page, which words the code (never text from the URL). */
const SIGN_IN = '/sign-in';

/**
 * A failed callback in a browser navigation (it accepts HTML) goes back to the sign-in page with the error's
 * code; API clients, and server errors (logged by the app's handler), keep the JSON error.
 */
function callbackErrorHandler(error: FastifyError, request: FastifyRequest, reply: FastifyReply) {
  const known = toHttpError(error);
  if (!known || known.statusCode >= 500 || !/\btext\/html\b/.test(request.headers.accept ?? '')) throw error;
  return reply.redirect(`${SIGN_IN}?sso_error=${encodeURIComponent(known.code)}`, 302);
}

export const oidcRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // Cookies exist only in this scope: no other route reads or sets one.
  await app.register(cookie);
  const cookieBase = { httpOnly: true, secure: app.config.tls.enabled } as const;
  // Anonymous callers must not turn Hearth into a request pump against the IdP or fill the state table.
  const throttle = app.rateLimit({ max: 120, timeWindow: '1 minute' });

  app.get('/api/admin/oidc/providers', {
    config: admin,
    schema: { summary: 'List OIDC providers', tags: ['oidc'], response: { 200: Type.Array(ProviderView) } },
  }, async () => (await app.oidc.providers.list()).map(toProviderView));

  app.post('/api/admin/oidc/providers', {
    config: admin,
    schema: {
      summary: 'Create an OIDC provider',
      description:
        'client_secret is write-only: stored encrypted, never returned (secret_set says whether one is stored). ' +
        'discovery_url must pass the SSRF guard (400 url_not_allowed / url_unresolvable): a loopback or private address ' +
        'only with allow_private_network, a cloud metadata address never.',
      tags: ['oidc'],
      body: CreateProviderBody,
      response: { 201: ProviderView },
    },
  }, async (request, reply) => {
    const row = await app.oidc.providers.create(request.body);
    request.log.info({ event: 'oidc_provider.create', provider: row.name, by: app.logPrivacy.caller(request) }, 'oidc provider created');
    await app.audit.record(request, { event: 'config.update', target: `oidc_provider:${row.name}`, details: { action: 'create', fields: Object.keys(request.body) } });
    return reply.code(201).send(toProviderView(row));
  });

  app.get('/api/admin/oidc/providers/:id', {
    config: admin,
    schema: { summary: 'Get an OIDC provider (client_secret omitted, secret_set returned)', tags: ['oidc'], params: ProviderIdParams, response: { 200: ProviderView } },
  }, async (request) => toProviderView(await app.oidc.providers.get(request.params.id)));

  app.patch('/api/admin/oidc/providers/:id', {
    config: admin,
    schema: {
      summary: 'Update an OIDC provider',
      description: 'Any subset of the fields; client_secret: null removes the secret.',
      tags: ['oidc'],
      params: ProviderIdParams,
      body: UpdateProviderBody,
      response: { 200: ProviderView },
    },
  }, async (request) => {
    const row = await app.oidc.providers.update(request.params.id, request.body);
    request.log.info({ event: 'oidc_provider.update', provider: row.name, by: app.logPrivacy.caller(request) }, 'oidc provider updated');
    await app.audit.record(request, { event: 'config.update', target: `oidc_provider:${row.name}`, details: { action: 'update', fields: Object.keys(request.body) } });
    return toProviderView(row);
  });

  app.delete('/api/admin/oidc/providers/:id', {
    config: admin,
    schema: { summary: 'Delete an OIDC provider', tags: ['oidc'], params: ProviderIdParams, response: { 204: Type.Null() } },
  }, async (request, reply) => {
    await app.oidc.providers.delete(request.params.id);
    request.log.info({ event: 'oidc_provider.delete', provider_id: request.params.id, by: app.logPrivacy.caller(request) }, 'oidc provider deleted');
    await app.audit.record(request, { event: 'config.update', target: `oidc_provider:${request.params.id}`, details: { action: 'delete' } });
    return reply.code(204).send(null);
  });

  app.post('/api/admin/oidc/providers/:id/test', {
    config: admin,
    schema: {
      summary: 'Test an OIDC provider’s discovery URL and connectivity',
      description: 'Fetches the discovery document and the signing keys (5 s timeout each); ok: false with error when either fails.',
      tags: ['oidc'],
      params: ProviderIdParams,
      response: { 200: ProviderTestResult },
    },
  }, async (request) => app.oidc.providers.test(request.params.id));

  app.get('/api/auth/oidc/providers', {
    config: open,
    schema: {
      summary: 'OIDC providers shown on the login page',
      description: 'Empty below the ENTERPRISE plan. From the provider table, or from the OIDC_PROVIDERS env fallback while the table is empty.',
      tags: ['oidc'],
      response: { 200: PublicProviderList },
    },
  }, async () => {
    if (!tierAtLeast(app.entitlement.tier(), 'ENTERPRISE')) return [];
    return (await app.oidc.providers.listed()).map(({ name, displayName }) => ({
      name,
      display_name: displayName,
      login_url: `/api/auth/oidc/${encodeURIComponent(name)}/login`,
    }));
  });

  app.get('/api/auth/oidc/:provider_id/login', {
    config: openOnEnterprise,
    schema: {
      summary: 'Start an OIDC login (302 to the identity provider)',
      description: 'Authorization Code flow with PKCE S256 (never plain), state and nonce kept server-side.',
      tags: ['oidc'],
      params: ProviderNameParams,
      querystring: LoginQuery,
    },
    preHandler: throttle,
  }, async (request, reply) => {
    const { url, state } = await app.oidc.service.start(request.params.provider_id);
    reply.setCookie(STATE_COOKIE, state, { ...cookieBase, sameSite: 'lax', path: '/api/auth/oidc', maxAge: LOGIN_STATE_TTL_MS / 1000 });
    return reply.redirect(url, 302);
  });

  app.get('/api/auth/oidc/:provider_id/callback', {
    config: openOnEnterprise,
    schema: {
      summary: 'Finish an OIDC login (302 to the web UI)',
      description: `Validates state, PKCE and the ID token, provisions the user on first login, then sets a single-use HttpOnly cookie (${HANDOFF_TTL_MS / 1000} s) for POST ${SESSION_PATH} and redirects to the web UI. No token ever travels in a URL. ` +
        `A 4xx failure is the JSON error, or, when the request accepts text/html (a browser navigation), a 302 to ${SIGN_IN}?sso_error=<code>.`,
      tags: ['oidc'],
      params: ProviderNameParams,
      querystring: CallbackQuery,
    },
    preHandler: throttle,
    errorHandler: callbackErrorHandler,
  }, async (request, reply) => {
    const browserState = request.cookies[STATE_COOKIE];
    reply.clearCookie(STATE_COOKIE, { path: '/api/auth/oidc' });
    const provider = request.params.provider_id;
    const { handoff, userId, created } = await app.oidc.service.finish(provider, request.query as Record<string, string | undefined>, browserState);
    const user = app.logPrivacy.user(userId);
    if (created) {
      request.log.info({ event: 'user.create', user, provider }, 'oidc user provisioned');
      const { username } = await app.users.get(userId);
      await app.audit.record(request, { event: 'user.create', actor: { id: userId, username }, target: userId, details: { provider, username } });
    }
    request.log.info({ user, provider }, 'oidc login');
    reply.setCookie(HANDOFF_COOKIE, handoff, { ...cookieBase, sameSite: 'strict', path: SESSION_PATH, maxAge: HANDOFF_TTL_MS / 1000 });
    return reply.redirect(UI_HOME, 302);
  });

  app.post(SESSION_PATH, {
    config: openOnEnterprise,
    schema: {
      summary: 'Redeem a finished OIDC login for a token pair',
      description: 'The web UI calls this once after the callback redirected it; the handoff cookie is single-use and lasts 60 s. With X-Hearth-Refresh: cookie the refresh token is set as a cookie, as at login.',
      tags: ['oidc'],
      response: { 200: TokenPairView },
    },
    preHandler: throttle,
  }, async (request, reply) => {
    const code = request.cookies[HANDOFF_COOKIE];
    reply.clearCookie(HANDOFF_COOKIE, { path: SESSION_PATH });
    reply.header('cache-control', 'no-store');
    const pair = await app.oidc.service.redeem(code);
    const userId = app.tokens.check(pair.access_token, 'access').sub;
    await app.audit.record(request, { event: 'auth.login', actor: { id: userId, username: (await app.users.get(userId)).username }, target: userId, details: { method: 'oidc' } });
    return app.refreshCookie.deliver(request, reply, pair);
  });
};
