import fp from 'fastify-plugin';
import { AllowedPaths } from './allowed-paths.js';
import { ConnectorsRepository } from './repository.js';
import { connectorsRoutes } from './routes.js';
import { ConnectorScanner } from './scanner.js';
import { ConnectorsService } from './service.js';

// The public surface: what other plugins may import.
export type { ConnectorsService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    connectors: ConnectorsService;
  }
}

/** Local-directory connectors: folders inside CONNECTOR_ALLOWED_PATHS kept in sync with the index by scan jobs; an interrupted scan runs again at start. */
export default fp(
  async function connectors(app) {
    const repository = new ConnectorsRepository(app.db);
    const allowed = new AllowedPaths(app.config.connectorAllowedPaths);
    const scanner = new ConnectorScanner(repository, allowed, app.documents, app.ingestion, app.log);
    const service = new ConnectorsService(repository, allowed, scanner, app.documents, app.jobs, app.log);
    app.decorate('connectors', service);
    // After ingestion's own resume (registered before): the documents it re-queues are indexed first.
    app.addHook('onReady', () => service.resumeInterrupted());
    await app.register(connectorsRoutes);
  },
  { name: 'connectors', dependencies: ['hearth-guard', 'jobs', 'documents', 'ingestion'] },
);
