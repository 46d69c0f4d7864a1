import fp from 'fastify-plugin';
import { interactiveDocs, referenceRoute } from './routes.js';

/** The API reference: /docs always; the interactive UIs and the raw document only with ENABLE_API_DOCS. */
export default fp(
  async function apiDocs(app) {
    await app.register(referenceRoute);
    if (app.config.enableApiDocs) await app.register(interactiveDocs);
  },
  { name: 'api-docs', dependencies: ['hearth-guard', '@fastify/swagger'] },
);
