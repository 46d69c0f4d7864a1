import fp from 'fastify-plugin';
import { ConfigError } from '../../core/config.js';
import { parsePublicKey } from './license-key.js';
import { LicensesRepository } from './repository.js';
import { licenseRoutes } from './routes.js';
import { LicenseService } from './service.js';
import { UsageRegistry } from './usage.js';

// The public surface: what other plugins may import.
export type { LicenseService } from './service.js';
export type { UsageRegistry } from './usage.js';
// For hearth doctor, which checks the stored license without the app.
export { checkLicenseKey, parsePublicKey } from './license-key.js';

declare module 'fastify' {
  interface FastifyInstance {
    license: LicenseService;
  }
}

/** Parsed once at boot, so a mistyped key stops the service instead of silently refusing every license. */
function publicKeysOf(configured: string[]) {
  return configured.map((text, index) => {
    try {
      return parsePublicKey(text);
    } catch (error) {
      throw new ConfigError('LICENSE_PUBLIC_KEYS', `entry ${index + 1} is not an Ed25519 public key (${(error as Error).message})`);
    }
  });
}

/** License tiers: verifies signed license keys, keeps the last one applied, and feeds app.entitlement. */
export default fp(
  async function license(app) {
    const usage = new UsageRegistry();
    const service = new LicenseService(new LicensesRepository(app.db), app.entitlement, publicKeysOf(app.config.licensePublicKeys), usage);
    app.decorate('usage', usage);
    app.decorate('license', service);

    const outcome = await service.restore();
    if (outcome.kind === 'restored') {
      app.log.info({ event: 'license.restore', licensee: outcome.license.licensee, tier: outcome.license.tier, expires_at: outcome.license.expires_at }, 'licence restored');
    } else if (outcome.kind === 'ignored') {
      app.log.warn({ event: 'license.ignored', problem: outcome.problem }, `the stored licence is ignored (${outcome.detail}); running as FREE. Check LICENSE_PUBLIC_KEYS`);
    }
    await app.register(licenseRoutes);
  },
  { name: 'license', dependencies: ['hearth-guard'] },
);
