import fp from 'fastify-plugin';
import { ChunksRepository } from './chunks-repository.js';
import { EmbedderLifecycle, type DefaultEmbedderStatus } from './embedder-lifecycle.js';
import { KeywordIndexMaintenance } from './keyword-maintenance.js';
import { indexRoutes } from './routes.js';
import { SearchIndex } from './search-index.js';
import { IndexService } from './service.js';
import { IndexStore } from './store.js';

// The index's public surface: what other plugins may import.
export type { NewChunk } from './chunks-repository.js';
export type { DefaultEmbedderStatus } from './embedder-lifecycle.js';
export type { SearchIndex } from './search-index.js';
export type { IndexService, IndexStats } from './service.js';
export type { IndexStore } from './store.js';

declare module 'fastify' {
  interface FastifyInstance {
    index: IndexService;
    searchIndex: SearchIndex;
    defaultEmbedder: DefaultEmbedderStatus;
    keywordIndex: KeywordIndexMaintenance;
  }
}

/** How often the keyword index is checked for writes to merge. */
const MERGE_CHECK_MS = 30_000;

/**
 * The search index: chunks, their keyword rows and vectors (written through app.index.store), and
 * the embedding model from MODEL_DIR they follow (EmbedderLifecycle), all kept consistent with
 * SQLite. With no model installed the service still starts and searches by keywords.
 */
export default fp(
  async function index(app) {
    const searchIndex = new SearchIndex();
    const chunks = new ChunksRepository(app.db);
    const store = new IndexStore(chunks, searchIndex, app.log);
    const service = new IndexService(searchIndex, store, chunks, app.jobs, app.config.databaseFile, app.config.dataDir, app.log);
    const { modelDir, embedDevice: device, defaultEmbedder, defaultEmbedderDimension, modelWatchSeconds } = app.config;
    const lifecycle = new EmbedderLifecycle(searchIndex, service, { modelDir, device, defaultEmbedder, defaultEmbedderDimension, modelWatchSeconds, log: app.log });
    const keywordIndex = new KeywordIndexMaintenance(chunks);
    app.decorate('searchIndex', searchIndex);
    app.decorate('index', service);
    app.decorate('defaultEmbedder', { getter: () => lifecycle.defaultEmbedder() });
    app.decorate('keywordIndex', keywordIndex);

    await lifecycle.load();
    app.health.register('embedder', async () => lifecycle.embedderHealth());
    app.health.register('vector_index', async () => lifecycle.vectorIndexHealth());

    const merging = setInterval(() => keywordIndex.compact().catch((err) => app.log.warn({ err }, 'merging the keyword index failed')), MERGE_CHECK_MS);
    merging.unref();
    app.addHook('onReady', () => lifecycle.start());
    // After ingestion's hook (closed first: its jobs stopped), the one save of the vectors at shutdown.
    app.addHook('onClose', async () => {
      clearInterval(merging);
      await keywordIndex.stop();
      await lifecycle.stop();
      await store.flush();
      await searchIndex.embedder()?.close();
    });
    await app.register(indexRoutes);
  },
  { name: 'index', dependencies: ['hearth-guard', 'jobs', 'health'] },
);
