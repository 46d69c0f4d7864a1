import fp from 'fastify-plugin';
import { UsersRepository } from './repository.js';
import { usersRoutes } from './routes.js';
import { UsersService } from './service.js';
import { bootstrapDefaultAdmin } from './default-admin.js';

// The users' public surface: what other plugins may import.
export { UsersService, toUserView, type UserChangeListener } from './service.js';
// For the hearth CLI, which opens the service's state without the app (appliance/cli/service-state.ts).
export { UsersRepository } from './repository.js';
export type { UserProfileRow, UserRow, UserViewRow } from './repository.js';
export { EmailSchema, PasswordSchema, UserIdParams, UserView } from './schemas.js';

declare module 'fastify' {
  interface FastifyInstance {
    users: UsersService;
  }
}

/** Users and roles: the repository, the rules, and the admin CRUD under /api/auth/users. */
export default fp(
  async function users(app) {
    const repository = new UsersRepository(app.db);
    // One user, one anon id in the logs, whether a line names them by username or by id.
    app.logPrivacy.useUserDirectory((key) => repository.idNow(key));
    // The sessions plugin, registered after this one, subscribes to users' changes (UsersService.onChange).
    app.decorate('users', new UsersService(repository, { requireEmail: app.config.authRequireEmail }));
    await bootstrapDefaultAdmin(app);
    await app.register(usersRoutes);
  },
  { name: 'users', dependencies: ['hearth-guard'] },
);
