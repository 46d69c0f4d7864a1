import type { ExpressionBuilder, Insertable, Selectable, Updateable } from 'kysely';
import type { Db } from '../../core/db/database.js';
import type { ConnectorsTable } from '../../core/db/documents-schema.js';
import type { Database } from '../../core/db/schema.js';

export type ConnectorRow = Selectable<ConnectorsTable>;
export type ConnectorViewRow = ConnectorRow & { document_count: number };

/** Read in the same query, so a list of connectors costs one statement. */
const documentCount = (eb: ExpressionBuilder<Database, 'connectors'>) =>
  eb
    .selectFrom('documents')
    .select((sub) => sub.fn.countAll<number>().as('n'))
    .where('documents.source_type', '=', 'connector')
    .whereRef('documents.source_id', '=', 'connectors.id')
    .as('document_count');

export class ConnectorsRepository {
  constructor(private readonly db: Db) {}

  list(): Promise<ConnectorViewRow[]> {
    return this.db.selectFrom('connectors').selectAll('connectors').select(documentCount).orderBy('name').orderBy('id').execute() as Promise<ConnectorViewRow[]>;
  }

  listEnabled(): Promise<ConnectorRow[]> {
    return this.db.selectFrom('connectors').selectAll().where('enabled', '=', 1).orderBy('name').execute();
  }

  findById(id: string): Promise<ConnectorViewRow | undefined> {
    return this.db.selectFrom('connectors').selectAll('connectors').select(documentCount).where('id', '=', id).executeTakeFirst() as Promise<ConnectorViewRow | undefined>;
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
