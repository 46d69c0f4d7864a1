import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { HealthReport } from './schemas.js';

export const healthRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/api/health', {
    config: { access: { public: true } },
    schema: {
      summary: 'Service health: readiness of the database, vector index, embedder and chat model',
      tags: ['health'],
      response: { 200: HealthReport, 503: HealthReport },
    },
  }, async (_request, reply) => {
    const report = await app.health.report();
    return reply.code(report.status === 'error' ? 503 : 200).header('cache-control', 'no-store').send(report);
  });
};
