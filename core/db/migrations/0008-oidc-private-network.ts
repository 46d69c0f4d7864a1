import type { Kysely } from 'kysely';

/** Per-provider opt-in for an identity provider on the LAN (the SSRF guard refuses private addresses otherwise). */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema.alterTable('oidc_providers').addColumn('allow_private_network', 'integer', (c) => c.notNull().defaultTo(0)).execute();
}
