import type { ExpressionBuilder, Insertable, Selectable, SqlBool, Transaction, Updateable } from 'kysely';
import type { Db } from '../../core/db/database.js';
import { prepared, preparedNow } from '../../core/db/prepared.js';
import type { Database, UsersTable } from '../../core/db/schema.js';

export type UserRow = Selectable<UsersTable>;
/** A user with the TOTP-enrolled state the spec's User carries (read by the paths that build the User view). */
export type UserViewRow = UserRow & { totp_enabled: SqlBool };
/** What the User view shows: no password hash, no revocation watermark. */
export type UserProfileRow = Pick<UserViewRow, 'id' | 'username' | 'email' | 'role' | 'groups' | 'auth_source' | 'totp_enabled' | 'created_at' | 'updated_at'>;

/** Read in the same query, so the User view never needs a second lookup into the mfa tables. */
const totpEnabled = (eb: ExpressionBuilder<Database, 'users'>) =>
  eb.exists(eb.selectFrom('totp').select('totp.user_id').whereRef('totp.user_id', '=', 'users.id').where('totp.state', '=', 'enrolled')).as('totp_enabled');

export class UsersRepository {
  /** Read on every GET /api/auth/me: compiled once. */
  private readonly byId;
  private readonly idByKey;

  constructor(private readonly db: Db) {
    this.byId = prepared<UserViewRow, { id: string }>(db as never, db.selectFrom('users').selectAll('users').select(totpEnabled).where('id', '=', '$id').compile());
    this.idByKey = preparedNow<{ id: string }, { id: string; username: string }>(
      db as never,
      db.selectFrom('users').select('id').where((eb) => eb.or([eb('id', '=', '$id'), eb(eb.fn('lower', ['username']), '=', '$username')])).compile(),
    );
  }

  /**
   * The id of the user that `key` names, as an id or as a username in any case, answered at once
   * (for log lines, which cannot wait); undefined when no user matches or the store cannot answer synchronously.
   */
  idNow(key: string): string | undefined {
    const rows = this.idByKey?.({ id: key, username: key.toLowerCase() }) ?? [];
    return (rows.find((row) => row.id === key) ?? rows[0])?.id;
  }

  async findById(id: string): Promise<UserViewRow | undefined> {
    return (await this.byId({ id }))[0];
  }

  findByUsername(username: string): Promise<UserRow | undefined> {
    return this.db
      .selectFrom('users')
      .selectAll()
      .where((eb) => eb(eb.fn('lower', ['username']), '=', username.toLowerCase()))
      .executeTakeFirst();
  }

  /** Emails are not unique: several accounts may share one address. */
  listByEmail(email: string): Promise<UserRow[]> {
    return this.db
      .selectFrom('users')
      .selectAll()
      .where((eb) => eb(eb.fn('lower', ['email']), '=', email.toLowerCase()))
      .orderBy('created_at')
      .execute();
  }

  list(limit: number, offset: number): Promise<UserViewRow[]> {
    return this.db.selectFrom('users').selectAll('users').select(totpEnabled).orderBy('created_at').orderBy('id').limit(limit).offset(offset).execute();
  }

  async count(): Promise<number> {
    const row = await this.db.selectFrom('users').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async insert(user: Insertable<UsersTable>): Promise<void> {
    await this.db.insertInto('users').values(user).execute();
  }

  updateKeepingAnAdmin(id: string, change: Updateable<UsersTable>): Promise<'ok' | 'last_admin'> {
    return this.keepingAnAdmin(async (trx) => {
      await trx.updateTable('users').set(change).where('id', '=', id).execute();
      return 'ok' as const;
    });
  }

  /** 'not_found' when the delete removed no row (another delete ran first): decided by the delete, not an earlier read. */
  deleteKeepingAnAdmin(id: string): Promise<'ok' | 'last_admin' | 'not_found'> {
    return this.keepingAnAdmin(async (trx) => {
      const result = await trx.deleteFrom('users').where('id', '=', id).executeTakeFirst();
      return result.numDeletedRows > 0n ? ('ok' as const) : ('not_found' as const);
    });
  }

  async setTokensValidAfter(id: string, instant: number): Promise<void> {
    await this.db.updateTable('users').set({ tokens_valid_after: instant }).where('id', '=', id).execute();
  }

  /**
   * Runs a change and rolls it back if it leaves no admin behind; one transaction, so two
   * concurrent demotions cannot each see "another admin remains".
   */
  private async keepingAnAdmin<T>(change: (trx: Transaction<Database>) => Promise<T>): Promise<T | 'last_admin'> {
    try {
      return await this.db.transaction().execute(async (trx) => {
        const outcome = await change(trx);
        const admins = await trx
          .selectFrom('users')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('role', '=', 'admin')
          .executeTakeFirstOrThrow();
        if (Number(admins.n) === 0) throw new LastAdminError();
        return outcome;
      });
    } catch (error) {
      if (error instanceof LastAdminError) return 'last_admin';
      throw error;
    }
  }
}

/** Thrown inside a transaction to roll it back. */
class LastAdminError extends Error {}
