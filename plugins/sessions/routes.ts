import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { clock } from '../../core/clock.js';

const Revoked = Type.Object({ revoked_before: Type.String({ format: 'date-time' }) });

export const sessionsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.delete('/api/admin/auth/sessions', {
    config: { access: { role: 'admin' } },
    schema: {
      summary: 'Revoke every token of every user (the caller included)',
      tags: ['sessions'],
      response: { 200: Revoked },
    },
  }, async (request) => {
    const cutOff = await app.sessions.revokeAll();
    request.log.warn({ by: app.logPrivacy.caller(request) }, 'all sessions revoked');
    await app.audit.record(request, { event: 'session.revoke', target: '*', details: { scope: 'all' } });
    return { revoked_before: clock.iso(cutOff) };
  });

  app.delete('/api/admin/auth/users/:username/sessions', {
    config: { access: { role: 'admin' } },
    schema: {
      summary: "Revoke every token of one user",
      tags: ['sessions'],
      params: Type.Object({ username: Type.String({ minLength: 1, maxLength: 64 }) }),
      response: { 200: Revoked },
    },
  }, async (request) => {
    const user = await app.users.getByUsername(request.params.username);
    const cutOff = await app.sessions.revokeUser(user.id);
    request.log.info({ user: app.logPrivacy.user(user.id) }, 'user sessions revoked');
    await app.audit.record(request, { event: 'session.revoke', target: user.id, details: { scope: 'user', username: user.username } });
    return { revoked_before: clock.iso(cutOff) };
  });
};
