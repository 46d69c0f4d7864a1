import fp from 'fastify-plugin';
import { NoLeaderLock, SqliteLeaderLock } from './leader-lock.js';
import { SchedulesRepository } from './repository.js';
import { schedulesRoutes } from './routes.js';
import { Scheduler } from './scheduler.js';
import { SchedulesService } from './service.js';

// The scheduler's public surface: other plugins add their recurring work (the audit sweep) as tasks.
export type { ScheduledTask, Scheduler } from './scheduler.js';

declare module 'fastify' {
  interface FastifyInstance {
    scheduler: Scheduler;
    schedules: SchedulesService;
  }
}

/**
 * The tick loop and its leader lock, early in the boot order so that any plugin can add a task; the
 * schedules plugin starts it once ready, and it stops (handing the lock over) when the app closes.
 */
export const scheduler = fp(
  async function scheduler(app) {
    const { schedulerLeaderLockEnabled, schedulerLeaderLockTtlSeconds, schedulerTickSeconds } = app.config.jobs;
    const ttlMs = schedulerLeaderLockTtlSeconds * 1000;
    const lock = schedulerLeaderLockEnabled ? new SqliteLeaderLock(app.db, ttlMs) : new NoLeaderLock();
    const loop = new Scheduler(lock, { tickMs: schedulerTickSeconds * 1000, renewMs: Math.floor(ttlMs / 3) }, app.log);
    app.decorate('scheduler', loop);
    app.addHook('onClose', async () => loop.stop());
  },
  { name: 'scheduler', dependencies: ['hearth-guard'] },
);

/** Schedules (PRO or higher, admin): /api/schedules, fired by the scheduler's tick as the manual scan or sync would be. */
export default fp(
  async function schedules(app) {
    const service = new SchedulesService({
      repository: new SchedulesRepository(app.db),
      connectors: app.connectors,
      integrations: app.integrations,
      entitlement: app.entitlement,
      leaderLockEnabled: app.config.jobs.schedulerLeaderLockEnabled,
      log: app.log,
    });
    app.decorate('schedules', service);
    app.scheduler.add({ name: 'schedules', run: (now) => service.fireDue(now) });
    // After connectors' and integrations' own resume (registered before): a resumed run is not fired twice.
    app.addHook('onReady', async () => app.scheduler.start());
    await app.register(schedulesRoutes);
  },
  { name: 'schedules', dependencies: ['scheduler', 'connectors', 'integrations'] },
);
