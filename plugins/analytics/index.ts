import fp from 'fastify-plugin';
import { AnalyticsRepository } from './repository.js';
import { analyticsRoutes } from './routes.js';
import { AnalyticsService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    analytics: AnalyticsService;
  }
}

/** Analytics (PRO): chunking and metadata-rule statistics per source, read-only SQL aggregates. */
export default fp(
  async function analytics(app) {
    app.decorate('analytics', new AnalyticsService(new AnalyticsRepository(app.db), app.metadataRules));
    await app.register(analyticsRoutes);
  },
  { name: 'analytics', dependencies: ['hearth-guard', 'groups', 'metadata-rules'] },
);
