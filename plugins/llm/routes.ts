import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { ModelInfoView } from './schemas.js';

export const llmRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/api/model-info', {
    config: { access: { role: 'viewer' } },
    schema: { summary: 'The chat and embedding models in use', tags: ['models'], response: { 200: ModelInfoView } },
  }, async (): Promise<ModelInfoView> => {
    const embedder = app.activeEmbedding.embedder();
    return {
      chat: app.generator?.info() ?? null,
      embedding: embedder ? { model_id: embedder.modelId, dimension: embedder.dimension, device: embedder.device, max_tokens: embedder.maxTokens } : null,
      // Absent when HEARTH_DEFAULT_EMBEDDER=off.
      default_embedder: app.defaultEmbedder && app.defaultEmbedder.state !== 'off' ? { state: app.defaultEmbedder.state, detail: app.defaultEmbedder.detail } : undefined,
      mode: {
        search: embedder && app.activeEmbedding.vectors() ? 'hybrid' : 'keyword',
        answers: app.generator ? 'generative' : 'extractive',
      },
    };
  });
};
