import fp from 'fastify-plugin';
import { loadEmbedder } from '../../native/embeddings/index.js';
import { ChunksRepository } from '../ingestion/chunks-repository.js';
import { indexRoutes } from './routes.js';
import { SearchIndex } from './search-index.js';
import { IndexService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    index: IndexService;
  }
}

/**
 * The search index: the embedding model from MODEL_DIR and its vector index, kept consistent with
 * SQLite. With no model installed the service still starts and searches by keywords.
 */
export default fp(
  async function index(app) {
    const searchIndex = new SearchIndex();
    const service = new IndexService(searchIndex, new ChunksRepository(app.db), app.jobs, app.config.databaseFile, app.config.dataDir, app.log);
    app.decorate('searchIndex', searchIndex);
    app.decorate('index', service);

    let problem: string | null = null;
    try {
      const load = (id?: string) => loadEmbedder({ modelDir: app.config.modelDir, device: app.config.embedDevice, log: app.log, ...(id ? { id } : {}) });
      const embedder = await load();
      // A previous model is reused only if its files are exactly those its vectors came from.
      const previous = async (modelId: string) => {
        const candidate = await load(modelId.split('@')[0]);
        if (candidate?.modelId === modelId) return candidate;
        await candidate?.close();
        return null;
      };
      if (embedder) await service.open(embedder, previous);
      else app.log.warn('no embedding model installed in MODEL_DIR: search runs on keywords only (npm run models -- pull, or import)');
    } catch (error) {
      // A broken or tampered model must not keep the service down: keyword search still works.
      problem = error instanceof Error ? error.message : String(error);
      app.log.error({ err: error }, 'the embedding model could not be loaded: search runs on keywords only');
    }

    app.health.register('embedder', async () => {
      const embedder = searchIndex.embedder();
      if (embedder) return { status: 'ok', detail: `${embedder.modelId} (${embedder.dimension} dimensions, ${embedder.device})` };
      return problem ? { status: 'error', detail: 'the embedding model could not be loaded: search runs on keywords only' } : { status: 'not_installed', detail: 'no embedding model installed: search runs on keywords only' };
    });
    app.health.register('vector_index', async () => {
      const vectors = searchIndex.vectors();
      return vectors ? { status: 'ok', detail: `${vectors.size()} vectors` } : { status: 'not_installed', detail: 'no vector index: search runs on keywords only' };
    });

    app.addHook('onReady', async () => {
      await service.catchUp();
    });
    app.addHook('onClose', async () => {
      await searchIndex.vectors()?.save();
      await searchIndex.embedder()?.close();
    });
    await app.register(indexRoutes);
  },
  { name: 'index', dependencies: ['jobs', 'health'] },
);
