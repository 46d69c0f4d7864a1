import fp from 'fastify-plugin';
import { DocumentsRepository } from './repository.js';
import { documentsRoutes } from './routes.js';
import { DocumentsService } from './service.js';

// The documents' public surface: what other plugins may import.
export { DocumentsService, sanitiseFilename, type IndexedDocument, type SourceFile, type SourceUpsert } from './service.js';
export type { DocumentRow } from './repository.js';
export { CANCELLED_REASON, UNEXPECTED_REASON } from './lifecycle.js';
export { FILE_TYPES, type FileType } from './file-type.js';
export { SourceRun, type RunIndexer, type SourceRunOptions } from './source-run.js';
export { RunSummary, SKIP_REASONS, type SkipReason } from './run-summary.js';

declare module 'fastify' {
  interface FastifyInstance {
    documents: DocumentsService;
  }
}

/** Documents: stored originals, their lifecycle (queued -> indexing -> indexed | failed) and removal, and /api/docs. The indexing itself is the ingestion plugin's. */
export default fp(
  async function documents(app) {
    const service = new DocumentsService(new DocumentsRepository(app.db), app.index.store, app.entitlement, app.config.dataDir, app.config.indexing.ocrEnabled);
    app.decorate('documents', service);
    app.usage.register(() => service.usage());
    await app.register(documentsRoutes);
  },
  { name: 'documents', dependencies: ['license', 'index'] },
);
