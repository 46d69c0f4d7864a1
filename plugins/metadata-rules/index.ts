import fp from 'fastify-plugin';
import { HttpError } from '../../core/errors.js';
import { RefreshJob } from './refresh.js';
import { MetadataRulesRepository } from './repository.js';
import { metadataRulesRoutes } from './routes.js';
import { MetadataRulesService } from './service.js';

// The metadata rules' public surface.
export type { MetadataCondition, MetadataRulesService } from './service.js';
export { UPLOADS_SOURCE_ID } from './schemas.js';

declare module 'fastify' {
  interface FastifyInstance {
    metadataRules: MetadataRulesService;
  }
}

const isNotFound = (error: unknown) => error instanceof HttpError && error.statusCode === 404;
/** Whether a lookup that answers 404 for an unknown id found one. */
const exists = (lookup: () => Promise<unknown>) => lookup().then(() => true, (error: unknown) => (isNotFound(error) ? false : Promise.reject(error)));

/**
 * Metadata rules (PRO): per source, Python-style patterns that give chunks metadata values at
 * ingestion (ingestion's rules hook) and turn matching chat questions into metadata filters (the
 * chat's filter hook). Below PRO the rules are kept but neither applied nor editable.
 */
export default fp(
  async function metadataRules(app) {
    const service = new MetadataRulesService(
      new MetadataRulesRepository(app.db),
      {
        connectorExists: (id, readerGroups) => exists(() => app.connectors.get(id, readerGroups)),
        integrationExists: (id, readerGroups) => exists(() => app.integrations.get(id, readerGroups)),
      },
      app.entitlement,
      app.jobs,
      new RefreshJob(app.documents, app.indexStore, app.ingestion),
    );
    app.decorate('metadataRules', service);
    // A source's rules go with it (issue 17), as its schedules do.
    app.connectors.onDelete((id) => service.sourceDeleted('connector', id));
    app.integrations.onDelete((id) => service.sourceDeleted('integration', id));
    app.ingestion.useRules((document) => service.rulesFor(document));
    app.chat.addFilterHook(async (_hints, query) => {
      const conditions = await service.classify(query);
      return conditions.length ? { metadata: conditions } : null;
    });
    await app.register(metadataRulesRoutes);
  },
  { name: 'metadata-rules', dependencies: ['hearth-guard', 'groups', 'jobs', 'search-index', 'documents', 'ingestion', 'connectors', 'integrations', 'chat'] },
);
