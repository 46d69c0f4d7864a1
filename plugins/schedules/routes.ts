import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { clock } from '../../core/clock.js';
import { HttpError } from '../../core/errors.js';
import { CreateScheduleBody, PreviewQuery, PreviewView, ScheduleIdParams, ScheduleList, ScheduleView, UpdateScheduleBody } from './schemas.js';
import { toScheduleView } from './service.js';

const admin = { access: { role: 'admin' as const, tier: 'PRO' as const } };
const tags = ['schedules'];
const CRON_RULES = 'A cron that is not 5 fields, is out of range or never fires is a 400 invalid_cron naming the field (body.cron), and nothing changes.';

export const schedulesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  // Below PRO the schedules are kept but do not fire: the 403 says so, with how many are waiting.
  app.setErrorHandler(async (error: Error, request, reply) => {
    if (error instanceof HttpError && error.code === 'tier_required') {
      const kept = await app.schedules.count();
      if (kept > 0) {
        throw new HttpError(403, error.code, `${error.message}. ${kept} saved schedule(s) are kept but do not fire until a PRO or ENTERPRISE licence is applied`);
      }
    }
    throw error;
  });

  // Schedules follow their sources: every route passes the caller's groups, so a caller sees only the schedules of
  // the connectors and integrations those groups may read.
  app.get('/api/schedules', {
    config: admin,
    schema: { summary: 'List schedules', description: 'Only the schedules of sources the caller may see: one of a connector or integration restricted to groups the caller is not in (ENTERPRISE) is left out here and 404 by id.', tags, response: { 200: ScheduleList } },
  }, async (request) => {
    const rows = await app.schedules.list(await app.groups.callerGroups(request));
    return { schedules: rows.map(toScheduleView), total: rows.length };
  });

  app.get('/api/schedules/preview', {
    config: admin,
    schema: {
      summary: 'The next runs of a cron expression, without saving anything',
      description: `For the schedule editor. ${CRON_RULES.replace('body.cron', 'querystring.cron')}`,
      tags,
      querystring: PreviewQuery,
      response: { 200: PreviewView },
    },
  }, async (request) => ({
    cron: request.query.cron,
    next_runs: app.schedules.preview(request.query.cron, request.query.count ?? 5).map((ms) => clock.iso(ms)),
  }));

  app.post('/api/schedules', {
    config: admin,
    schema: {
      summary: 'Create a schedule for a connector scan or an integration sync',
      description: `enabled defaults to true. An unknown source is a 400 unknown_source (field body.source_id). ${CRON_RULES}`,
      tags,
      body: CreateScheduleBody,
      response: { 201: ScheduleView },
    },
  }, async (request, reply) => {
    const row = await app.schedules.create(request.body, await app.groups.callerGroups(request));
    request.log.info({ event: 'schedule.create', schedule: row.id, by: app.logPrivacy.caller(request) }, 'schedule created');
    return reply.code(201).send(toScheduleView(row));
  });

  app.get('/api/schedules/:id', {
    config: admin,
    schema: { summary: 'Get a schedule', tags, params: ScheduleIdParams, response: { 200: ScheduleView } },
  }, async (request) => toScheduleView(await app.schedules.get(request.params.id, await app.groups.callerGroups(request))));

  app.put('/api/schedules/:id', {
    config: admin,
    schema: {
      summary: 'Update a schedule (cron expression, enabled flag)',
      description: `A new cron, or enabling, plans next_run from now; disabling clears it. ${CRON_RULES}`,
      tags,
      params: ScheduleIdParams,
      body: UpdateScheduleBody,
      response: { 200: ScheduleView },
    },
  }, async (request) => {
    const row = await app.schedules.update(request.params.id, request.body, await app.groups.callerGroups(request));
    request.log.info({ event: 'schedule.update', schedule: row.id, by: app.logPrivacy.caller(request) }, 'schedule updated');
    return toScheduleView(row);
  });

  app.delete('/api/schedules/:id', {
    config: admin,
    schema: { summary: 'Delete a schedule', tags, params: ScheduleIdParams, response: { 204: Type.Null() } },
  }, async (request, reply) => {
    await app.schedules.delete(request.params.id, await app.groups.callerGroups(request));
    request.log.info({ event: 'schedule.delete', schedule: request.params.id, by: app.logPrivacy.caller(request) }, 'schedule deleted');
    return reply.code(204).send(null);
  });
};
