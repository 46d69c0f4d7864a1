import fp from 'fastify-plugin';
import { RetrievalRepository } from './repository.sqlite.js';
import { retrievalRoutes } from './routes.js';
import { RetrievalService } from './service.js';
import { loadReranker } from '../../native/reranker/index.js';

// Retrieval's public surface: what other plugins (the chat) may import.
export { SEARCH_MODES, type RetrievalService, type RetrievalSettings, type SearchMode, type SearchResult } from './service.js';
export type { ReadScope, SearchFilters } from './repository.sqlite.js';
export { RetrievalSettingsSchema } from './schemas.js';
export { STOPWORDS } from '../../core/text/words.js';
export { candidateTerms, queryWords } from './keyword-query.js';
export { CHAT_FUSION_WEIGHTS, CHAT_KEYWORD_CONFIDENCE } from './fusion.js';
export { WordVectors, softTermWeight } from './soft-match.js';

declare module 'fastify' {
  interface FastifyInstance {
    retrieval: RetrievalService;
  }
}

/** Hybrid retrieval and POST /api/search, reads only; the chat reuses app.retrieval. The embedder and vectors come from app.activeEmbedding (the search-index plugin). */
export default fp(
  async function retrieval(app) {
    const reranker = await loadReranker({ modelDir: app.config.modelDir }).catch((error: Error) => {
      app.log.warn(`reranker: not loaded, search runs without it: ${error.message}`);
      return null;
    });
    if (reranker) app.log.info(`reranker: ${reranker.modelId} on the top ${app.config.rerank.topN} candidates within ${app.config.rerank.budgetMs} ms`);
    app.addHook('onClose', async () => reranker?.close());
    app.decorate('retrieval', new RetrievalService(new RetrievalRepository(app.db), app.activeEmbedding, undefined, { model: reranker, settings: app.config.rerank }, { chunks: app.config.softMatch.search }));
    await app.register(retrievalRoutes);
  },
  { name: 'retrieval', dependencies: ['hearth-guard', 'search-index', 'groups'] },
);
