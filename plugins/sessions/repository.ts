import type { Db } from '../../core/db/database.js';
import { prepared } from '../../core/db/prepared.js';
import { totpEnabled, type UserProfileRow } from '../users/repository.js';

/** The user's profile (what GET /api/auth/me shows), their revocation watermark, and the session's state. */
interface SessionPrincipalRow extends UserProfileRow {
  tokens_valid_after: number;
  session_revoked_at: number | null;
}

export class SessionsRepository {
  /** The user behind a token and the state of its session, in one query (the hot path of every request). */
  private readonly principalQuery;

  constructor(private readonly db: Db) {
    this.principalQuery = prepared<SessionPrincipalRow, { userId: string; sessionId: string }>(
      db as never,
      db
        .selectFrom('users')
        .innerJoin('auth_sessions', 'auth_sessions.user_id', 'users.id')
        .select(['users.id', 'users.username', 'users.role', 'users.email', 'users.groups', 'users.auth_source', 'users.created_at', 'users.updated_at', 'users.tokens_valid_after'])
        .select(totpEnabled)
        .select('auth_sessions.revoked_at as session_revoked_at')
        .where('users.id', '=', '$userId')
        .where('auth_sessions.id', '=', '$sessionId')
        .compile(),
    );
  }

  async principal(userId: string, sessionId: string): Promise<SessionPrincipalRow | undefined> {
    return (await this.principalQuery({ userId, sessionId }))[0];
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
