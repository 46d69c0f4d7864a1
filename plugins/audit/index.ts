import fp from 'fastify-plugin';
import { AuditChain } from './chain.js';
import { AuditRepository } from './repository.js';
import { auditRoutes } from './routes.js';
import { AuditService } from './service.js';

// The audit's public surface: other plugins call app.audit.record(request, { event, target, outcome, details }).
export type { AuditRecord, AuditService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    audit: AuditService;
  }
}

/** Daily, at an hour of little traffic (UTC); and at the first tick, so a box restarted more often than daily still sweeps. */
const SWEEP_CRON = '17 3 * * *';

/** The audit log (ENTERPRISE, admin reads): app.audit.record for every plugin, /api/audit, the daily retention sweep. */
export default fp(
  async function audit(app) {
    const service = new AuditService(new AuditRepository(app.db), new AuditChain(app.config.mfaEncryptionKey), app.entitlement, app.settings, app.log);
    app.decorate('audit', service);
    if (app.config.jobs.retentionSweepsEnabled) {
      app.scheduler.add({ name: 'audit.retention', cron: SWEEP_CRON, atStart: true, run: async (now) => void (await service.sweep(now)) });
    }
    await app.register(auditRoutes);
  },
  { name: 'audit', dependencies: ['hearth-guard', 'scheduler'] },
);
