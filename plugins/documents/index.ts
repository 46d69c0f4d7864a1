import fp from 'fastify-plugin';
import { DocumentsRepository } from './repository.js';
import { documentsRoutes } from './routes.js';
import { DocumentsService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    documents: DocumentsService;
  }
}

/** Documents: stored originals, their status, and /api/docs. Indexing is the ingestion plugin's (app.ingestion). */
export default fp(
  async function documents(app) {
    const service = new DocumentsService(new DocumentsRepository(app.db), app.index.store, app.entitlement, app.config.dataDir, app.config.indexing.ocrEnabled);
    app.decorate('documents', service);
    app.usage.register(() => service.repository.usage());
    await app.register(documentsRoutes);
  },
  { name: 'documents', dependencies: ['license', 'index'] },
);
