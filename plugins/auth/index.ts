import fp from 'fastify-plugin';
import { UsersRepository } from '../users/repository.js';
import { LoginThrottle } from './login-throttle.js';
import { authRoutes } from './routes.js';
import { AuthService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    auth: AuthService;
  }
}

/** Password login, refresh, the caller's own account, and the runtime token lifetimes. */
export default fp(
  async function auth(app) {
    app.decorate('auth', new AuthService(app.users, new UsersRepository(app.db), app.sessions, new LoginThrottle()));
    await app.register(authRoutes);
  },
  { name: 'auth', dependencies: ['users', 'sessions'] },
);
