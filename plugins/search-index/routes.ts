import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { conflict } from '../../core/errors.js';
import { JobView } from '../jobs/index.js';
import type { CorpusAdaptation } from './corpus-adaptation/index.js';

const IndexStatsView = Type.Object({
  chunks: Type.Integer({ description: 'Chunks of the documents the caller\'s groups may read' }),
  vectors: Type.Integer({ description: 'Of those, the chunks with a vector of the model in force' }),
  dimension: Type.Union([Type.Integer(), Type.Null()]),
  model_id: Type.Union([Type.String(), Type.Null()]),
  device: Type.Union([Type.String(), Type.Null()]),
  stale_chunks: Type.Integer({ description: 'Of those, the chunks with no vector of the model in force (found by keywords only until embedded)' }),
  database_bytes: Type.Integer({ description: 'The database file on disk (all documents)' }),
  vectors_bytes: Type.Integer({ description: 'The vector index on disk (all documents)' }),
  last_rebuild_at: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  corpus_adaptation: Type.Object(
    {
      state: Type.Union([Type.Literal('off'), Type.Literal('waiting'), Type.Literal('adapting'), Type.Literal('in_force'), Type.Literal('failed')]),
      detail: Type.String(),
    },
    { description: 'The static embedder adapted to the collection (EMBED_ADAPT): off (EMBED_ADAPT=off, no model in force, or not a static one), waiting (chunks outside EMBED_ADAPT_MIN/MAX_CHUNKS, the collection changing, jobs running, too few distinct words, not checked yet), adapting, in_force, failed; detail says which' },
  ),
});

export const indexRoutes: FastifyPluginAsyncTypebox<{ adaptation: CorpusAdaptation }> = async (app, { adaptation }) => {
  app.get('/api/index/stats', {
    config: { access: { role: 'viewer' } },
    schema: {
      summary: 'Vector and keyword index statistics',
      description: 'Chunk and vector counts cover the documents the caller\'s groups may read; the model and the sizes on disk are the box\'s.',
      tags: ['index'],
      response: { 200: IndexStatsView },
    },
  }, async (request) => ({ ...(await app.indexAdmin.stats(await app.groups.callerGroups(request))), corpus_adaptation: adaptation.current() }));

  app.post('/api/index/rebuild', {
    config: { access: { role: 'editor' } },
    schema: {
      summary: 'Rebuild the vector index from the database',
      description: 'A background job (202). Search keeps answering from the current index until the new one is complete. 409 without an embedding model.',
      tags: ['index'],
      response: { 202: JobView },
    },
  }, async (request, reply) => {
    if (!app.activeEmbedding.embedder()) throw conflict('embedder_unavailable', 'No embedding model is installed: there are no vectors to rebuild (npm run models -- pull, or import)');
    const job = await app.indexAdmin.rebuild();
    request.log.info({ user: app.logPrivacy.caller(request), job: job.id }, 'index rebuild started');
    return reply.code(202).send(job);
  });
};
