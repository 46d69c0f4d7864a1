import fp from 'fastify-plugin';
import { AllowedPaths } from './allowed-paths.js';
import { ConnectorsRepository } from './repository.js';
import { connectorsRoutes } from './routes.js';
import { ConnectorScanner } from './scanner.js';
import { ConnectorsService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    connectors: ConnectorsService;
  }
}

/** Local-directory connectors: folders inside CONNECTOR_ALLOWED_PATHS kept in sync with the index by scan jobs. */
export default fp(
  async function connectors(app) {
    const repository = new ConnectorsRepository(app.db);
    const allowed = new AllowedPaths(app.config.connectorAllowedPaths);
    const scanner = new ConnectorScanner(repository, allowed, app.documents, app.ingestion, app.log);
    app.decorate('connectors', new ConnectorsService(repository, allowed, scanner, app.documents, app.ingestion, app.jobs));
    await app.register(connectorsRoutes);
  },
  { name: 'connectors', dependencies: ['ingestion'] },
);
