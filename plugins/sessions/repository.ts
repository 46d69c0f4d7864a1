import type { Db } from '../../core/db/database.js';
import { prepared } from '../../core/db/prepared.js';

/** Whose a session is and whether it was revoked (the user's own row is the users plugin's). */
interface SessionStateRow {
  user_id: string;
  revoked_at: number | null;
}

export class SessionsRepository {
  /** Read on every request whose principal is not cached: compiled once. */
  private readonly stateQuery;

  constructor(private readonly db: Db) {
    this.stateQuery = prepared<SessionStateRow, { sessionId: string }>(
      db as never,
      db.selectFrom('auth_sessions').select(['user_id', 'revoked_at']).where('id', '=', '$sessionId').compile(),
    );
  }

  async state(sessionId: string): Promise<SessionStateRow | undefined> {
    return (await this.stateQuery({ sessionId }))[0];
  }

  async create(session: { id: string; user_id: string; refresh_jti: string; now: number }): Promise<void> {
    await this.db
      .insertInto('auth_sessions')
      .values({ id: session.id, user_id: session.user_id, refresh_jti: session.refresh_jti, created_at: session.now, last_used_at: session.now, revoked_at: null })
      .execute();
  }

  /** Compare-and-swap: only the holder of the current refresh token can rotate it. */
  async rotate(sessionId: string, expectedJti: string, nextJti: string, now: number): Promise<boolean> {
    const result = await this.db
      .updateTable('auth_sessions')
      .set({ refresh_jti: nextJti, last_used_at: now })
      .where('id', '=', sessionId)
      .where('refresh_jti', '=', expectedJti)
      .where('revoked_at', 'is', null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  async revoke(sessionId: string, now: number): Promise<void> {
    await this.db.updateTable('auth_sessions').set({ revoked_at: now }).where('id', '=', sessionId).where('revoked_at', 'is', null).execute();
  }

  async revokeUser(userId: string, now: number): Promise<void> {
    await this.db.updateTable('auth_sessions').set({ revoked_at: now }).where('user_id', '=', userId).where('revoked_at', 'is', null).execute();
  }

  async revokeAll(now: number): Promise<void> {
    await this.db.updateTable('auth_sessions').set({ revoked_at: now }).where('revoked_at', 'is', null).execute();
  }

  /** Sessions idle past the longest refresh lifetime can never be used again. */
  async deleteIdleBefore(instant: number): Promise<void> {
    await this.db.deleteFrom('auth_sessions').where('last_used_at', '<', instant).execute();
  }
}
