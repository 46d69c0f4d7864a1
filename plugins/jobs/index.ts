import fp from 'fastify-plugin';
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

/** Background jobs: the runner, its store (in memory in this release) and /api/jobs. */
export default fp(
  async function jobs(app) {
    // JOB_STORE_BACKEND is checked with the rest of the configuration (core/config.ts): the store is in memory.
    const runner = new JobRunner(new MemoryJobStore(app.config.jobs.stateTtlSeconds), app.log);
    app.decorate('jobs', runner);
    app.addHook('onClose', async () => {
      await runner.close();
      await runner.store.close();
    });
    await app.register(jobsRoutes);
  },
  { name: 'jobs', dependencies: ['hearth-guard', 'groups'] },
);
