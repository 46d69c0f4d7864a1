import fp from 'fastify-plugin';
import { HealthRepository } from './repository.js';
import { healthRoutes } from './routes.js';
import { HealthService } from './service.js';


// The public surface: what other plugins may import.
export type { HealthService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    health: HealthService;
  }
}

/** GET /api/health and the probe registry that later features (retrieval, chat) plug their probes into. */
export default fp(
  async function health(app) {
    app.decorate('health', new HealthService(new HealthRepository(app.db), app.log));
    await app.register(healthRoutes);
  },
  { name: 'health', dependencies: ['hearth-guard'] },
);
