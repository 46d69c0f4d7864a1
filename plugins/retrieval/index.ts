import fp from 'fastify-plugin';
import { KeywordIndexMaintenance } from './maintenance.js';
import { RetrievalRepository } from './repository.js';
import { retrievalRoutes } from './routes.js';
import { RetrievalService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    retrieval: RetrievalService;
    keywordIndex: KeywordIndexMaintenance;
  }
}

/** How often the keyword index is checked for writes to merge. */
const MERGE_CHECK_MS = 30_000;

/** Hybrid retrieval and POST /api/search; the chat reuses app.retrieval. The embedder and vectors come from app.searchIndex (the index plugin). */
export default fp(
  async function retrieval(app) {
    const repository = new RetrievalRepository(app.db);
    app.decorate('retrieval', new RetrievalService(repository, app.searchIndex));
    const maintenance = new KeywordIndexMaintenance(repository);
    app.decorate('keywordIndex', maintenance);
    const timer = setInterval(() => maintenance.compact().catch((err) => app.log.warn({ err }, 'merging the keyword index failed')), MERGE_CHECK_MS);
    timer.unref();
    app.addHook('onClose', async () => {
      clearInterval(timer);
      await maintenance.stop();
    });
    await app.register(retrievalRoutes);
  },
  { name: 'retrieval', dependencies: ['hearth-guard', 'index'] },
);
