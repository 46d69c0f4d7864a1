import fp from 'fastify-plugin';
import { ConfigError } from '../../core/config.js';
import { parsePublicKey } from './licence-key.js';
import { LicencesRepository } from './repository.js';
import { licenseRoutes } from './routes.js';
import { LicenceService } from './service.js';
import { UsageRegistry } from './usage.js';

// For hearth doctor, which checks the stored licence without the app.
export { checkLicenceKey, parsePublicKey } from './licence-key.js';

declare module 'fastify' {
  interface FastifyInstance {
    licence: LicenceService;
  }
}

/** Parsed once at boot, so a mistyped key stops the service instead of silently refusing every licence. */
function publicKeysOf(configured: string[]) {
  return configured.map((text, index) => {
    try {
      return parsePublicKey(text);
    } catch (error) {
      throw new ConfigError('LICENSE_PUBLIC_KEYS', `entry ${index + 1} is not an Ed25519 public key (${(error as Error).message})`);
    }
  });
}

/** Licence tiers: verifies signed licence keys, keeps the last one applied, and feeds app.entitlement. */
export default fp(
  async function license(app) {
    const usage = new UsageRegistry();
    const service = new LicenceService(new LicencesRepository(app.db), app.entitlement, publicKeysOf(app.config.licensePublicKeys), usage);
    app.decorate('usage', usage);
    app.decorate('licence', service);

    const outcome = await service.restore();
    if (outcome.kind === 'restored') {
      app.log.info({ event: 'license.restore', licensee: outcome.licence.licensee, tier: outcome.licence.tier, expires_at: outcome.licence.expires_at }, 'licence restored');
    } else if (outcome.kind === 'ignored') {
      app.log.warn({ event: 'license.ignored', problem: outcome.problem }, `the stored licence is ignored (${outcome.detail}); running as FREE. Check LICENSE_PUBLIC_KEYS`);
    }
    await app.register(licenseRoutes);
  },
  { name: 'license', dependencies: ['hearth-guard'] },
);
