// A reference for `npm run bench`: the Fastify work that an authenticated JSON read needs whatever the
// application does, and nothing of Hearth's. The same security headers as the service's API answers
// (one root onRequest hook), a route onRequest hook that reads a Bearer token and looks it up in a Map,
// and the route's response schema (fast-json-stringify) over a user object of the service's shape.
// Its ratio to hello-world is the best an authenticated route can do on this framework and machine.
import Fastify from 'fastify';

/** The service's own API headers (core/security-headers.ts apiHeaders), passed in by the bench. */
if (!process.env.FLOOR_HEADERS) throw new Error('FLOOR_HEADERS (the API headers as JSON) is not set: npm run bench passes them');
const SECURITY_HEADERS = JSON.parse(process.env.FLOOR_HEADERS);
const BEARER = /^Bearer\s+(\S+)$/;
const USER = {
  id: '6f1c0b8e-3d1a-4c55-9a7e-1b2c3d4e5f60', username: 'admin', email: null, role: 'admin', groups: ['everyone'],
  auth_source: 'local', totp_enabled: false, created_at: '2026-11-22T10:00:00.000Z', updated_at: '2026-11-22T10:00:00.000Z',
};
const string = { type: 'string' };
const UserView = {
  type: 'object',
  properties: { id: string, username: string, email: { type: ['string', 'null'] }, role: string, groups: { type: 'array', items: string }, auth_source: string, totp_enabled: { type: 'boolean' }, created_at: string, updated_at: string },
};

/** The one token accepted: the bench passes the service's own, so both read the same Authorization header. */
const tokens = new Map([[process.env.FLOOR_TOKEN, USER]]);

const app = Fastify({ logger: false });
app.addHook('onRequest', (_request, reply, done) => {
  reply.headers(SECURITY_HEADERS);
  done();
});
const guard = (request, _reply, done) => {
  const user = tokens.get(request.headers.authorization?.match(BEARER)?.[1]);
  if (!user) return done(Object.assign(new Error('Unauthorized'), { statusCode: 401 }));
  request.user = user;
  done();
};
app.get('/me', { onRequest: [guard], schema: { response: { 200: UserView } } }, async (request) => request.user);

const close = () => app.close().then(() => process.exit(0));
process.once('SIGTERM', close);
process.once('SIGINT', close);

await app.listen({ port: Number(process.env.PORT ?? 0), host: process.env.HOST ?? '127.0.0.1' });
process.stdout.write(`listening ${app.server.address().port}\n`);
