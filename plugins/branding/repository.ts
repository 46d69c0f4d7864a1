import type { Selectable } from 'kysely';
import type { Db } from '../../core/db/database.js';
import type { BrandingLogoTable } from '../../core/db/schema.js';

type LogoRow = Selectable<BrandingLogoTable>;

/** The one logo lives in row id 1. */
const LOGO_ID = 1;

export class BrandingLogoRepository {
  constructor(private readonly db: Db) {}

  find(): Promise<LogoRow | undefined> {
    return this.db.selectFrom('branding_logo').selectAll().where('id', '=', LOGO_ID).executeTakeFirst();
  }

  /** When the logo last changed, without loading the image. */
  async updatedAt(): Promise<number | undefined> {
    const row = await this.db.selectFrom('branding_logo').select('updated_at').where('id', '=', LOGO_ID).executeTakeFirst();
    return row ? Number(row.updated_at) : undefined;
  }

  async upsert(logo: { png: Buffer; width: number; height: number; updated_at: number }): Promise<void> {
    await this.db
      .insertInto('branding_logo')
      .values({ id: LOGO_ID, ...logo })
      .onConflict((oc) => oc.column('id').doUpdateSet(logo))
      .execute();
  }
}
