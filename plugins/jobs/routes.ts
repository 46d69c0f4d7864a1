import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { conflict, notFound } from '../../core/errors.js';
import { TERMINAL_STATES } from '../../core/jobs/job.js';
import { JobIdParams, JobList, JobView, ListJobsQuery } from './schemas.js';

export const jobsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/api/jobs', {
    config: { access: { role: 'viewer' } },
    schema: {
      summary: 'List background jobs, newest first',
      description: "A job's document_ids show only the documents the caller may read; a job about none of them, or about a connector or integration outside the caller's groups (a scan, a sync, a metadata refresh), is left out (and 404 by id).",
      tags: ['jobs'], querystring: ListJobsQuery, response: { 200: JobList },
    },
  }, async (request) => {
    const groups = await app.groups.callerGroups(request);
    const { jobs, total } = await app.jobs.store.list(request.query);
    const visible = (await Promise.all(jobs.map((job) => app.groups.visibleJob(job, groups)))).filter((job) => job !== undefined);
    return { jobs: visible, total: total - (jobs.length - visible.length) };
  });

  app.get('/api/jobs/:id', {
    config: { access: { role: 'viewer' } },
    schema: { summary: 'Get a job', tags: ['jobs'], params: JobIdParams, response: { 200: JobView } },
  }, async (request) => {
    const stored = await app.jobs.store.get(request.params.id);
    const job = stored && (await app.groups.visibleJob(stored, await app.groups.callerGroups(request)));
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
    const stored = await app.jobs.store.get(request.params.id);
    const job = stored && (await app.groups.visibleJob(stored, await app.groups.callerGroups(request)));
    if (!job) throw notFound('Job');
    if (TERMINAL_STATES.includes(job.state) || !(await app.jobs.cancel(job.id))) {
      throw conflict('job_finished', `The job already ${job.state === 'cancelled' ? 'was cancelled' : 'finished'}`);
    }
    return reply.code(202).send((await app.jobs.store.get(job.id))!);
  });
};
