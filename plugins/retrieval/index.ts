import fp from 'fastify-plugin';
import { RetrievalRepository } from './repository.sqlite.js';
import { retrievalRoutes } from './routes.js';
import { RetrievalService } from './service.js';

// Retrieval's public surface: what other plugins (the chat) may import.
export { SEARCH_MODES, type RetrievalService, type RetrievalSettings, type SearchMode, type SearchResult } from './service.js';
export type { ReadScope, SearchFilters } from './repository.sqlite.js';
export { RetrievalSettingsSchema } from './schemas.js';
export { STOPWORDS, candidateTerms, queryWords } from './keyword-query.js';

declare module 'fastify' {
  interface FastifyInstance {
    retrieval: RetrievalService;
  }
}

/** Hybrid retrieval and POST /api/search, reads only; the chat reuses app.retrieval. The embedder and vectors come from app.activeEmbedding (the search-index plugin). */
export default fp(
  async function retrieval(app) {
    app.decorate('retrieval', new RetrievalService(new RetrievalRepository(app.db), app.activeEmbedding));
    await app.register(retrievalRoutes);
  },
  { name: 'retrieval', dependencies: ['hearth-guard', 'search-index', 'groups'] },
);
