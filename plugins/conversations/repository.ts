import { sql, type Selectable } from 'kysely';
import type { ConversationTurnsTable, ConversationsTable } from '../../core/db/conversations-schema.js';
import type { Db } from '../../core/db/database.js';
import { readableBy } from '../groups/index.js';

export type ConversationRow = Selectable<ConversationsTable>;
/** `withheld`: the turn cites a document the reader may not read (any more) or that is gone: its answer and sources are not shown. */
export type TurnRow = Selectable<ConversationTurnsTable> & { withheld: number };

/** Decided in the query, against the documents as they are now: a revoked group or a deleted document hides the turn at once. */
const withheld = (groups: string[]) => sql<number>`exists (select 1 from json_each(conversation_turns.sources) s
  where not exists (select 1 from documents d where d.id = json_extract(s.value, '$.document_id') and ${readableBy('d.groups', JSON.stringify(groups))}))`.as('withheld');

interface NewTurn {
  userId: string;
  conversationId: string;
  title: string;
  query: string;
  answer: string;
  /** JSON text. */
  sources: string;
  mode: TurnRow['mode'];
  at: number;
  /** Turns kept per conversation; older ones are deleted in the same transaction. */
  maxTurns: number;
}

/** SQL of chat history: conversations and their turns. */
export class ConversationsRepository {
  constructor(private readonly db: Db) {}

  findOwned(id: string, userId: string): Promise<ConversationRow | undefined> {
    return this.db.selectFrom('conversations').selectAll().where('id', '=', id).where('user_id', '=', userId).executeTakeFirst();
  }

  /** The newest `limit` turns, oldest first. */
  async recentTurns(conversationId: string, limit: number, groups: string[]): Promise<TurnRow[]> {
    const rows = await this.db.selectFrom('conversation_turns').selectAll().select(withheld(groups)).where('conversation_id', '=', conversationId).orderBy('id', 'desc').limit(limit).execute();
    return rows.reverse();
  }

  turns(conversationId: string, groups: string[]): Promise<TurnRow[]> {
    return this.db.selectFrom('conversation_turns').selectAll().select(withheld(groups)).where('conversation_id', '=', conversationId).orderBy('id').execute();
  }

  async list(userId: string, limit: number, offset: number): Promise<{ conversations: ConversationRow[]; total: number }> {
    const query = this.db.selectFrom('conversations').where('user_id', '=', userId);
    const [conversations, count] = await Promise.all([
      query.selectAll().orderBy('updated_at', 'desc').orderBy('id').limit(limit).offset(offset).execute(),
      query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow(),
    ]);
    return { conversations, total: Number(count.n) };
  }

  /**
   * Stores one finished turn, creating the conversation on its first; one transaction, so a
   * reader never sees a turn without its conversation or more than maxTurns turns.
   * 'not_owned' when the id belongs to someone else (or appeared for them meanwhile).
   */
  appendTurn(turn: NewTurn): Promise<'ok' | 'not_owned'> {
    return this.db.transaction().execute(async (trx) => {
      const existing = await trx.selectFrom('conversations').select('user_id').where('id', '=', turn.conversationId).executeTakeFirst();
      if (existing && existing.user_id !== turn.userId) return 'not_owned';
      if (!existing) {
        await trx.insertInto('conversations').values({ id: turn.conversationId, user_id: turn.userId, title: turn.title, turn_count: 0, created_at: turn.at, updated_at: turn.at }).execute();
      }
      await trx
        .insertInto('conversation_turns')
        .values({ conversation_id: turn.conversationId, query: turn.query, answer: turn.answer, sources: turn.sources, mode: turn.mode, created_at: turn.at })
        .execute();
      await sql`delete from conversation_turns where conversation_id = ${turn.conversationId} and id <= coalesce(
        (select id from conversation_turns where conversation_id = ${turn.conversationId} order by id desc limit 1 offset ${turn.maxTurns}), -1)`.execute(trx);
      await sql`update conversations set updated_at = ${turn.at},
        turn_count = (select count(*) from conversation_turns where conversation_id = ${turn.conversationId}) where id = ${turn.conversationId}`.execute(trx);
      return 'ok';
    });
  }

  /** Deletes conversations with no turn since `cutoff` (their turns go by cascade); returns how many. */
  async deleteInactiveSince(cutoff: number): Promise<number> {
    const result = await this.db.deleteFrom('conversations').where('updated_at', '<', cutoff).executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
