import type { FastifyInstance } from 'fastify';
import { verifyPassword } from '../../core/auth/passwords.js';
import { DOCUMENTED_DEFAULT_ADMIN_PASSWORD } from '../../core/config.js';

const REMINDER_INTERVAL_MS = 60 * 60 * 1000;

async function defaultPasswordInUse(app: FastifyInstance): Promise<boolean> {
  const admin = await app.users.findByUsername(app.config.defaultAdmin.username);
  return !!admin?.hashed_password && (await verifyPassword(admin.hashed_password, DOCUMENTED_DEFAULT_ADMIN_PASSWORD));
}

/** Creates the first admin, and nags in the log (at boot, then hourly) while the documented default password still opens it. */
export async function bootstrapDefaultAdmin(app: FastifyInstance): Promise<void> {
  if (await app.users.ensureDefaultAdmin(app.config.defaultAdmin)) {
    app.log.info({ user: app.logPrivacy.user(app.config.defaultAdmin.username) }, 'created the default admin account (DEFAULT_ADMIN_USER)');
  }
  const warn = async () => {
    if (!(await defaultPasswordInUse(app))) return false;
    app.log.warn(
      'SECURITY WARNING: the default admin account (DEFAULT_ADMIN_USER) still uses the documented default password. ' +
        'Change it (PUT /api/auth/password) before exposing this service on a network.',
    );
    return true;
  };
  if (!(await warn())) return;
  const timer = setInterval(() => {
    warn().then((stillDefault) => stillDefault || clearInterval(timer), () => undefined);
  }, REMINDER_INTERVAL_MS);
  timer.unref();
  app.addHook('onClose', async () => clearInterval(timer));
}
