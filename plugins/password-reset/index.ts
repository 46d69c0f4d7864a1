import fp from 'fastify-plugin';
import { emailSender } from './mailer.js';
import { PasswordResetRepository } from './repository.js';
import { passwordResetRoutes } from './routes.js';
import { PasswordResetService, RESET_TOKEN_MINUTES, resetLinkBase } from './service.js';

// The public surface: what other plugins may import.
export type { PasswordResetService } from './service.js';

declare module 'fastify' {
  interface FastifyInstance {
    passwordReset: PasswordResetService;
  }
}

/** Forgot/reset password by email (all tiers): hashed single-use tokens, mailed by EMAIL_PROVIDER. */
export default fp(
  async function passwordReset(app) {
    const log = app.log.child({ plugin: 'password-reset' });
    const sender = emailSender(app.config, RESET_TOKEN_MINUTES, log, app.logPrivacy);
    // SMTP without PUBLIC_URL or SERVER_NAME is refused by loadConfig; only the console provider gets here without one.
    const linkBase = resetLinkBase(app.config);
    if (!linkBase) log.warn('PUBLIC_URL is not set: password reset links are logged as a path (/reset-password?token=…); open it on this server\'s address, or set PUBLIC_URL');
    const service = new PasswordResetService(new PasswordResetRepository(app.db), app.users, sender, log, app.logPrivacy, linkBase);
    app.decorate('passwordReset', service);
    await app.register(passwordResetRoutes);

    // Mails already queued go out before the database closes.
    app.addHook('onClose', async () => {
      await service.idle();
      sender.close();
    });
  },
  { name: 'password-reset', dependencies: ['users', 'sessions', '@fastify/rate-limit'] },
);
