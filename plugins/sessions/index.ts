import fp from 'fastify-plugin';
import { SessionsRepository } from './repository.js';
import { sessionsRoutes } from './routes.js';
import { SessionService } from './service.js';

// The sessions' public surface: what other plugins may import.
export { LIFETIME_KEYS, SessionService, type TokenPair } from './service.js';
// For the hearth CLI, which opens the service's state without the app (appliance/cli/service-state.ts).
export { SessionsRepository } from './repository.js';

declare module 'fastify' {
  interface FastifyInstance {
    sessions: SessionService;
  }
}

const PRUNE_INTERVAL_MS = 6 * 60 * 60 * 1000;

/** Login sessions, refresh rotation and revocation; provides the guard's identity resolver. */
export default fp(
  async function sessions(app) {
    const service = new SessionService(new SessionsRepository(app.db), app.users, app.tokens, app.settings, app.entitlement);
    app.decorate('sessions', service);
    app.decorate('identity', service);
    app.users.onChange({
      userChanged: (userId) => service.forget(userId),
      passwordChanged: async (userId) => {
        await service.revokeUser(userId);
      },
    });
    await app.register(sessionsRoutes);

    const timer = setInterval(() => service.pruneIdle().catch((err) => app.log.error({ err }, 'session prune failed')), PRUNE_INTERVAL_MS);
    timer.unref();
    app.addHook('onClose', async () => clearInterval(timer));
  },
  { name: 'sessions', dependencies: ['users'] },
);
