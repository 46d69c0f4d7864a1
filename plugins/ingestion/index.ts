import path from 'node:path';
import fp from 'fastify-plugin';
import { ConfigError } from '../../core/config.js';
import { type OcrLanguages, OcrLanguageMissing, resolveOcrLanguages } from '../../native/ocr/index.js';
import { ExtractionPool } from './extraction-pool.js';
import { IngestionPipeline } from './pipeline.js';

// Ingestion's public surface: what other plugins may import (metadata rules plug in with DocumentRules).
export type { DocumentRules, IngestionPipeline, RulesLookup } from './pipeline.js';
export type { ExtractedSection } from './extracted-document.js';

/**
 * Ingestion: the extraction worker pool and the pipeline that indexes documents as jobs.
 * After a crash it resumes the documents that were queued or mid-indexing.
 */
/** The configured OCR languages' data, found at boot: a language whose package is missing stops the service. */
function ocrLanguagesOf(languages: string[], dataDir: string): OcrLanguages {
  try {
    return resolveOcrLanguages(languages, path.join(dataDir, 'ocr-languages'));
  } catch (error) {
    if (error instanceof OcrLanguageMissing) throw new ConfigError('INDEXING_OCR_LANGUAGES', `${error.message} (npm install ${error.packageName})`);
    throw error;
  }
}

export default fp(
  async function ingestion(app) {
    const { ocrEnabled, ocrLanguages, tablesEnabled, upsertBatchSize } = app.config.indexing;
    const extract = { tablesEnabled, ocrEnabled, ...(ocrEnabled ? { ocrLanguages: ocrLanguagesOf(ocrLanguages, app.config.dataDir) } : {}) };
    const pool = new ExtractionPool({ workers: app.config.indexExtractionWorkers });
    const pipeline = new IngestionPipeline(
      app.documents,
      app.indexStore,
      pool,
      app.jobs,
      app.settings,
      { upsertBatchSize, extract },
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
