import fp from 'fastify-plugin';
import { SecondFactorThrottle } from '../auth/index.js';
import { MfaRepository } from './repository.js';
import { mfaRoutes } from './routes.js';
import { MfaService } from './service.js';

// The public surface: what other plugins may import.
export type { MfaService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    mfa: MfaService;
  }
}

// The sealing context of a TOTP secret, for re-sealing under a new key (hearth keys rotate-mfa).
export { totpContext } from './service.js';

/** TOTP second factor (ENTERPRISE to enrol): enrolment, recovery codes, and the second login step. */
export default fp(
  async function mfa(app) {
    const service = new MfaService(new MfaRepository(app.db), app.secretBox, app.sessions, app.users, new SecondFactorThrottle());
    app.decorate('mfa', service);
    app.auth.useSecondFactor(service);
    await app.register(mfaRoutes);
  },
  { name: 'mfa', dependencies: ['users', 'sessions', 'auth'] },
);
