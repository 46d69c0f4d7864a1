import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { AuditConfigBody, AuditConfigView, AuditEntryView, AuditIdParams, AuditList, AuditListQuery, AuditVerification, RETENTION_BOUNDS } from './schemas.js';
import { toAuditEntryView } from './service.js';

const admin = { access: { role: 'admin' as const, tier: 'ENTERPRISE' as const } };
const tags = ['audit'];

export const auditRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const configView = () => ({
    retention_days: app.audit.retentionDays(),
    retention_bounds: { ...RETENTION_BOUNDS },
    sweeps_enabled: app.config.jobs.retentionSweepsEnabled,
    recording: app.audit.enabled(),
  });

  app.get('/api/audit', {
    config: admin,
    schema: {
      summary: 'Query the audit log, newest first',
      description: 'Filters: event (type), user (actor user id or username), from and to (ISO 8601, inclusive); limit 1..200 (default 50), offset.',
      tags,
      querystring: AuditListQuery,
      response: { 200: AuditList },
    },
  }, async (request) => {
    const { event, user, from, to, limit, offset } = request.query;
    const filters = { event, user, from: from ? Date.parse(from) : undefined, to: to ? Date.parse(to) : undefined };
    const { entries, total } = await app.audit.list(filters, limit, offset);
    return { entries: entries.map(toAuditEntryView), total, limit, offset };
  });

  app.get('/api/audit/verify', {
    config: admin,
    schema: {
      summary: 'Verify the hash chain of the audit log',
      description: 'Walks every entry from the oldest kept one and reports the first broken link: an entry missing (entry_missing), one that does not chain to the one before (previous_hash_mismatch) or one whose content changed (hash_mismatch).',
      tags,
      response: { 200: AuditVerification },
    },
  }, async () => app.audit.verify());

  app.get('/api/audit/config', {
    config: admin,
    schema: { summary: 'The audit retention policy', tags, response: { 200: AuditConfigView } },
  }, async () => configView());

  app.put('/api/audit/config', {
    config: admin,
    schema: {
      summary: 'Update the audit retention policy',
      description: `retention_days ${RETENTION_BOUNDS.min}..${RETENTION_BOUNDS.max}: entries older than that are removed at once and then daily (when RETENTION_SWEEPS_ENABLED).`,
      tags,
      body: AuditConfigBody,
      response: { 200: AuditConfigView },
    },
  }, async (request) => {
    await app.audit.setRetentionDays(request.body.retention_days);
    await app.audit.record(request, { event: 'config.update', target: 'audit', details: { fields: ['retention_days'] } });
    if (app.config.jobs.retentionSweepsEnabled) await app.audit.sweep();
    return configView();
  });

  app.get('/api/audit/:id', {
    config: admin,
    schema: { summary: 'Get one audit entry', tags, params: AuditIdParams, response: { 200: AuditEntryView } },
  }, async (request) => toAuditEntryView(await app.audit.get(request.params.id)));
};
