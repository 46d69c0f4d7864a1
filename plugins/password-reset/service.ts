import { randomBytes, randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { assertPasswordPolicy } from '../../core/auth/passwords.js';
import { clock } from '../../core/clock.js';
import type { Config } from '../../core/config.js';
import { badRequest } from '../../core/errors.js';
import { httpsOrigin } from '../../core/tls.js';
import type { LogPrivacy } from '../../core/logger.js';
import type { UserRow, UsersService } from '../users/index.js';
import type { EmailSender } from './mailer.js';
import type { PasswordResetRepository } from './repository.js';
import { digestSecret } from '../../core/crypto/secret-digest.js';

export const RESET_TOKEN_MINUTES = 30;
const RESET_TOKEN_BYTES = 32;
/** Reset mails waiting to go out; beyond this a request is dropped rather than queueing without bound. */
const MAX_PENDING = 100;

const hashResetToken = digestSecret;

/**
 * Where the web UI lives, for the link: PUBLIC_URL, else https://SERVER_NAME with TLS, else ''
 * (the link is then a bare path). Never the request's Host or X-Forwarded-Host: a forged one
 * would mail the victim a link that hands the token to the forger.
 */
export function resetLinkBase(config: Config): string {
  if (config.publicUrl) return config.publicUrl;
  if (config.tls.enabled && config.tls.serverName) return httpsOrigin(config, config.port);
  return '';
}

/** Only accounts that sign in with a local password can reset it (rule 11). */
const hasLocalPassword = (user: UserRow) => user.auth_source === 'local' && user.hashed_password !== null;

/** A delivery failure for the log: SMTP replies can quote the recipient, which stays out. */
const describeFailure = (error: Error & { code?: string }) => ({ code: error.code, message: error.message.replace(/[^\s<>"']+@[^\s<>"']+/g, '[address]') });

const invalidToken = () => badRequest('reset_token_invalid', 'This reset link is invalid, expired or already used; request a new one', 'body.token');

/**
 * A link mailed before an email or password change, a role change or a sign-out of every session
 * must not outlive it (the old mailbox may be the reason for the change).
 */
function changedSince(user: { updated_at: number; tokens_valid_after: number }, issuedAt: number): boolean {
  return user.updated_at > issuedAt || user.tokens_valid_after > issuedAt;
}

/**
 * Forgot/reset password. Issuing runs off the response path, so an address that matches an account
 * answers exactly like one that does not, in body and in time.
 */
export class PasswordResetService {
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly repository: PasswordResetRepository,
    private readonly users: UsersService,
    private readonly sender: EmailSender,
    private readonly log: FastifyBaseLogger,
    private readonly privacy: LogPrivacy,
    /** From resetLinkBase: an origin (and path) from configuration, or '' for a bare path. */
    private readonly linkBase: string,
  ) {}

  /** Queues the lookup and the mail and returns at once. */
  requestReset(email: string): void {
    if (this.pending.size >= MAX_PENDING) {
      this.log.warn({ event: 'password_reset.dropped' }, 'password reset request dropped: too many mails pending');
      return;
    }
    // Started on the next turn of the event loop, after the answer has been written.
    const job = new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => this.sendResetLinks(email))
      .catch((error: Error & { code?: string }) => this.log.error({ event: 'password_reset.send_failed', err: describeFailure(error) }, 'password reset mail failed'))
      .finally(() => this.pending.delete(job));
    this.pending.add(job);
  }

  /** Resolves once every queued reset mail has been handled (shutdown, tests). */
  async idle(): Promise<void> {
    while (this.pending.size) await Promise.all([...this.pending]);
  }

  /** Sets the new password with a valid token, spends the token and ends the user's sessions. */
  async reset(token: string, newPassword: string): Promise<void> {
    const row = await this.repository.findUsable(hashResetToken(token), clock.now());
    const user = row && (await this.users.find(row.user_id));
    if (!row || !user || !hasLocalPassword(user) || changedSince(user, row.created_at)) throw invalidToken();
    // Checked before the token is spent, so a rejected password leaves the link usable.
    assertPasswordPolicy(newPassword, user.username, 'body.new_password');
    if (!(await this.repository.consume(row.id, clock.now()))) throw invalidToken();
    // The users service hashes, stores and tells the sessions plugin, which revokes the user's sessions.
    await this.users.update(user.id, { password: newPassword });
    this.log.info({ event: 'password_reset.completed', user: this.privacy.user(user.id) }, 'password reset completed');
  }

  private async sendResetLinks(email: string): Promise<void> {
    const accounts = (await this.users.listByEmail(email)).filter(hasLocalPassword);
    for (const user of accounts) {
      const token = randomBytes(RESET_TOKEN_BYTES).toString('base64url');
      const now = clock.now();
      const expiresAt = now + RESET_TOKEN_MINUTES * 60_000;
      await this.repository.issue({ id: randomUUID(), userId: user.id, tokenHash: hashResetToken(token), now, expiresAt });
      const link = `${this.linkBase}/reset-password?token=${encodeURIComponent(token)}`;
      await this.sender.sendResetLink({ to: user.email!, username: user.username, link, expiresAt: new Date(expiresAt) });
      this.log.info({ event: 'password_reset.sent', user: this.privacy.user(user.id) }, 'password reset link sent');
    }
  }
}
