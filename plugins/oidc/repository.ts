import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db } from '../../core/db/database.js';
import type { OidcLoginStatesTable, OidcProvidersTable } from '../../core/db/schema.js';

export type ProviderRow = Selectable<OidcProvidersTable>;
type LoginStateRow = Selectable<OidcLoginStatesTable>;

/** Every OIDC query: providers, started logins, linked identities and UI handoffs. */
export class OidcRepository {
  constructor(private readonly db: Db) {}

  listProviders(): Promise<ProviderRow[]> {
    return this.db.selectFrom('oidc_providers').selectAll().orderBy('name').execute();
  }

  async providerCount(): Promise<number> {
    const row = await this.db.selectFrom('oidc_providers').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
    return Number(row.n);
  }

  findProvider(id: string): Promise<ProviderRow | undefined> {
    return this.db.selectFrom('oidc_providers').selectAll().where('id', '=', id).executeTakeFirst();
  }

  findProviderByName(name: string): Promise<ProviderRow | undefined> {
    return this.db.selectFrom('oidc_providers').selectAll().where('name', '=', name).executeTakeFirst();
  }

  async insertProvider(row: Insertable<OidcProvidersTable>): Promise<void> {
    await this.db.insertInto('oidc_providers').values(row).execute();
  }

  async updateProvider(id: string, change: Updateable<OidcProvidersTable>): Promise<void> {
    await this.db.updateTable('oidc_providers').set(change).where('id', '=', id).execute();
  }

  /** False when there was no such provider (a delete that ran first). */
  async deleteProvider(id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('oidc_providers').where('id', '=', id).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  async insertLoginState(row: Insertable<OidcLoginStatesTable>): Promise<void> {
    await this.db.insertInto('oidc_login_states').values(row).execute();
  }

  /** Marks a started login used and returns it, in one statement, so two callbacks cannot both win. */
  consumeLoginState(stateHash: string, provider: string, notBefore: number, now: number): Promise<LoginStateRow | undefined> {
    return this.db
      .updateTable('oidc_login_states')
      .set({ consumed_at: now })
      .where('state_hash', '=', stateHash)
      .where('provider', '=', provider)
      .where('consumed_at', 'is', null)
      .where('created_at', '>=', notBefore)
      .returningAll()
      .executeTakeFirst();
  }

  async deleteLoginStatesBefore(instant: number): Promise<void> {
    await this.db.deleteFrom('oidc_login_states').where('created_at', '<', instant).execute();
  }

  async findIdentityUser(issuer: string, subject: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom('oidc_identities')
      .select('user_id')
      .where('issuer', '=', issuer)
      .where('subject', '=', subject)
      .executeTakeFirst();
    return row?.user_id;
  }

  async insertIdentity(row: { issuer: string; subject: string; provider: string; user_id: string; created_at: number }): Promise<void> {
    await this.db.insertInto('oidc_identities').values(row).execute();
  }

  async insertHandoff(codeHash: string, userId: string, now: number): Promise<void> {
    await this.db.insertInto('oidc_handoffs').values({ code_hash: codeHash, user_id: userId, created_at: now, consumed_at: null }).execute();
  }

  /** Spends a handoff code and returns its user id, atomically. */
  async consumeHandoff(codeHash: string, notBefore: number, now: number): Promise<string | undefined> {
    const row = await this.db
      .updateTable('oidc_handoffs')
      .set({ consumed_at: now })
      .where('code_hash', '=', codeHash)
      .where('consumed_at', 'is', null)
      .where('created_at', '>=', notBefore)
      .returning('user_id')
      .executeTakeFirst();
    return row?.user_id;
  }

  async deleteHandoffsBefore(instant: number): Promise<void> {
    await this.db.deleteFrom('oidc_handoffs').where('created_at', '<', instant).execute();
  }
}
