import type { Insertable, Selectable, Updateable } from 'kysely';
import type { Db } from '../../core/db/database.js';
import type { MetadataRulesTable } from '../../core/db/metadata-schema.js';

export type RuleRow = Selectable<MetadataRulesTable>;

/** The metadata_rules table: kysely only. */
export class MetadataRulesRepository {
  constructor(private readonly db: Db) {}

  /** A source's rules in creation order (the order ties are broken in). */
  ofSource(sourceType: RuleRow['source_type'], sourceId: string): Promise<RuleRow[]> {
    return this.db.selectFrom('metadata_rules').selectAll().where('source_type', '=', sourceType).where('source_id', '=', sourceId).orderBy('seq').execute();
  }

  /** Every rule with its query-time pattern, in creation order. */
  all(): Promise<RuleRow[]> {
    return this.db.selectFrom('metadata_rules').selectAll().orderBy('seq').execute();
  }

  find(sourceType: RuleRow['source_type'], sourceId: string, id: string): Promise<RuleRow | undefined> {
    return this.db.selectFrom('metadata_rules').selectAll().where('id', '=', id).where('source_type', '=', sourceType).where('source_id', '=', sourceId).executeTakeFirst();
  }

  async insert(row: Insertable<MetadataRulesTable>): Promise<void> {
    await this.db.insertInto('metadata_rules').values(row).execute();
  }

  async update(id: string, change: Updateable<MetadataRulesTable>): Promise<void> {
    await this.db.updateTable('metadata_rules').set(change).where('id', '=', id).execute();
  }

  /** The source's rule of this id; false when it has none (a delete that ran first). */
  async delete(sourceType: RuleRow['source_type'], sourceId: string, id: string): Promise<boolean> {
    const result = await this.db.deleteFrom('metadata_rules').where('id', '=', id).where('source_type', '=', sourceType).where('source_id', '=', sourceId).executeTakeFirst();
    return result.numDeletedRows > 0n;
  }

  async deleteOfSource(sourceType: RuleRow['source_type'], sourceId: string): Promise<void> {
    await this.db.deleteFrom('metadata_rules').where('source_type', '=', sourceType).where('source_id', '=', sourceId).execute();
  }
}
