import type { Selectable } from 'kysely';
import type { Db } from '../../core/db/database.js';
import type { MfaTokensTable, TotpTable } from '../../core/db/schema.js';

export type TotpRow = Selectable<TotpTable>;
type MfaTokenRow = Selectable<MfaTokensTable>;

/**
 * TOTP enrolment, recovery codes and MFA tokens. Every state change is a conditional update, so two
 * concurrent requests cannot both spend the same code, step or token.
 */
export class MfaRepository {
  constructor(private readonly db: Db) {}

  findTotp(userId: string): Promise<TotpRow | undefined> {
    return this.db.selectFrom('totp').selectAll().where('user_id', '=', userId).executeTakeFirst();
  }

  /** Starts (or restarts) a pending enrolment; refuses to touch an enrolled one. */
  async startEnrolment(userId: string, secretSealed: string, now: number): Promise<boolean> {
    const result = await this.db
      .insertInto('totp')
      .values({ user_id: userId, secret_sealed: secretSealed, state: 'pending', last_used_step: null, created_at: now, enrolled_at: null })
      .onConflict((oc) =>
        oc.column('user_id').doUpdateSet({ secret_sealed: secretSealed, last_used_step: null, created_at: now }).where('totp.state', '=', 'pending'),
      )
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0n) === 1;
  }

  /** Pending → enrolled with a fresh set of recovery codes, in one transaction; only for the secret the code was checked against. */
  async completeEnrolment(userId: string, secretSealed: string, step: number, codeHashes: { id: string; hash: string }[], now: number): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const updated = await trx
        .updateTable('totp')
        .set({ state: 'enrolled', enrolled_at: now, last_used_step: step })
        .where('user_id', '=', userId)
        .where('state', '=', 'pending')
        .where('secret_sealed', '=', secretSealed)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) !== 1) return false;
      await trx.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
      await trx
        .insertInto('recovery_codes')
        .values(codeHashes.map(({ id, hash }) => ({ id, user_id: userId, code_hash: hash, used_at: null })))
        .execute();
      return true;
    });
  }

  /** Records an accepted step; false when that step (or a later one) was already used. */
  async claimStep(userId: string, step: number): Promise<boolean> {
    const result = await this.db
      .updateTable('totp')
      .set({ last_used_step: step })
      .where('user_id', '=', userId)
      .where((eb) => eb.or([eb('last_used_step', 'is', null), eb('last_used_step', '<', step)]))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Not enrolled any more: the secret, the recovery codes and any MFA token in flight go. */
  async clear(userId: string): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('totp').where('user_id', '=', userId).execute();
      await trx.deleteFrom('recovery_codes').where('user_id', '=', userId).execute();
      await trx.deleteFrom('mfa_tokens').where('user_id', '=', userId).execute();
    });
  }

  unusedRecoveryCodes(userId: string): Promise<{ id: string; code_hash: string }[]> {
    return this.db.selectFrom('recovery_codes').select(['id', 'code_hash']).where('user_id', '=', userId).where('used_at', 'is', null).execute();
  }

  async useRecoveryCode(id: string, now: number): Promise<boolean> {
    const result = await this.db.updateTable('recovery_codes').set({ used_at: now }).where('id', '=', id).where('used_at', 'is', null).executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async insertMfaToken(id: string, userId: string, now: number): Promise<void> {
    await this.db.insertInto('mfa_tokens').values({ id, user_id: userId, attempts: 0, state: 'valid', created_at: now }).execute();
  }

  findMfaToken(id: string): Promise<MfaTokenRow | undefined> {
    return this.db.selectFrom('mfa_tokens').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** valid → consumed, only if still valid and issued after `notBefore`. */
  async consumeMfaToken(id: string, notBefore: number): Promise<boolean> {
    const result = await this.db
      .updateTable('mfa_tokens')
      .set({ state: 'consumed' })
      .where('id', '=', id)
      .where('state', '=', 'valid')
      .where('created_at', '>', notBefore)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** One more failed attempt; the token is invalidated on reaching `maxAttempts`. Returns the row after. */
  async failMfaToken(id: string, maxAttempts: number): Promise<MfaTokenRow | undefined> {
    await this.db
      .updateTable('mfa_tokens')
      .set((eb) => ({
        attempts: eb('attempts', '+', 1),
        state: eb.case().when('attempts', '>=', maxAttempts - 1).then('invalidated' as const).else(eb.ref('state')).end(),
      }))
      .where('id', '=', id)
      .where('state', '=', 'valid')
      .execute();
    return this.findMfaToken(id);
  }

  /** Tokens long past their lifetime are of no use to anyone. */
  async pruneMfaTokens(before: number): Promise<void> {
    await this.db.deleteFrom('mfa_tokens').where('created_at', '<', before).execute();
  }
}
