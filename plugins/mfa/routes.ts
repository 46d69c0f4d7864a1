import cookie from '@fastify/cookie';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { principalOf } from '../../core/auth/guard.js';
import { HttpError } from '../../core/errors.js';
import { TokenPairView } from '../auth/index.js';
import { UserIdParams, UserView, toUserView } from '../users/index.js';
import { EnrolmentView, MfaLoginBody, RecoveryCodesView, TotpCodeBody } from './schemas.js';

/** Enrolling is the ENTERPRISE feature (rule 12); the ways out stay open on every plan, so a lapsed licence strands nobody. */
const enrolling = { access: { role: 'viewer' as const, tier: 'ENTERPRISE' as const } };
const ownAccount = { access: { role: 'viewer' as const } };
const admin = { access: { role: 'admin' as const } };

export const mfaRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // Only for the refresh cookie: no parsing hook, the refresh route reads the header itself.
  await app.register(cookie, { hook: false });

  app.post('/api/auth/totp/enroll', {
    config: enrolling,
    schema: {
      summary: 'Start TOTP enrolment',
      description: 'Returns a QR code and the secret; the account is pending until confirmed. Starting again while pending replaces the secret; 409 once enrolled.',
      tags: ['mfa'],
      response: { 200: EnrolmentView },
    },
  }, async (request) => {
    const principal = principalOf(request);
    const enrolment = await app.mfa.enroll(principal);
    request.log.info({ event: 'totp.enroll', user: app.logPrivacy.user(principal.id) }, 'TOTP enrolment started');
    return enrolment;
  });

  app.post('/api/auth/totp/enroll/confirm', {
    config: enrolling,
    schema: {
      summary: 'Confirm TOTP enrolment with the first valid code',
      description: 'Enrols the account and returns 10 single-use recovery codes, shown this once.',
      tags: ['mfa'],
      body: TotpCodeBody,
      response: { 200: RecoveryCodesView },
    },
  }, async (request) => {
    const userId = principalOf(request).id;
    const recoveryCodes = await app.mfa.confirm(userId, request.body.totp_code, request.ip);
    request.log.info({ event: 'totp.enrolled', user: app.logPrivacy.user(userId) }, 'TOTP enrolled');
    await app.audit.record(request, { event: 'totp.enroll', target: userId });
    return { recovery_codes: recoveryCodes };
  });

  app.post('/api/auth/totp/disable', {
    config: ownAccount,
    schema: {
      summary: 'Disable your own TOTP',
      description: 'Needs a valid, unused TOTP code (not a recovery code). Deletes the secret and the recovery codes.',
      tags: ['mfa'],
      body: TotpCodeBody,
      response: { 200: UserView },
    },
  }, async (request) => {
    const userId = principalOf(request).id;
    await app.mfa.disable(userId, request.body.totp_code, request.ip);
    request.log.info({ event: 'totp.disable', user: app.logPrivacy.user(userId) }, 'TOTP disabled by its user');
    await app.audit.record(request, { event: 'totp.clear', target: userId, details: { by: 'self' } });
    return toUserView(await app.users.get(userId), app.entitlement);
  });

  app.delete('/api/auth/users/:id/totp', {
    config: admin,
    schema: {
      summary: "Clear a user's TOTP (admin)",
      description: 'For a user who lost their authenticator and recovery codes. Idempotent.',
      tags: ['users'],
      params: UserIdParams,
      response: { 204: Type.Null() },
    },
  }, async (request, reply) => {
    await app.mfa.clear(request.params.id);
    request.log.info({ event: 'totp.clear', user: app.logPrivacy.user(request.params.id), by: app.logPrivacy.caller(request) }, 'TOTP cleared by an admin');
    await app.audit.record(request, { event: 'totp.clear', target: request.params.id, details: { by: 'admin' } });
    return reply.code(204).send(null);
  });

  app.post('/api/auth/totp/mfa-login', {
    config: { access: { public: true } },
    schema: {
      summary: 'Second login step: the mfa_token from POST /api/auth/login and a TOTP or recovery code',
      description: 'The token lasts 5 minutes and takes at most 5 wrong codes; after that (or once used) log in again. With X-Hearth-Refresh: cookie the refresh token is set as a cookie, as at login.',
      tags: ['auth'],
      body: MfaLoginBody,
      response: { 200: TokenPairView },
    },
  }, async (request, reply) => {
    let completed;
    try {
      completed = await app.mfa.completeLogin(request.body.mfa_token, request.body.totp_code, request.ip);
    } catch (error) {
      if (error instanceof HttpError && (error.statusCode === 401 || error.statusCode === 429)) {
        await app.audit.record(request, { event: 'auth.login', outcome: 'failure', details: { method: 'totp', reason: error.code } });
      }
      throw error;
    }
    const { userId, pair } = completed;
    request.log.info({ event: 'mfa.login', user: app.logPrivacy.user(userId) }, 'login (second factor)');
    const { username } = await app.users.get(userId);
    await app.audit.record(request, { event: 'auth.login', actor: { id: userId, username }, target: userId, details: { method: 'totp' } });
    return app.refreshCookie.deliver(request, reply, pair);
  });
};
