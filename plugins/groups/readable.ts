import { type RawBuilder, sql } from 'kysely';

/**
 * The one access test in SQL: true when the JSON `groups` column (a document's allowed groups, as
 * `table.groups`) names one of the reader's groups (a JSON array, or a '$name' placeholder of a
 * prepared query). Every read of document content (search, chat, documents, conversations, jobs)
 * puts it in its WHERE clause: results are never trimmed afterwards.
 */
export function readableBy(groupsColumn: string, readerGroups: string): RawBuilder<boolean> {
  return sql<boolean>`exists (select 1 from json_each(${sql.ref(groupsColumn)}) acl where acl.value in (select value from json_each(${readerGroups})))`;
}

/** The same test on group names in hand: true when a document's or source's allowed groups name one of the reader's. */
export const sharesGroup = (allowed: string[], readerGroups: string[]) => allowed.some((group) => readerGroups.includes(group));

/**
 * A row with a JSON `groups` column (a connector, an integration) as a caller sees it: every row for the service's
 * own callers (no reader groups), else only a row allowed to one of the reader's groups.
 */
export const readableRow = (row: { groups: string }, readerGroups?: string[]) => !readerGroups || sharesGroup(JSON.parse(row.groups) as string[], readerGroups);
