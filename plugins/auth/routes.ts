import cookie from '@fastify/cookie';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf, requireTier } from '../../core/auth/guard.js';
import { badRequest, HttpError, unauthorized } from '../../core/errors.js';
import { LIFETIME_KEYS } from '../sessions/index.js';
import { type UserProfileRow, UserView, toUserView } from '../users/index.js';
import { Type } from 'typebox';
import { REFRESH_COOKIE, REFRESH_COOKIE_PATH } from './refresh-cookie.js';
import { AuthSettingsPatch, AuthSettingsView, EmailBody, LoginBody, LoginResult, PasswordChangeBody, RefreshBody, TokenPairView } from './schemas.js';

const viewer = { access: { role: 'viewer' as const } };
const admin = { access: { role: 'admin' as const } };
const COOKIE_NOTE =
  `With the request header \`X-Hearth-Refresh: cookie\` (the web UI) the refresh token is set as the HttpOnly, SameSite=Strict ` +
  `cookie ${REFRESH_COOKIE} (Path=${REFRESH_COOKIE_PATH}) instead of being returned in the body.`;

export const authRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // Only for the refresh cookie: no parsing hook, the refresh route reads the header itself.
  await app.register(cookie, { hook: false });

  app.post('/api/auth/login', {
    config: { access: { public: true } },
    schema: {
      summary: 'Log in with username and password',
      description: `Returns tokens, or status mfa_required with an mfa_token when TOTP is enrolled. ${COOKIE_NOTE}`,
      tags: ['auth'],
      body: LoginBody,
      response: { 200: LoginResult },
    },
  }, async (request, reply) => {
    const { username } = request.body;
    let result;
    try {
      result = await app.auth.login(username, request.body.password, request.ip);
    } catch (error) {
      if (error instanceof HttpError && (error.statusCode === 401 || error.statusCode === 429)) {
        await app.audit.record(request, { event: 'auth.login', outcome: 'failure', actor: { id: null, username }, details: { method: 'password', reason: error.code } });
      }
      throw error;
    }
    request.log.info({ user: app.logPrivacy.user(username) }, 'login');
    if ('mfa_token' in result) return result;
    const userId = app.tokens.check(result.access_token, 'access').sub;
    await app.audit.record(request, { event: 'auth.login', actor: { id: userId, username }, target: userId, details: { method: 'password' } });
    return app.refreshCookie.deliver(request, reply, result);
  });

  app.post('/api/auth/refresh', {
    config: { access: { public: true } },
    schema: {
      summary: 'Exchange a refresh token for a new access token (the refresh token rotates)',
      description: `Body { refresh_token }, or for the web UI an empty body, the header X-Hearth-Refresh: cookie and the ${REFRESH_COOKIE} cookie (rotated in place). A spent refresh token ends its session.`,
      tags: ['auth'],
      body: RefreshBody,
      response: { 200: TokenPairView },
    },
  }, async (request, reply) => {
    const fromCookie = app.refreshCookie.requested(request);
    const token = request.body.refresh_token ?? (fromCookie ? app.refreshCookie.read(request) : undefined);
    if (!token) {
      if (fromCookie) throw unauthorized('No refresh cookie: sign in again');
      throw badRequest('validation_failed', 'body.refresh_token is required', 'body.refresh_token');
    }
    try {
      return app.refreshCookie.deliver(request, reply, await app.sessions.refresh(token));
    } catch (error) {
      // A refused cookie is of no further use to the browser.
      if (fromCookie) app.refreshCookie.clear(reply);
      throw error;
    }
  });

  app.post('/api/auth/logout', {
    config: viewer,
    schema: {
      summary: 'Sign out: end this login session',
      description: `Ends the login session of the presented access token: its refresh token and access tokens stop working. Clears the ${REFRESH_COOKIE} cookie.`,
      tags: ['auth'],
      response: { 204: Type.Null() },
    },
  }, async (request, reply) => {
    await app.sessions.end(request.principal!);
    app.refreshCookie.clear(reply);
    request.log.info({ user: app.logPrivacy.user(request.principal!.id) }, 'logout');
    return reply.code(204).send(null);
  });

  // A cached profile row lives for the principal cache's second: its view is built once, not per request.
  // The groups shown depend on the tier in force, so a view is kept with the tier it was built under.
  const views = new WeakMap<UserProfileRow, { tier: string; view: ReturnType<typeof toUserView> }>();
  const cachedView = (row: UserProfileRow) => {
    const tier = app.entitlement.tier();
    const kept = views.get(row);
    if (kept?.tier === tier) return kept.view;
    const view = toUserView(row, app.entitlement);
    views.set(row, { tier, view });
    return view;
  };

  app.get('/api/auth/me', {
    config: viewer,
    schema: { summary: 'The current user', tags: ['auth'], response: { 200: UserView } },
  }, async (request) => {
    const cached = app.sessions.profile(principalOf(request));
    return cached ? cachedView(cached) : toUserView(await app.users.get(principalOf(request).id), app.entitlement);
  });

  app.put('/api/auth/me/email', {
    config: viewer,
    schema: { summary: 'Set your own email address', tags: ['auth'], body: EmailBody, response: { 200: UserView } },
  }, async (request) => toUserView(await app.users.setOwnEmail(principalOf(request).id, request.body.email), app.entitlement));

  app.put('/api/auth/password', {
    config: viewer,
    schema: {
      summary: 'Change your own password',
      description: `Needs the current password. Ends your other sessions and returns a fresh token pair for this one. ${COOKIE_NOTE}`,
      tags: ['auth'],
      body: PasswordChangeBody,
      response: { 200: TokenPairView },
    },
  }, async (request, reply) => {
    const pair = await app.auth.changePassword(principalOf(request).id, request.body.current_password, request.body.new_password, request.ip);
    return app.refreshCookie.deliver(request, reply, pair);
  });

  const currentSettings = () => ({
    access_token_seconds: app.settings.get<number>(LIFETIME_KEYS.access, 900),
    refresh_token_seconds: app.settings.get<number>(LIFETIME_KEYS.refresh, 604_800),
    access_token_seconds_admin: app.settings.get<number | null>(LIFETIME_KEYS.accessAdmin, null),
    refresh_token_seconds_admin: app.settings.get<number | null>(LIFETIME_KEYS.refreshAdmin, null),
  });

  app.get('/api/admin/auth/settings', {
    config: admin,
    schema: { summary: 'Token lifetimes in force', tags: ['auth'], response: { 200: AuthSettingsView } },
  }, async () => currentSettings());

  app.patch('/api/admin/auth/settings', {
    config: admin,
    schema: {
      summary: 'Change token lifetimes at run time',
      description: 'Lifetimes in seconds: access 60..86400, refresh 300..7776000, access never above refresh. The *_admin overrides need ENTERPRISE.',
      tags: ['auth'],
      body: AuthSettingsPatch,
      response: { 200: AuthSettingsView },
    },
  }, async (request) => {
    const patch = request.body;
    if (patch.access_token_seconds_admin !== undefined || patch.refresh_token_seconds_admin !== undefined) {
      requireTier(app.entitlement, 'ENTERPRISE');
    }
    const next = { ...currentSettings(), ...patch };
    if (next.access_token_seconds > next.refresh_token_seconds) {
      throw badRequest('invalid_lifetimes', 'access_token_seconds must not exceed refresh_token_seconds', 'body.access_token_seconds');
    }
    if ((next.access_token_seconds_admin ?? 0) > (next.refresh_token_seconds_admin ?? next.refresh_token_seconds)) {
      throw badRequest('invalid_lifetimes', 'access_token_seconds_admin must not exceed the admin refresh lifetime', 'body.access_token_seconds_admin');
    }
    await app.settings.set({
      [LIFETIME_KEYS.access]: next.access_token_seconds,
      [LIFETIME_KEYS.refresh]: next.refresh_token_seconds,
      [LIFETIME_KEYS.accessAdmin]: next.access_token_seconds_admin,
      [LIFETIME_KEYS.refreshAdmin]: next.refresh_token_seconds_admin,
    });
    request.log.info({ event: 'config.update', by: app.logPrivacy.caller(request) }, 'auth settings updated');
    await app.audit.record(request, { event: 'config.update', target: 'auth.settings', details: { fields: Object.keys(patch) } });
    return currentSettings();
  });
};
