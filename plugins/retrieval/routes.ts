import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { SearchBody, SearchResponseSchema } from './schemas.js';
import { SEARCH_PER_DOCUMENT } from './service.js';

export const retrievalRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.post('/api/search', {
    config: { access: { role: 'viewer' } },
    schema: {
      summary: 'Search the indexed documents (hybrid, vector or keyword)',
      description: 'Without an embedding model, hybrid runs on keywords alone (retrieval_settings.mode_used says so) and vector answers 409 embedder_unavailable.',
      tags: ['search'],
      body: SearchBody,
      response: { 200: SearchResponseSchema },
    },
  }, async (request) => {
    const started = performance.now();
    const groups = await app.groups.callerGroups(request);
    const { per_document: perDocument = SEARCH_PER_DOCUMENT, ...body } = request.body;
    const response = await app.retrieval.search({ ...body, perDocument, groups });
    request.log.debug(
      { event: 'search', query: app.logPrivacy.query(request.body.query), mode: response.retrieval_settings.mode_used, results: response.results.length, ms: performance.now() - started },
      'search',
    );
    return response;
  });
};
