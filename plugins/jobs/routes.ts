import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { conflict, notFound } from '../../core/errors.js';
import { TERMINAL_STATES } from '../../core/jobs/job.js';
import { JobIdParams, JobList, JobView, ListJobsQuery } from './schemas.js';

export const jobsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/api/jobs', {
    config: { access: { role: 'viewer' } },
    schema: { summary: 'List background jobs, newest first', tags: ['jobs'], querystring: ListJobsQuery, response: { 200: JobList } },
  }, async (request) => app.jobs.store.list(request.query));

  app.get('/api/jobs/:id', {
    config: { access: { role: 'viewer' } },
    schema: { summary: 'Get a job', tags: ['jobs'], params: JobIdParams, response: { 200: JobView } },
  }, async (request) => {
    const job = await app.jobs.store.get(request.params.id);
    if (!job) throw notFound('Job');
    return job;
  });

  app.post('/api/jobs/:id/cancel', {
    config: { access: { role: 'editor' } },
    schema: {
      summary: 'Cancel a queued or running job',
      description: 'Work stops between items; what was committed stays consistent. 409 when the job already finished.',
      tags: ['jobs'],
      params: JobIdParams,
      response: { 202: JobView },
    },
  }, async (request, reply) => {
    const job = await app.jobs.store.get(request.params.id);
    if (!job) throw notFound('Job');
    if (TERMINAL_STATES.includes(job.state) || !(await app.jobs.cancel(job.id))) {
      throw conflict('job_finished', `The job already ${job.state === 'cancelled' ? 'was cancelled' : 'finished'}`);
    }
    return reply.code(202).send((await app.jobs.store.get(job.id))!);
  });
};
