import fp from 'fastify-plugin';
import { BrandingLogoRepository } from './repository.js';
import { brandingRoutes } from './routes.js';
import { BrandingService } from './service.js';

// The public surface: what other plugins may import.
export type { BrandingService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    branding: BrandingService;
  }
}

/** Branding: name, colours and texts in the settings store, and one normalised PNG logo. */
export default fp(
  async function branding(app) {
    app.decorate('branding', new BrandingService(app.settings, new BrandingLogoRepository(app.db)));
    await app.register(brandingRoutes);
  },
  { name: 'branding', dependencies: ['hearth-guard'] },
);
