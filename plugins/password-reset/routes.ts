import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { ForgotPasswordBody, ResetAccepted, ResetPasswordBody } from './schemas.js';
import { RESET_TOKEN_MINUTES } from './service.js';

/** The one answer to every well-formed forgot-password request, so it reveals nothing. */
const FORGOT_ANSWER = { message: 'If a local account uses this address, a password reset link has been sent to it.' };

export const passwordResetRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const { perMinute, burst } = app.config.rateLimitReset;
  // @fastify/rate-limit counts fixed windows: BURST per BURST/RATE minutes keeps the average at RATE/min and allows a burst of BURST.
  const limiter = app.rateLimit({ max: burst, timeWindow: Math.ceil((burst / perMinute) * 60_000) });
  const limited = { onRequest: async (request: FastifyRequest, reply: Parameters<typeof limiter>[1]) => limiter.call(app, request, reply) };

  app.post('/api/auth/forgot-password', {
    config: { access: { public: true } },
    ...limited,
    schema: {
      summary: 'Ask for a password reset link by email',
      description: `Always 200 with the same body, whether or not a local account matches. A match gets a single-use link valid for ${RESET_TOKEN_MINUTES} minutes; accounts that sign in through OIDC get none. Rate limited per client address (RATE_LIMIT_RESET, RATE_LIMIT_RESET_BURST).`,
      tags: ['auth'],
      body: ForgotPasswordBody,
      response: { 200: ResetAccepted },
    },
  }, async (request) => {
    // Queued, not awaited: the answer must not take longer when the address matches.
    app.passwordReset.requestReset(request.body.email);
    return FORGOT_ANSWER;
  });

  app.post('/api/auth/reset-password', {
    config: { access: { public: true } },
    ...limited,
    schema: {
      summary: 'Set a new password with the token from a reset link',
      description: 'Ends every existing session of the account. A used, expired or unknown token is refused with reset_token_invalid. Rate limited per client address like forgot-password.',
      tags: ['auth'],
      body: ResetPasswordBody,
      response: { 200: ResetAccepted },
    },
  }, async (request) => {
    await app.passwordReset.reset(request.body.token, request.body.new_password);
    return { message: 'Password changed. Sign in with the new password.' };
  });
};
