import fp from 'fastify-plugin';
import { ConfigError } from '../../core/config.js';
import { MemoryJobStore } from '../../core/jobs/memory-store.js';
import { JobRunner } from '../../core/jobs/runner.js';
import { jobsRoutes } from './routes.js';

// The jobs' public surface: the job view other plugins answer with, and the result of a source's run.
export { JobView } from './schemas.js';
export { RunSummary, SKIP_REASONS, type SkipReason } from './run-summary.js';

declare module 'fastify' {
  interface FastifyInstance {
    jobs: JobRunner;
  }
}

/** Background jobs: the runner, its store (JOB_STORE_BACKEND) and /api/jobs. */
export default fp(
  async function jobs(app) {
    const { storeBackend, stateTtlSeconds } = app.config.jobs;
    // No Redis client ships in this release: 'redis' is a hard requirement we cannot meet, 'auto' falls back.
    if (storeBackend === 'redis') throw new ConfigError('JOB_STORE_BACKEND', 'redis is not supported by this release; use auto or memory');
    if (storeBackend === 'auto' && app.config.redisUrl) app.log.warn('JOB_STORE_BACKEND=auto: the Redis job store is not in this release, using memory');
    const runner = new JobRunner(new MemoryJobStore(stateTtlSeconds), app.log);
    app.decorate('jobs', runner);
    app.addHook('onClose', async () => {
      await runner.close();
      await runner.store.close();
    });
    await app.register(jobsRoutes);
  },
  { name: 'jobs', dependencies: ['hearth-guard'] },
);
