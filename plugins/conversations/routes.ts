import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import { principalOf } from '../../core/auth/guard.js';
import { ConversationIdParams, ConversationList, ConversationView, ListConversationsQuery } from './schemas.js';

const viewer = { access: { role: 'viewer' as const } };
const OWN_ONLY = 'Only the caller\'s own conversations: admins too see only theirs (history holds private questions).';

export const conversationsRoutes: FastifyPluginAsyncTypebox = async (app) => {
  app.get('/api/conversations', {
    config: viewer,
    schema: { summary: 'List conversations', description: `${OWN_ONLY} Most recent activity first.`, tags: ['chat'], querystring: ListConversationsQuery, response: { 200: ConversationList } },
  }, async (request) => app.conversations.list(principalOf(request).id, request.query.limit, request.query.offset));

  app.get('/api/conversations/:id', {
    config: viewer,
    schema: { summary: 'Get a conversation', description: `${OWN_ONLY} Someone else's id is a 404.`, tags: ['chat'], params: ConversationIdParams, response: { 200: ConversationView } },
  }, async (request) => {
    const { id } = principalOf(request);
    return app.conversations.get(id, await app.groups.readerGroups(id), request.params.id);
  });
};
