import fp from 'fastify-plugin';
import { ConversationsRepository } from './repository.js';
import { conversationsRoutes } from './routes.js';
import { ConversationsService } from './service.js';

// The conversations' public surface: what the chat may import.
export type { ConversationsService, PastTurn } from './service.js';
export { ANSWER_MODES, SourceView, type AnswerMode } from './schemas.js';

declare module 'fastify' {
  interface FastifyInstance {
    conversations: ConversationsService;
  }
}

const SWEEP_INTERVAL_MS = 24 * 60 * 60 * 1000;

/** Chat history: stored turns, GET /api/conversations[/{id}], the turn cap and the daily age purge. */
export default fp(
  async function conversations(app) {
    const service = new ConversationsService(new ConversationsRepository(app.db), app.settings);
    app.decorate('conversations', service);
    await app.register(conversationsRoutes);

    if (!app.config.jobs.retentionSweepsEnabled) return;
    const sweep = () =>
      service
        .purgeExpired()
        .then((purged) => purged && app.log.info({ event: 'conversations.purge', purged }, 'old conversations purged'))
        .catch((err) => app.log.error({ err }, 'conversation purge failed'));
    // Also once at boot, so a box restarted more often than daily still purges.
    app.addHook('onReady', async () => {
      await sweep();
    });
    const timer = setInterval(sweep, SWEEP_INTERVAL_MS);
    timer.unref();
    app.addHook('onClose', async () => clearInterval(timer));
  },
  { name: 'conversations', dependencies: ['hearth-guard', 'users', 'groups'] },
);
