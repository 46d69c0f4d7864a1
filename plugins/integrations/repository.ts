import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db } from '../../core/db/database.js';
import type { IntegrationPagesTable, IntegrationsTable } from '../../core/db/documents-schema.js';
import { readableBy } from '../groups/index.js';

export type IntegrationRow = Selectable<IntegrationsTable>;
export type IntegrationPageRow = Selectable<IntegrationPagesTable>;

export class IntegrationsRepository {
  constructor(private readonly db: Db) {}

  /** With reader groups, only the integrations allowed to one of them (the page and the total). */
  async list(limit: number, offset: number, readerGroups?: string[]): Promise<{ integrations: IntegrationRow[]; total: number }> {
    const visible = () => {
      const all = this.db.selectFrom('integrations');
      return readerGroups ? all.where(readableBy('integrations.groups', JSON.stringify(readerGroups))) : all;
    };
    const [integrations, count] = await Promise.all([
      visible().selectAll().orderBy('name').limit(limit).offset(offset).execute(),
      visible().select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { integrations, total: Number(count.n) };
  }

  find(id: string): Promise<IntegrationRow | undefined> {
    return this.db.selectFrom('integrations').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Names are unique in any case, as connector names are. */
  findByName(name: string): Promise<IntegrationRow | undefined> {
    return this.db.selectFrom('integrations').selectAll().where((eb) => eb(eb.fn('lower', ['name']), '=', name.toLowerCase())).executeTakeFirst();
  }

  async insert(row: Insertable<IntegrationsTable>): Promise<void> {
    await this.db.insertInto('integrations').values(row).execute();
  }

  async update(id: string, change: Updateable<IntegrationsTable>): Promise<void> {
    await this.db.updateTable('integrations').set(change).where('id', '=', id).execute();
  }

  /** Integrations with a sync asked for that never ended: the service stopped or crashed before. */
  listSyncRequested(): Promise<IntegrationRow[]> {
    return this.db.selectFrom('integrations').selectAll().where('sync_requested_at', 'is not', null).orderBy('sync_requested_at').execute();
  }

  /** Ends the request of a sync asked for at `requestedAt`, unless another was asked for since. */
  async endSyncRequest(id: string, requestedAt: number): Promise<void> {
    await this.db.updateTable('integrations').set({ sync_requested_at: null }).where('id', '=', id).where('sync_requested_at', '<=', requestedAt).execute();
  }

  /** Its page records and schedules go by cascade; false when there was no such integration (a delete that ran first). */
  async delete(id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('integrations').where('id', '=', id).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  pages(integrationId: string): Promise<IntegrationPageRow[]> {
    return this.db.selectFrom('integration_pages').selectAll().where('integration_id', '=', integrationId).execute();
  }

  async savePage(page: IntegrationPageRow): Promise<void> {
    await this.db
      .insertInto('integration_pages')
      .values(page)
      .onConflict((oc) => oc.columns(['integration_id', 'url']).doUpdateSet({
        etag: page.etag,
        last_modified: page.last_modified,
        sha256: page.sha256,
        document_id: page.document_id,
        fetched_at: page.fetched_at,
      }))
      .execute();
  }

  async deletePages(integrationId: string, urls: string[]): Promise<void> {
    if (urls.length === 0) return;
    await this.db.deleteFrom('integration_pages').where('integration_id', '=', integrationId).where('url', 'in', urls).execute();
  }
}
