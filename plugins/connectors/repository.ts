import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db } from '../../core/db/database.js';
import type { ConnectorsTable } from '../../core/db/documents-schema.js';

export type ConnectorRow = Selectable<ConnectorsTable>;
export type ConnectorViewRow = ConnectorRow & { document_count: number };

export class ConnectorsRepository {
  constructor(private readonly db: Db) {}

  list(): Promise<ConnectorRow[]> {
    return this.db.selectFrom('connectors').selectAll().orderBy('name').orderBy('id').execute();
  }

  listEnabled(): Promise<ConnectorRow[]> {
    return this.db.selectFrom('connectors').selectAll().where('enabled', '=', 1).orderBy('name').execute();
  }

  findById(id: string): Promise<ConnectorRow | undefined> {
    return this.db.selectFrom('connectors').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Names are unique in any case, like usernames: "Docs" and "docs" would confuse a UI list. */
  findByName(name: string): Promise<ConnectorRow | undefined> {
    return this.db
      .selectFrom('connectors')
      .selectAll()
      .where((eb) => eb(eb.fn('lower', ['name']), '=', name.toLowerCase()))
      .executeTakeFirst();
  }

  async insert(row: Insertable<ConnectorsTable>): Promise<void> {
    await this.db.insertInto('connectors').values(row).execute();
  }

  async update(id: string, change: Updateable<ConnectorsTable>): Promise<void> {
    await this.db.updateTable('connectors').set(change).where('id', '=', id).execute();
  }

  /** Connectors with a scan asked for that never ended: the service stopped or crashed before. */
  listScanRequested(): Promise<ConnectorRow[]> {
    return this.db.selectFrom('connectors').selectAll().where('scan_requested_at', 'is not', null).orderBy('scan_requested_at').execute();
  }

  /** Ends the request of a scan asked for at `requestedAt`, unless another was asked for since (that one is still queued). */
  async endScanRequest(id: string, requestedAt: number): Promise<void> {
    await this.db.updateTable('connectors').set({ scan_requested_at: null }).where('id', '=', id).where('scan_requested_at', '<=', requestedAt).execute();
  }

  async delete(id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('connectors').where('id', '=', id).executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }
}
