import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { JobView } from '../jobs/index.js';
import { CreateRuleBody, RuleList, RuleParams, RuleView, SourceParams, TestRuleBody, TestRuleResult, UpdateRuleBody } from './schemas.js';

/** Readable on every plan, so that rules kept after a downgrade can be seen (with active: false). */
const viewer = { access: { role: 'viewer' as const } };
const editorPro = { access: { role: 'editor' as const, tier: 'PRO' as const } };
const tags = ['metadata'];
const SOURCE = '{source_id} is a connector id, an integration id, or `uploads` (uploaded documents); anything else, or a source allowed to none of the caller’s groups, is a 404.';
const PATTERNS =
  'pattern and query_pattern are Python regular expressions with exactly one capture group, run by RE2 (linear time): ' +
  'backreferences, lookaround, atomic groups and possessive quantifiers are refused with 400 invalid_pattern naming the field and position.';

export const metadataRulesRoutes: FastifyPluginAsyncTypebox = async (app) => {
  const rules = app.metadataRules;
  // A connector or integration outside the caller's groups is a 404 on every route here, as on its own routes.
  app.addHook('preHandler', async (request) => {
    const { source_id: sourceId } = request.params as { source_id?: string };
    if (sourceId !== undefined) await rules.source(sourceId, await app.groups.callerGroups(request));
  });

  app.get('/api/metadata/:source_id/rules', {
    config: viewer,
    schema: {
      summary: 'List the metadata rules of a source',
      description: `${SOURCE} Readable on every plan: below PRO the kept rules show active: false and are not applied.`,
      tags,
      params: SourceParams,
      response: { 200: RuleList },
    },
  }, async (request) => {
    const list = await rules.list(request.params.source_id);
    const reason = rules.inactiveReason();
    return { rules: list, total: list.length, active: rules.active(), ...(reason ? { inactive_reason: reason } : {}) };
  });

  app.post('/api/metadata/:source_id/rules', {
    config: editorPro,
    schema: { summary: 'Create a metadata rule', description: `${SOURCE} ${PATTERNS} New rules apply to documents indexed from now on; POST …/refresh applies them to the others.`, tags, params: SourceParams, body: CreateRuleBody, response: { 201: RuleView } },
  }, async (request, reply) => {
    const rule = await rules.create(request.params.source_id, request.body);
    request.log.info({ event: 'metadata_rule.create', rule: rule.id, source: rule.source_id, by: app.logPrivacy.caller(request) }, 'metadata rule created');
    return reply.code(201).send(rule);
  });

  app.put('/api/metadata/:source_id/rules/:rule_id', {
    config: editorPro,
    schema: { summary: 'Update a metadata rule', description: `Any non-empty subset of the create fields. ${PATTERNS}`, tags, params: RuleParams, body: UpdateRuleBody, response: { 200: RuleView } },
  }, async (request) => {
    const rule = await rules.update(request.params.source_id, request.params.rule_id, request.body);
    request.log.info({ event: 'metadata_rule.update', rule: rule.id, source: rule.source_id, by: app.logPrivacy.caller(request) }, 'metadata rule updated');
    return rule;
  });

  app.delete('/api/metadata/:source_id/rules/:rule_id', {
    config: editorPro,
    schema: { summary: 'Delete a metadata rule', description: 'The values it gave stay on chunks until POST …/refresh or the next indexing of their documents.', tags, params: RuleParams, response: { 204: Type.Null() } },
  }, async (request, reply) => {
    await rules.delete(request.params.source_id, request.params.rule_id);
    request.log.info({ event: 'metadata_rule.delete', rule: request.params.rule_id, source: request.params.source_id, by: app.logPrivacy.caller(request) }, 'metadata rule deleted');
    return reply.code(204).send(null);
  });

  app.post('/api/metadata/:source_id/test-rule', {
    config: editorPro,
    schema: { summary: 'Test a pattern against sample text without saving', description: `${SOURCE} ${PATTERNS}`, tags, params: SourceParams, body: TestRuleBody, response: { 200: TestRuleResult } },
  }, async (request) => rules.test(request.params.source_id, request.body.pattern, request.body.text));

  app.post('/api/metadata/:source_id/refresh', {
    config: editorPro,
    schema: {
      summary: 'Re-apply the rules to the source’s indexed documents',
      description: 'Answers 202 with a cancellable job (type metadata.refresh) whose progress counts documents. Values are recomputed from the stored chunks without re-embedding; documents whose chunk boundaries changed are indexed again (only their changed chunks are embedded). The job result says how many of each.',
      tags,
      params: SourceParams,
      response: { 202: JobView },
    },
  }, async (request, reply) => {
    const job = await rules.refresh(request.params.source_id);
    request.log.info({ event: 'metadata.refresh', source: request.params.source_id, job: job.id, by: app.logPrivacy.caller(request) }, 'metadata refresh started');
    return reply.code(202).send(job);
  });
};
