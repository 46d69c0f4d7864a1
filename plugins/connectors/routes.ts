import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { JobView } from '../jobs/index.js';
import { ConnectorIdParams, ConnectorList, ConnectorView, CreateConnectorBody, SyncAllResult, UpdateConnectorBody } from './schemas.js';
import { toConnectorView } from './service.js';

const viewer = { access: { role: 'viewer' as const } };
const editor = { access: { role: 'editor' as const } };
const admin = { access: { role: 'admin' as const } };
const tags = ['connectors'];
const PATH_RULES =
  'The path is resolved (symbolic links and "..") and must be an existing directory inside CONNECTOR_ALLOWED_PATHS: ' +
  'else 400 path_not_allowed or path_not_found (field body.path) and nothing changes. 409 connector_name_taken for a name in use (any case).';

export const connectorsRoutes: FastifyPluginAsyncTypebox = async (app) => {

  app.get('/api/connectors', {
    config: viewer,
    schema: { summary: 'List local-directory connectors', tags, response: { 200: ConnectorList } },
  }, async (request) => {
    // Only the connectors allowed to the reader's groups, with counts of the documents they may read.
    const connectors = await app.connectors.list(await app.groups.callerGroups(request));
    return { connectors: connectors.map(toConnectorView), total: connectors.length };
  });

  app.post('/api/connectors', {
    config: admin,
    schema: {
      summary: 'Create a connector',
      description: `recursive and enabled default to true; include is a list of extensions (empty: every supported type). ${PATH_RULES}`,
      tags,
      body: CreateConnectorBody,
      response: { 201: ConnectorView },
    },
  }, async (request, reply) => {
    const connector = await app.connectors.create(request.body);
    request.log.info({ event: 'connector.create', connector: connector.id, by: app.logPrivacy.caller(request) }, 'connector created');
    return reply.code(201).send(toConnectorView(connector));
  });

  app.post('/api/connectors/sync-all', {
    config: editor,
    schema: {
      summary: 'Scan every enabled connector',
      description: 'Answers 202 with one scan job per enabled connector the caller may see (none when there is none); the jobs run one after another. A connector restricted to groups the caller is not in (ENTERPRISE) is neither scanned nor named, whatever the role.',
      tags,
      response: { 202: SyncAllResult },
    },
  }, async (request, reply) => {
    const jobs = await app.connectors.syncAll(await app.groups.callerGroups(request));
    request.log.info({ event: 'sync.all', jobs: jobs.length, by: app.logPrivacy.caller(request) }, 'sync of all connectors started');
    await app.audit.record(request, { event: 'sync.all', target: 'connectors', details: { jobs: jobs.map((job) => job.id) } });
    return reply.code(202).send({ jobs });
  });

  app.get('/api/connectors/:id', {
    config: viewer,
    schema: { summary: 'Get a connector', tags, params: ConnectorIdParams, response: { 200: ConnectorView } },
  }, async (request) => toConnectorView(await app.connectors.get(request.params.id, await app.groups.callerGroups(request))));

  app.put('/api/connectors/:id', {
    config: admin,
    schema: {
      summary: 'Update a connector',
      description: `Any non-empty subset of the create fields; a new path, include or recursive takes effect at the next scan, which removes the documents no longer selected. ${PATH_RULES}`,
      tags,
      params: ConnectorIdParams,
      body: UpdateConnectorBody,
      response: { 200: ConnectorView },
    },
  }, async (request) => {
    const connector = await app.connectors.update(request.params.id, request.body, await app.groups.callerGroups(request));
    request.log.info({ event: 'connector.update', connector: connector.id, by: app.logPrivacy.caller(request) }, 'connector updated');
    return toConnectorView(connector);
  });

  app.delete('/api/connectors/:id', {
    config: admin,
    schema: {
      summary: 'Delete a connector and its documents',
      description: 'Also removes the connector’s documents from the index (chunks and vectors) and stops a scan of it in progress. The files in its folder are not touched.',
      tags,
      params: ConnectorIdParams,
      response: { 204: Type.Null() },
    },
  }, async (request, reply) => {
    const { documentsRemoved } = await app.connectors.delete(request.params.id, await app.groups.callerGroups(request));
    request.log.info({ event: 'connector.delete', connector: request.params.id, documents: documentsRemoved, by: app.logPrivacy.caller(request) }, 'connector deleted');
    return reply.code(204).send(null);
  });

  app.post('/api/connectors/:id/scan', {
    config: editor,
    schema: {
      summary: 'Scan a connector',
      description:
        'Answers 202 with the scan job. The job registers new and changed files, skips unchanged ones by content hash, removes documents whose file ' +
        'is gone, and indexes the changed ones before it succeeds. Links leading outside CONNECTOR_ALLOWED_PATHS are skipped, never read. ' +
        '409 connector_disabled for a disabled connector.',
      tags,
      params: ConnectorIdParams,
      response: { 202: JobView },
    },
  }, async (request, reply) => {
    const job = await app.connectors.scan(request.params.id, await app.groups.callerGroups(request));
    request.log.info({ event: 'connector.scan', connector: request.params.id, job: job.id, by: app.logPrivacy.caller(request) }, 'connector scan started');
    return reply.code(202).send(job);
  });
};
