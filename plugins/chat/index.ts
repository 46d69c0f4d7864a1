import fp from 'fastify-plugin';
import type { DocumentsService } from '../documents/index.js';
import type { FilterHook } from './service.js';
import { chatRoutes } from './routes.js';
import { ChatService } from './service.js';

// The public surface: what other plugins may import.
export type { ChatService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    chat: ChatService;
  }
}

/** A question naming a file ("in budget-2023.pdf") searches that file; a name that matches none does not restrict. */
function filenameFilter(documents: DocumentsService): FilterHook {
  return async (hints) => {
    const ids = await documents.idsByFilenames(hints.filenames);
    return ids.length ? { document_ids: ids } : null;
  };
}

/**
 * POST /api/chat: grounded answers with sources, as JSON or a stream. The chat model is app.generator
 * (the 'llm' plugin); null means none is installed and the answers are extractive.
 */
export default fp(
  async function chat(app) {
    const service = new ChatService({
      retrieval: app.retrieval,
      conversations: app.conversations,
      // Read per request, not captured at boot: the model in force is whatever app.generator holds now.
      generator: () => app.generator,
      embedder: () => app.activeEmbedding.embedder(),
      settings: app.settings,
      logPrivacy: app.logPrivacy,
      classifierLlm: { enabled: app.config.llm.classifierLlmEnabled, maxTokens: app.config.llm.classifierLlmMaxTokens },
      softMatchChunks: app.config.softMatch.chat,
    });
    service.addFilterHook(filenameFilter(app.documents));
    app.decorate('chat', service);
    await app.register(chatRoutes);
  },
  { name: 'chat', dependencies: ['hearth-guard', 'llm', 'search-index', 'retrieval', 'conversations', 'documents'] },
);
