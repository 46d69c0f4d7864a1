import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { JobView } from '../jobs/index.js';
import { CreateIntegrationBody, IntegrationIdParams, IntegrationList, IntegrationView, ListIntegrationsQuery, UpdateIntegrationBody } from './schemas.js';

const viewer = { access: { role: 'viewer' as const } };
const editor = { access: { role: 'editor' as const } };
const admin = { access: { role: 'admin' as const } };
const tags = ['integrations'];

export const integrationsRoutes: FastifyPluginAsyncTypebox = async (app) => {

  app.get('/api/integrations', {
    config: viewer,
    schema: { summary: 'List integrations', tags, querystring: ListIntegrationsQuery, response: { 200: IntegrationList } },
  }, async (request) => app.integrations.list(request.query.limit, request.query.offset, await app.groups.callerGroups(request)));

  app.post('/api/integrations', {
    config: admin,
    schema: {
      summary: 'Create an integration (a website crawler)',
      description:
        'config needs start_url or sitemap_url. A URL whose host resolves to a loopback, private, link-local or other ' +
        'non-public address is refused (400 url_not_allowed) unless allow_private_network is true; cloud metadata ' +
        'addresses always are. credentials are write-only: sealed at rest and never returned (credentials_set instead). ' +
        '409 integration_name_taken for a name in use (any case).',
      tags,
      body: CreateIntegrationBody,
      response: { 201: IntegrationView },
    },
  }, async (request, reply) => {
    const integration = await app.integrations.create(request.body);
    request.log.info({ event: 'integration.create', integration: integration.id, by: app.logPrivacy.caller(request) }, 'integration created');
    return reply.code(201).send(integration);
  });

  app.get('/api/integrations/:id', {
    config: viewer,
    schema: { summary: 'Get an integration', tags, params: IntegrationIdParams, response: { 200: IntegrationView } },
  }, async (request) => app.integrations.view(request.params.id, await app.groups.callerGroups(request)));

  app.put('/api/integrations/:id', {
    config: admin,
    schema: {
      summary: 'Update an integration (name, config, credentials and/or enabled)',
      description: 'A config given replaces the stored one whole. credentials: new ones, or null to remove them; omitted keeps them.',
      tags,
      params: IntegrationIdParams,
      body: UpdateIntegrationBody,
      response: { 200: IntegrationView },
    },
  }, async (request) => {
    const integration = await app.integrations.update(request.params.id, request.body, await app.groups.callerGroups(request));
    request.log.info({ event: 'integration.update', integration: integration.id, by: app.logPrivacy.caller(request) }, 'integration updated');
    return integration;
  });

  app.delete('/api/integrations/:id', {
    config: admin,
    schema: { summary: 'Delete an integration and remove its documents from the index', tags, params: IntegrationIdParams, response: { 204: Type.Null() } },
  }, async (request, reply) => {
    await app.integrations.delete(request.params.id, await app.groups.callerGroups(request));
    request.log.info({ event: 'integration.delete', integration: request.params.id, by: app.logPrivacy.caller(request) }, 'integration deleted');
    return reply.code(204).send(null);
  });

  app.post('/api/integrations/:id/sync', {
    config: editor,
    schema: {
      summary: 'Sync an integration',
      description:
        'Answers 202 with the sync job (type integration.sync), or with the one already queued or running for this ' +
        'integration. The job crawls, indexes new and changed pages and removes the documents of pages that are gone. ' +
        '409 integration_disabled when the integration is disabled.',
      tags,
      params: IntegrationIdParams,
      response: { 202: JobView },
    },
  }, async (request, reply) => {
    const job = await app.integrations.sync(request.params.id, await app.groups.callerGroups(request));
    request.log.info({ event: 'integration.sync', integration: request.params.id, job: job.id, by: app.logPrivacy.caller(request) }, 'integration sync started');
    return reply.code(202).send(job);
  });
};
