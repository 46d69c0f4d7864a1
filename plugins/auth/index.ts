import fp from 'fastify-plugin';
import { LoginThrottle } from './login-throttle.js';
import { RefreshCookie } from './refresh-cookie.js';
import { authRoutes } from './routes.js';
import { AuthService } from './service.js';

// The auth plugin's public surface: what the second factor and OIDC plugins may import.
export type { AuthService, MfaChallenge, SecondFactorGate } from './service.js';
export { SecondFactorThrottle } from './login-throttle.js';
export { TokenPairView } from './schemas.js';

declare module 'fastify' {
  interface FastifyInstance {
    auth: AuthService;
    /** The web UI's refresh token as an HttpOnly cookie (login, second factor, OIDC handoff, refresh, logout). */
    refreshCookie: RefreshCookie;
  }
}

/** Password login, refresh, sign-out, the caller's own account, and the runtime token lifetimes. */
export default fp(
  async function auth(app) {
    app.decorate('auth', new AuthService(app.users, app.sessions, new LoginThrottle()));
    app.decorate('refreshCookie', new RefreshCookie(app.config.tls.enabled));
    await app.register(authRoutes);
  },
  { name: 'auth', dependencies: ['users', 'sessions'] },
);
