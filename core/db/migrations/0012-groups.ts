import { type Kysely, sql } from 'kysely';

/**
 * Groups (issue 18): a table of groups with the built-in `everyone`; memberships and document ACLs stay
 * JSON arrays of group names (users.groups, documents.groups), so a rename rewrites them in one transaction.
 * Connectors and integrations get the groups their documents default to. Documents get an integer
 * access key: the vector index filters on it (the HNSW labels are chunk rowids, the key their document).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('groups')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull().unique())
    .addColumn('origin', 'text', (c) => c.notNull().check(sql`origin in ('builtin', 'local', 'oidc')`))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
  await sql`create unique index groups_name_nocase on groups(lower(name))`.execute(db);
  const now = Date.now();
  await sql`insert into groups (id, name, origin, created_at, updated_at) values ('everyone', 'everyone', 'builtin', ${now}, ${now})`.execute(db);
  // Names already in use (OIDC claim groups provisioned before this release) become groups.
  await sql`insert or ignore into groups (id, name, origin, created_at, updated_at)
    select lower(hex(randomblob(16))), value, 'oidc', ${now}, ${now}
    from (select distinct g.value from users u, json_each(u.groups) g union select distinct g.value from documents d, json_each(d.groups) g)
    where value <> 'everyone' and lower(value) not in (select lower(name) from groups)`.execute(db);

  for (const table of ['connectors', 'integrations']) {
    await db.schema.alterTable(table).addColumn('groups', 'text', (c) => c.notNull().defaultTo('["everyone"]')).execute();
  }

  await db.schema.alterTable('documents').addColumn('access_key', 'integer').execute();
  await sql`update documents set access_key = rowid`.execute(db);
  await sql`create unique index documents_access_key on documents(access_key)`.execute(db);
  // Every new document gets the next key; the unique index makes max() one b-tree step.
  await sql`create trigger documents_access_key_insert after insert on documents when new.access_key is null begin
    update documents set access_key = (select coalesce(max(access_key), 0) + 1 from documents) where id = new.id;
  end`.execute(db);
}
