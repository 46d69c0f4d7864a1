import fp from 'fastify-plugin';
import { IntegrationsRepository } from './repository.js';
import { integrationsRoutes } from './routes.js';
import { IntegrationsService } from './service.js';

// The public surface: what other plugins may import.
export type { IntegrationsService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    integrations: IntegrationsService;
  }
}

// The sealing context of an integration's credentials, for re-sealing under a new key (hearth keys rotate-mfa).
export { credentialsContext } from './service.js';

/** Integrations: remote sources synced into the index as jobs (a website crawler), and /api/integrations; an interrupted sync runs again at start. */
export default fp(
  async function integrations(app) {
    const service = new IntegrationsService({
      repository: new IntegrationsRepository(app.db),
      documents: app.documents,
      ingestion: app.ingestion,
      jobs: app.jobs,
      secretBox: app.secretBox,
      dataDir: app.config.dataDir,
      log: app.log,
      network: app.network,
    });
    app.decorate('integrations', service);
    // After ingestion's own resume (registered before): the documents it re-queues are indexed first.
    app.addHook('onReady', () => service.resumeInterrupted());
    await app.register(integrationsRoutes);
  },
  { name: 'integrations', dependencies: ['hearth-guard', 'jobs', 'documents', 'ingestion'] },
);
