import fp from 'fastify-plugin';
import { OidcProviders } from './providers.js';
import { OidcRepository } from './repository.js';
import { oidcRoutes } from './routes.js';
import { OidcService } from './service.js';

// The public surface: what other plugins may import.
export type { OidcService } from './service.js';
export type { OidcProviders } from './providers.js';

declare module 'fastify' {
  interface FastifyInstance {
    oidc: { providers: OidcProviders; service: OidcService };
  }
}

// Sealing contexts of client secrets and PKCE verifiers, for re-sealing under a new key (hearth keys rotate-mfa).
export { secretContext } from './providers.js';
export { verifierContext } from './service.js';

/** OpenID Connect sign-on (ENTERPRISE): provider admin, the login flow, and the handoff to the web UI. */
export default fp(
  async function oidc(app) {
    const repository = new OidcRepository(app.db);
    const providers = new OidcProviders(repository, app.secretBox, app.config.oidcEnvProviders, app.network);
    const service = new OidcService(repository, providers, app.users, app.sessions, app.secretBox, app.log, app.groups);
    app.decorate('oidc', { providers, service });
    for (const name of providers.incompleteEnvProviders()) {
      app.log.warn(`OIDC provider "${name}" from OIDC_PROVIDERS lacks a CLIENT_ID, DISCOVERY_URL or REDIRECT_URI and is not offered`);
    }
    await app.register(oidcRoutes);
  },
  { name: 'oidc', dependencies: ['users', 'sessions', 'groups', 'auth', '@fastify/rate-limit'] },
);
