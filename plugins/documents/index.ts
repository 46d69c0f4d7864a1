import fp from 'fastify-plugin';
import { DocumentsRepository } from './repository.js';
import { documentsRoutes } from './routes.js';
import { DocumentsService } from './service.js';

// The documents' public surface: what other plugins may import.
export { DocumentsService, sanitiseFilename, type IndexedDocument, type SourceFile, type SourceUpsert } from './service.js';
export type { DocumentRow } from './repository.js';
export { CANCELLED_REASON, UNEXPECTED_REASON } from './lifecycle.js';
export { FILE_TYPES, type FileType } from './file-type.js';
export type { PageWarning } from './schemas.js';
export { SourceRun, type RunIndexer, type SourceRunOptions } from './source-run.js';

declare module 'fastify' {
  interface FastifyInstance {
    documents: DocumentsService;
  }
}

/** Documents: stored originals, their lifecycle (queued -> indexing -> indexed | failed) and their removal with their chunks and vectors (the index's store). The indexing itself is the ingestion plugin's. */
export default fp(
  async function documents(app) {
    const service = new DocumentsService(new DocumentsRepository(app.db), app.indexStore, app.entitlement, app.config.dataDir, app.config.indexing.ocrEnabled);
    app.decorate('documents', service);
    app.usage.register(() => service.usage());
  },
  { name: 'documents', dependencies: ['license', 'search-index'] },
);

/** /api/docs, registered after the ingestion plugin: an upload answers with the job that indexes it. */
export const documentsApi = fp(
  async function documentsApi(app) {
    await app.register(documentsRoutes);
  },
  { name: 'documents-api', dependencies: ['hearth-guard', 'documents', 'ingestion', 'groups'] },
);
