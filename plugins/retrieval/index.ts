import fp from 'fastify-plugin';
import { SearchIndex } from '../index/search-index.js';
import { RetrievalRepository } from './repository.js';
import { retrievalRoutes } from './routes.js';
import { RetrievalService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    retrieval: RetrievalService;
  }
}

/** Hybrid retrieval and POST /api/search; the chat reuses app.retrieval. */
export default fp(
  async function retrieval(app) {
    // The index plugin owns app.searchIndex; until it is registered, an empty one (keyword search only).
    if (!app.hasDecorator('searchIndex')) app.decorate('searchIndex', new SearchIndex());
    app.decorate('retrieval', new RetrievalService(new RetrievalRepository(app.db), app.searchIndex));
    await app.register(retrievalRoutes);
  },
  { name: 'retrieval', dependencies: ['hearth-guard'] },
);
