import { assertPasswordPolicy, burnPasswordCheck, verifyPassword } from '../../core/auth/passwords.js';
import { HttpError, badRequest } from '../../core/errors.js';
import type { SessionService, TokenPair } from '../sessions/index.js';
import type { UserRow, UsersService } from '../users/index.js';
import type { LoginThrottle } from './login-throttle.js';

const INVALID_CREDENTIALS = 'Invalid username or password';

/** Step one of a two-step login: no tokens, only a short-lived mfa_token for the second step. */
export interface MfaChallenge {
  status: 'mfa_required';
  mfa_token: string;
}

/** A second step after the password (TOTP); the mfa plugin implements it, so auth never imports mfa. */
export interface SecondFactorGate {
  /** A challenge when the user must prove a second factor before any token is issued, else undefined. */
  challenge(user: UserRow): Promise<MfaChallenge | undefined>;
}

/** Password login and password change; the same answer and the same work for every kind of failure. */
export class AuthService {
  constructor(
    private readonly users: UsersService,
    private readonly sessions: SessionService,
    private readonly throttle: LoginThrottle,
  ) {}

  /** Checks a username and password, or throws 401 (or 429 when throttled). */
  async verifyCredentials(username: string, password: string, address: string): Promise<UserRow> {
    await this.throttle.assertAllowed(username, address);
    const user = await this.users.findByUsername(username);
    const ok = user?.hashed_password ? await verifyPassword(user.hashed_password, password) : await burnPasswordCheck(password);
    if (!user || !ok) {
      await this.throttle.failed(username, address);
      throw new HttpError(401, 'invalid_credentials', INVALID_CREDENTIALS);
    }
    await this.throttle.succeeded(username, address);
    return user;
  }

  private secondFactor: SecondFactorGate | undefined;

  /** Installed by the mfa plugin at boot. */
  useSecondFactor(gate: SecondFactorGate): void {
    this.secondFactor = gate;
  }

  async login(username: string, password: string, address: string): Promise<TokenPair | MfaChallenge> {
    const user = await this.verifyCredentials(username, password, address);
    return (await this.secondFactor?.challenge(user)) ?? this.sessions.start(user);
  }

  /**
   * Changes the caller's own password after checking the current one; every other session of
   * theirs ends, and the caller gets a fresh pair so this client stays signed in.
   */
  async changePassword(userId: string, currentPassword: string, newPassword: string, address: string): Promise<TokenPair> {
    const user = await this.users.get(userId);
    if (!user.hashed_password) throw badRequest('oidc_user', 'This account signs in through an identity provider and has no password');
    // Guesses at the current password through a stolen token are throttled like logins.
    await this.throttle.assertAllowed(user.username, address);
    if (!(await verifyPassword(user.hashed_password, currentPassword))) {
      await this.throttle.failed(user.username, address);
      throw badRequest('wrong_password', 'The current password is wrong', 'body.current_password');
    }
    if (currentPassword === newPassword) throw badRequest('password_unchanged', 'The new password must differ from the current one', 'body.new_password');
    assertPasswordPolicy(newPassword, user.username, 'body.new_password');
    await this.users.update(userId, { password: newPassword });
    return this.sessions.start(user);
  }
}
