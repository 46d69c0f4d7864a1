import fp from 'fastify-plugin';
import { GroupsRepository } from './repository.js';
import { groupsRoutes } from './routes.js';
import { GroupsService } from './service.js';

// Groups' public surface: what other plugins may import.
export { EVERYONE, type GroupsService } from './service.js';
export { readableBy, readableRow } from './readable.js';

declare module 'fastify' {
  interface FastifyInstance {
    groups: GroupsService;
  }
}

/** Groups, memberships and the allowed groups of documents and sources (ENTERPRISE). */
export default fp(
  async function groups(app) {
    const service = new GroupsService(new GroupsRepository(app.db), app.entitlement);
    // A cached identity carries the user's groups: drop it when they change.
    service.onMembershipChange((userId) => app.sessions.forget(userId));
    app.decorate('groups', service);
    await app.register(groupsRoutes);
  },
  { name: 'groups', dependencies: ['hearth-guard', 'audit', 'users', 'sessions'] },
);
