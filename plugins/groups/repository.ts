import { randomUUID } from 'node:crypto';
import { type Selectable, sql } from 'kysely';
import type { Db } from '../../core/db/database.js';
import type { GroupsTable } from '../../core/db/schema.js';
import { readableBy } from './readable.js';

export type GroupRow = Selectable<GroupsTable>;
export type AccessSource = 'connectors' | 'integrations';
/** An access change by group names: no such document or source (or not the caller's to change), names with no group, or the names as the groups table spells them. */
export type Assignment = 'not_found' | { missing: string[] } | { groups: string[] };

/** Tables whose JSON `groups` column names groups: members (users), ACLs (documents) and source defaults. */
const NAMING_TABLES = ['users', 'documents', 'connectors', 'integrations'] as const;

/**
 * SQL of groups: the groups table, memberships (users.groups) and the allowed groups of documents and
 * their sources (documents.groups, connectors.groups, integrations.groups), all JSON arrays of names.
 */
export class GroupsRepository {
  constructor(private readonly db: Db) {}

  list(): Promise<Array<GroupRow & { member_count: number }>> {
    return this.db
      .selectFrom('groups')
      .selectAll('groups')
      .select(sql<number>`case when groups.id = 'everyone' then (select count(*) from users)
        else (select count(*) from users u where exists (select 1 from json_each(u.groups) m where m.value = groups.name)) end`.as('member_count'))
      .orderBy(sql`groups.id <> 'everyone'`)
      .orderBy(sql`lower(groups.name)`)
      .execute();
  }

  find(id: string): Promise<GroupRow | undefined> {
    return this.db.selectFrom('groups').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The groups of these names, matched in any case. */
  findByNames(names: string[]): Promise<GroupRow[]> {
    return groupsNamed(this.db, names);
  }

  /** A new group; a name already taken (in any case) fails on the UNIQUE index. */
  async insert(name: string, origin: 'local' | 'oidc', now: number): Promise<GroupRow> {
    const row: GroupRow = { id: randomUUID(), name, origin, created_at: now, updated_at: now };
    await this.db.insertInto('groups').values(row).execute();
    return row;
  }

  /**
   * Makes the groups of these names (origin oidc) where missing and sets them as the user's groups, `everyone` first, in
   * one transaction: a group deleted or renamed while the user signed in is made again, as a sign-in after it would
   * make it (OIDC claim groups). Returns the names as the groups table spells them.
   */
  async joinClaimGroups(userId: string, names: string[], now: number): Promise<string[]> {
    return this.db.transaction().execute(async (trx) => {
      const groups = ['everyone'];
      for (const name of names) {
        const row: GroupRow = { id: randomUUID(), name, origin: 'oidc', created_at: now, updated_at: now };
        await trx.insertInto('groups').values(row).onConflict((oc) => oc.doNothing()).execute();
        groups.push(((await groupsNamed(trx, [name]))[0] ?? row).name);
      }
      const joined = [...new Set(groups)];
      await trx.updateTable('users').set({ groups: JSON.stringify(joined) }).where('id', '=', userId).execute();
      return joined;
    });
  }

  /** Renames the group and every JSON array that names it, in one transaction. */
  async rename(from: string, to: string, now: number): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx.updateTable('groups').set({ name: to, updated_at: now }).where('name', '=', from).execute();
      for (const table of NAMING_TABLES) await replaceName(trx, table, from, to);
    });
  }

  /**
   * Removes the group and its name from every member, document and source, in one transaction with the check that
   * no document or source is readable by this group alone: nothing can be given to it between the check and the
   * delete. 'not_found' when there is no such group (a delete that ran first), the count of such documents and
   * sources when there are any (nothing changes either way), else the members it had.
   */
  async delete(id: string): Promise<'not_found' | { stranded: number } | { memberIds: string[] }> {
    return this.db.transaction().execute(async (trx) => {
      const group = await trx.selectFrom('groups').select('name').where('id', '=', id).executeTakeFirst();
      if (!group) return 'not_found' as const;
      const stranded = await onlyReaders(trx, group.name);
      if (stranded) return { stranded };
      const members = await membersOf(trx, group.name);
      await trx.deleteFrom('groups').where('id', '=', id).execute();
      for (const table of NAMING_TABLES) await replaceName(trx, table, group.name, null);
      return { memberIds: members.map((member) => member.id) };
    });
  }

  members(name: string): Promise<Array<{ id: string; username: string; role: string; auth_source: string }>> {
    return membersOf(this.db, name);
  }

  /** The group names the user is a member of; undefined when there is no such user. */
  async memberOf(userId: string): Promise<string[] | undefined> {
    const row = await this.db.selectFrom('users').select('groups').where('id', '=', userId).executeTakeFirst();
    return row ? (JSON.parse(row.groups) as string[]) : undefined;
  }

  /**
   * Adds the user to the group (`join`) or takes them out of it, in one transaction with the read of the group's name and
   * of the user's groups: a delete or rename of this group or another one meanwhile is never undone by a stale copy.
   * 'no_group' or 'no_user' when either is gone (nothing changes).
   */
  async setMembership(groupId: string, userId: string, join: boolean): Promise<'no_group' | 'no_user' | 'done'> {
    return this.db.transaction().execute(async (trx) => {
      const group = await trx.selectFrom('groups').select('name').where('id', '=', groupId).executeTakeFirst();
      if (!group) return 'no_group' as const;
      const user = await trx.selectFrom('users').select('groups').where('id', '=', userId).executeTakeFirst();
      if (!user) return 'no_user' as const;
      const groups = JSON.parse(user.groups) as string[];
      const next = join ? (groups.includes(group.name) ? groups : [...groups, group.name]) : groups.filter((name) => name !== group.name);
      await trx.updateTable('users').set({ groups: JSON.stringify(next) }).where('id', '=', userId).execute();
      return 'done' as const;
    });
  }

  /** Which of these documents the reader's groups may read. */
  async readableDocuments(ids: string[], groups: string[]): Promise<Set<string>> {
    if (!ids.length) return new Set();
    const rows = await this.db.selectFrom('documents').select('id').where('id', 'in', ids).where(readableBy('documents.groups', JSON.stringify(groups))).execute();
    return new Set(rows.map((row) => row.id));
  }

  /**
   * Sets a document's allowed groups, named in any case, in one transaction with the test of the groups it has
   * (`mayChange`) and the check that every name is a group's: a group deleted or renamed meanwhile is refused as one
   * that never existed, never written. 'not_found' when there is no such document or `mayChange` refuses it.
   */
  async setDocumentGroups(documentId: string, names: string[], mayChange: (current: string[]) => boolean, now: number): Promise<Assignment> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom('documents').select('groups').where('id', '=', documentId).executeTakeFirst();
      if (!row || !mayChange(JSON.parse(row.groups) as string[])) return 'not_found' as const;
      const named = await spelled(trx, names);
      if ('missing' in named) return named;
      await trx.updateTable('documents').set({ groups: JSON.stringify(named.groups), updated_at: now }).where('id', '=', documentId).execute();
      return named;
    });
  }

  /** The same for a source, whose documents (those it brought in) get the groups too, in the same transaction. */
  async setSourceGroups(source: AccessSource, id: string, names: string[], mayChange: (current: string[]) => boolean, now: number): Promise<Assignment> {
    return this.db.transaction().execute(async (trx) => {
      const row = await trx.selectFrom(source).select('groups').where('id', '=', id).executeTakeFirst();
      if (!row || !mayChange(JSON.parse(row.groups) as string[])) return 'not_found' as const;
      const named = await spelled(trx, names);
      if ('missing' in named) return named;
      const json = JSON.stringify(named.groups);
      await trx.updateTable(source).set({ groups: json, updated_at: now }).where('id', '=', id).execute();
      const sourceType = source === 'connectors' ? 'connector' : 'integration';
      await trx.updateTable('documents').set({ groups: json, updated_at: now }).where('source_type', '=', sourceType).where('source_id', '=', id).execute();
      return named;
    });
  }

  async sourceGroups(source: AccessSource, id: string): Promise<string[] | undefined> {
    const row = await this.db.selectFrom(source).select('groups').where('id', '=', id).executeTakeFirst();
    return row ? (JSON.parse(row.groups) as string[]) : undefined;
  }
}

/** The groups of these names, matched in any case (inside a transaction, through its `trx`). */
function groupsNamed(db: Db, names: string[]): Promise<GroupRow[]> {
  if (!names.length) return Promise.resolve([]);
  const lowered = names.map((name) => name.toLowerCase());
  return db.selectFrom('groups').selectAll().where(sql<string>`lower(name)`, 'in', lowered).execute();
}

/** Group names given in any case as the groups table spells them (each once, in the order given), or those it has no group of. */
async function spelled(db: Db, names: string[]): Promise<{ missing: string[] } | { groups: string[] }> {
  const byLower = new Map((await groupsNamed(db, names)).map((group) => [group.name.toLowerCase(), group.name]));
  const missing = names.filter((name) => !byLower.has(name.toLowerCase()));
  return missing.length ? { missing } : { groups: [...new Set(names.map((name) => byLower.get(name.toLowerCase())!))] };
}

/** Replaces (or, with null, removes) a name in every row's JSON `groups` array that holds it. */
async function replaceName(db: Db, table: (typeof NAMING_TABLES)[number], from: string, to: string | null): Promise<void> {
  const replacement = to === null ? sql`(select json_group_array(value) from json_each(t.groups) where value <> ${from})`
    : sql`(select json_group_array(case when value = ${from} then ${to} else value end) from json_each(t.groups))`;
  await sql`update ${sql.table(table)} as t set groups = ${replacement}
    where exists (select 1 from json_each(t.groups) where value = ${from})`.execute(db);
}

/** Documents and sources that only this group may read: deleting it would leave them to nobody. */
async function onlyReaders(db: Db, name: string): Promise<number> {
  let total = 0;
  for (const table of ['documents', 'connectors', 'integrations'] as const) {
    const row = await sql<{ n: number }>`select count(*) as n from ${sql.table(table)} t
      where exists (select 1 from json_each(t.groups) g where g.value = ${name})
        and not exists (select 1 from json_each(t.groups) g where g.value <> ${name})`.execute(db);
    total += Number(row.rows[0].n);
  }
  return total;
}

function membersOf(db: Db, name: string): Promise<Array<{ id: string; username: string; role: string; auth_source: string }>> {
  const query = db.selectFrom('users').select(['id', 'username', 'role', 'auth_source']).orderBy(sql`lower(username)`);
  if (name === 'everyone') return query.execute();
  return query.where(sql<boolean>`exists (select 1 from json_each(users.groups) m where m.value = ${name})`).execute();
}
