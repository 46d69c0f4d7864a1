import type { Selectable } from 'kysely';
import type { Db } from '../../core/db/database.js';
import type { PasswordResetTokensTable } from '../../core/db/schema.js';

type ResetTokenRow = Selectable<PasswordResetTokensTable>;

/** Spent and expired tokens are kept this long after expiry (for inspection), then pruned. */
const KEEP_AFTER_EXPIRY_MS = 24 * 60 * 60 * 1000;

export class PasswordResetRepository {
  constructor(private readonly db: Db) {}

  /** Stores a new token and drops the user's earlier unused ones, so only the latest link works. */
  async issue(token: { id: string; userId: string; tokenHash: string; now: number; expiresAt: number }): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.deleteFrom('password_reset_tokens').where('user_id', '=', token.userId).where('used_at', 'is', null).execute();
      await trx.deleteFrom('password_reset_tokens').where('expires_at', '<', token.now - KEEP_AFTER_EXPIRY_MS).execute();
      await trx
        .insertInto('password_reset_tokens')
        .values({ id: token.id, user_id: token.userId, token_hash: token.tokenHash, created_at: token.now, expires_at: token.expiresAt, used_at: null })
        .execute();
    });
  }

  /** An unspent, unexpired token (the service checks that its account has not changed since). */
  findUsable(tokenHash: string, now: number): Promise<ResetTokenRow | undefined> {
    return this.db
      .selectFrom('password_reset_tokens')
      .selectAll()
      .where('token_hash', '=', tokenHash)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
  }

  /** Spends a token; false when another request spent it first or it expired meanwhile. */
  async consume(id: string, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('password_reset_tokens')
      .set({ used_at: now })
      .where('id', '=', id)
      .where('used_at', 'is', null)
      .where('expires_at', '>', now)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }
}
