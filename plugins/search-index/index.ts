import fp from 'fastify-plugin';
import { ChunkMetadataRepository } from './chunk-metadata-repository.js';
import { DocumentKeywords } from './document-keywords.sqlite.js';
import { ChunksRepository } from './chunks-repository.js';
import { CorpusAdaptation } from './corpus-adaptation/index.js';
import { EmbedderLifecycle, type DefaultEmbedderStatus } from './embedder-lifecycle.js';
import { KeywordIndexMerger } from './keyword-index-merger.js';
import { SqliteKeywordIndex } from './keyword-index.sqlite.js';
import { indexRoutes } from './routes.js';
import { ActiveEmbedding } from './active-embedding.js';
import { IndexAdmin } from './service.js';
import { IndexStore } from './store.js';

// The search index's public surface: what other plugins may import.
export type { NewChunk } from './chunks-repository.js';
// For the hearth command's `models build-default`.
export { DEFAULT_EMBEDDER_DIMENSION, installDefaultModel } from './default-embedder/index.js';
export type { DocumentMetadata } from './chunk-metadata-repository.js';
export { searchVectors } from './vector-filter.js';
export type { DefaultEmbedderStatus } from './embedder-lifecycle.js';
export type { ActiveEmbedding } from './active-embedding.js';
export type { IndexAdmin, IndexStats } from './service.js';
export type { IndexStore } from './store.js';

declare module 'fastify' {
  interface FastifyInstance {
    /** Reads: the embedder and vector index in force (retrieval, the LLM status). */
    activeEmbedding: ActiveEmbedding;
    /** Writes: chunks, their keyword rows and vectors (documents, ingestion). */
    indexStore: IndexStore;
    /** Upkeep: stats, rebuild, embedding what is pending (the /api/index routes). */
    indexAdmin: IndexAdmin;
    defaultEmbedder: DefaultEmbedderStatus;
    keywordIndexMerger: KeywordIndexMerger;
  }
}

/** How often the collection is checked for an embedder adaptation when MODEL_WATCH_SECONDS is 0. */
const ADAPT_CHECK_SECONDS = 60;
/** How often the keyword index is checked for writes to merge. */
const MERGE_CHECK_MS = 30_000;

/**
 * The search index: chunks, their keyword rows and vectors (written through app.indexStore), and
 * the embedding model from MODEL_DIR they follow (EmbedderLifecycle), all kept consistent with
 * SQLite. With no model installed the service still starts and searches by keywords.
 */
export default fp(
  async function searchIndexPlugin(app) {
    const activeEmbedding = new ActiveEmbedding();
    const chunks = new ChunksRepository(app.db);
    const store = new IndexStore(chunks, activeEmbedding, app.log, new ChunkMetadataRepository(app.db), new DocumentKeywords(app.db));
    const admin = new IndexAdmin(activeEmbedding, store, chunks, app.jobs, app.config.databaseFile, app.config.dataDir, app.log);
    const { modelDir, embedDevice: device, defaultEmbedder, defaultEmbedderDimension, modelWatchSeconds } = app.config;
    const lifecycle = new EmbedderLifecycle(activeEmbedding, admin, { modelDir, device, defaultEmbedder, defaultEmbedderDimension, modelWatchSeconds, log: app.log });
    const keywordIndexMerger = new KeywordIndexMerger(new SqliteKeywordIndex(app.db));
    const adaptation = new CorpusAdaptation(activeEmbedding, app.jobs, () => chunks.count(), () => lifecycle.syncActiveModel(), {
      ...app.config.embedAdapt,
      modelDir,
      databaseFile: app.config.databaseFile,
      log: app.log,
    });
    app.decorate('activeEmbedding', activeEmbedding);
    app.decorate('indexStore', store);
    app.decorate('indexAdmin', admin);
    app.decorate('defaultEmbedder', { getter: () => lifecycle.defaultEmbedder() });
    app.decorate('keywordIndexMerger', keywordIndexMerger);

    await lifecycle.load();
    app.health.register('embedder', async () => lifecycle.embedderHealth());
    app.health.register('vector_index', async () => lifecycle.vectorIndexHealth());

    const merging = setInterval(() => keywordIndexMerger.compact().catch((err) => app.log.warn({ err }, 'merging the keyword index failed')), MERGE_CHECK_MS);
    merging.unref();
    let adapting: NodeJS.Timeout | undefined;
    app.addHook('onReady', async () => {
      await lifecycle.start();
      const check = () => adaptation.check().catch((err) => app.log.warn({ err }, 'checking whether the embedder needs adapting to the collection failed'));
      adapting = setInterval(check, (modelWatchSeconds || ADAPT_CHECK_SECONDS) * 1000);
      adapting.unref();
      void check(); // the stats say where it stands from the start, not after the first interval
    });
    // After ingestion's hook (closed first: its jobs stopped), the one save of the vectors at shutdown.
    app.addHook('onClose', async () => {
      clearInterval(merging);
      clearInterval(adapting);
      await adaptation.stop();
      await keywordIndexMerger.stop();
      await lifecycle.stop();
      await store.flush();
      await activeEmbedding.embedder()?.close();
    });
    await app.register(indexRoutes, { adaptation });
  },
  { name: 'search-index', dependencies: ['hearth-guard', 'jobs', 'health', 'groups'] },
);
