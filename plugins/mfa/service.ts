import { randomBytes } from 'node:crypto';
import { clock } from '../../core/clock.js';
import type { SecretBox } from '../../core/crypto/secret-box.js';
import { HttpError, badRequest, conflict } from '../../core/errors.js';
import type { MfaChallenge, SecondFactorGate, SecondFactorThrottle } from '../auth/index.js';
import type { SessionService, TokenPair } from '../sessions/index.js';
import type { UserRow, UsersService } from '../users/index.js';
import { RECOVERY_CODE_COUNT, hashRecoveryCode, newRecoveryCode, recoveryCodeMatches } from './recovery-code.js';
import type { MfaRepository, TotpRow } from './repository.js';
import { newTotpSecret, totpCodeStep, totpQrCode } from './totp-code.js';
import { digestSecret } from '../../core/crypto/secret-digest.js';

const MFA_TOKEN_LIFETIME_MS = 5 * 60 * 1000;
const MFA_MAX_ATTEMPTS = 5;
/** Spent and expired MFA tokens are kept a day, so a late retry still gets a precise answer. */
const MFA_TOKEN_RETENTION_MS = 24 * 60 * 60 * 1000;
const LOG_IN_AGAIN = 'log in again (POST /api/auth/login)';

const TOTP_CODE = /^[0-9]{6}$/;
const mfaTokenId = digestSecret;
export const totpContext = (userId: string) => `totp:${userId}`;
/** 401 without WWW-Authenticate: the client has no bearer token to fix, it must start the login over. */
const loginAgain = (code: string, why: string) => new HttpError(401, code, `${why}; ${LOG_IN_AGAIN}`);

/**
 * The TOTP second factor: enrolment, disabling, and the second login step. It is the auth plugin's
 * SecondFactorGate, so an enrolled account never gets tokens from the password alone.
 */
export class MfaService implements SecondFactorGate {
  constructor(
    private readonly repository: MfaRepository,
    private readonly secretBox: SecretBox,
    private readonly sessions: SessionService,
    private readonly users: UsersService,
    /** Its own counters: a correct password must not reset the count of wrong codes. */
    private readonly throttle: SecondFactorThrottle,
  ) {}

  /** Asked for every successful password login, whatever the plan: a lapsed licence must not weaken login. */
  async challenge(user: UserRow): Promise<MfaChallenge | undefined> {
    if ((await this.repository.findTotp(user.id))?.state !== 'enrolled') return undefined;
    const token = randomBytes(32).toString('base64url');
    const now = clock.now();
    await this.repository.pruneMfaTokens(now - MFA_TOKEN_RETENTION_MS);
    await this.repository.insertMfaToken(mfaTokenId(token), user.id, now);
    return { status: 'mfa_required', mfa_token: token };
  }

  /** not enrolled (or pending) → pending, with a fresh secret; enrolled stays enrolled (409). */
  async enroll(user: { id: string; username: string }): Promise<{ qr_code: string; secret: string }> {
    const secret = newTotpSecret();
    if (!(await this.repository.startEnrolment(user.id, this.secretBox.seal(secret, totpContext(user.id)), clock.now()))) {
      throw conflict('totp_already_enrolled', 'TOTP is already enrolled on this account; disable it first to enrol again');
    }
    return { qr_code: await totpQrCode(secret, user.username), secret };
  }

  /** pending → enrolled on the first valid code; returns the recovery codes, shown this once. */
  async confirm(userId: string, code: string, address: string): Promise<string[]> {
    await this.throttle.assertAllowed(userId, address);
    const totp = await this.repository.findTotp(userId);
    if (totp?.state !== 'pending') {
      throw totp
        ? conflict('totp_already_enrolled', 'TOTP is already enrolled on this account')
        : conflict('totp_not_pending', 'No enrolment is pending; start one with POST /api/auth/totp/enroll');
    }
    const step = await totpCodeStep(this.secretOf(totp), code, null);
    if (step === null) {
      await this.throttle.failed(userId, address);
      throw badRequest('invalid_totp_code', 'The code does not match the secret being enrolled', 'body.totp_code');
    }
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, newRecoveryCode);
    const hashes = await Promise.all(codes.map(hashRecoveryCode));
    if (!(await this.repository.completeEnrolment(userId, totp.secret_sealed, step, hashes, clock.now()))) {
      throw conflict('totp_not_pending', 'The enrolment changed meanwhile; start again with POST /api/auth/totp/enroll');
    }
    this.sessions.forget(userId);
    await this.throttle.succeeded(userId);
    return codes;
  }

  /** enrolled → not enrolled, for the account's own user with a valid, unused TOTP code. */
  async disable(userId: string, code: string, address: string): Promise<void> {
    await this.throttle.assertAllowed(userId, address);
    const totp = await this.repository.findTotp(userId);
    if (totp?.state !== 'enrolled') throw conflict('totp_not_enrolled', 'TOTP is not enrolled on this account');
    if (!(await this.acceptTotpCode(totp, code))) {
      await this.throttle.failed(userId, address);
      throw badRequest('invalid_totp_code', 'The code is wrong or was already used', 'body.totp_code');
    }
    await this.repository.clear(userId);
    this.sessions.forget(userId);
  }

  /** An admin clears any user's TOTP (pending or enrolled); 404 for an unknown user. */
  async clear(userId: string): Promise<void> {
    await this.users.get(userId);
    await this.repository.clear(userId);
    this.sessions.forget(userId);
  }

  /** The second login step: valid → consumed on a right code, attempts+1 on a wrong one, invalidated at the 5th. */
  async completeLogin(mfaToken: string, code: string, address: string): Promise<{ userId: string; pair: TokenPair }> {
    const id = mfaTokenId(mfaToken);
    const token = await this.repository.findMfaToken(id);
    await this.throttle.assertAllowed(token?.user_id ?? null, address);
    if (!token || token.state === 'consumed') {
      await this.throttle.failed(null, address);
      throw loginAgain('mfa_token_invalid', 'This MFA token is unknown or was already used');
    }
    if (token.state === 'invalidated') throw loginAgain('mfa_token_locked', `This MFA token is locked after ${MFA_MAX_ATTEMPTS} wrong codes`);
    const notBefore = clock.now() - MFA_TOKEN_LIFETIME_MS;
    if (token.created_at <= notBefore) throw loginAgain('mfa_token_expired', 'This MFA token expired (it lasts 5 minutes)');

    if (!(await this.acceptSecondFactor(token.user_id, code))) {
      await this.throttle.failed(token.user_id, address);
      const after = await this.repository.failMfaToken(id, MFA_MAX_ATTEMPTS);
      if (after?.state !== 'valid') throw loginAgain('mfa_token_locked', `${MFA_MAX_ATTEMPTS} wrong codes locked this MFA token`);
      const left = MFA_MAX_ATTEMPTS - after.attempts;
      throw new HttpError(401, 'invalid_mfa_code', `The code is wrong or was already used (${left} attempt${left === 1 ? '' : 's'} left)`, 'body.totp_code');
    }
    // Conditional: of two requests racing with the same token, only one gets tokens.
    if (!(await this.repository.consumeMfaToken(id, notBefore))) throw loginAgain('mfa_token_invalid', 'This MFA token was already used');
    await this.throttle.succeeded(token.user_id);
    return { userId: token.user_id, pair: await this.sessions.start(await this.users.get(token.user_id)) };
  }

  /** A 6-digit TOTP code, or an unused recovery code (spent at once). */
  private async acceptSecondFactor(userId: string, code: string): Promise<boolean> {
    const totp = await this.repository.findTotp(userId);
    if (totp?.state !== 'enrolled') return false;
    if (TOTP_CODE.test(code)) return this.acceptTotpCode(totp, code);
    const unused = await this.repository.unusedRecoveryCodes(userId);
    // Every stored hash is checked, matched or not, so the time taken does not tell which one matched.
    const matches = await Promise.all(unused.map((stored) => recoveryCodeMatches(code, stored.code_hash)));
    const match = unused[matches.indexOf(true)];
    return !!match && this.repository.useRecoveryCode(match.id, clock.now());
  }

  /** Right for now (±1 step) and of a later step than the last accepted code: no replay inside its window. */
  private async acceptTotpCode(totp: TotpRow, code: string): Promise<boolean> {
    const step = await totpCodeStep(this.secretOf(totp), code, totp.last_used_step);
    return step !== null && this.repository.claimStep(totp.user_id, step);
  }

  private secretOf(totp: TotpRow): string {
    return this.secretBox.open(totp.secret_sealed, totpContext(totp.user_id));
  }
}
