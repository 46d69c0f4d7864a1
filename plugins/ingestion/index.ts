import fp from 'fastify-plugin';
import { ExtractionPool } from './extraction-pool.js';
import { IngestionPipeline } from './pipeline.js';

// Ingestion's public surface: what other plugins may import (metadata rules plug in with DocumentRules).
export type { DocumentRules, IngestionPipeline, RulesLookup } from './pipeline.js';
export type { ExtractedSection } from './extracted-document.js';

/**
 * Ingestion: the extraction worker pool and the pipeline that indexes documents as jobs.
 * After a crash it resumes the documents that were queued or mid-indexing.
 */
export default fp(
  async function ingestion(app) {
    const pool = new ExtractionPool({ workers: app.config.indexExtractionWorkers });
    const pipeline = new IngestionPipeline(
      app.documents,
      app.indexStore,
      pool,
      app.jobs,
      app.settings,
      { upsertBatchSize: app.config.indexing.upsertBatchSize, tablesEnabled: app.config.indexing.tablesEnabled, ocrEnabled: app.config.indexing.ocrEnabled },
      app.log,
    );
    app.decorate('ingestion', pipeline);
    app.addHook('onReady', async () => {
      await pipeline.resumeInterrupted();
    });
    app.addHook('onClose', async () => {
      // The jobs stop before the search-index plugin (registered earlier, closed later) saves the vectors.
      await app.jobs.close();
      await pool.close();
    });
  },
  { name: 'ingestion', dependencies: ['jobs', 'search-index', 'documents'] },
);
