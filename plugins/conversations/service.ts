import { clock } from '../../core/clock.js';
import { notFound } from '../../core/errors.js';
import type { SettingsStore } from '../../core/settings/store.js';
import type { ConversationRow, ConversationsRepository, TurnRow } from './repository.js';
import type { AnswerMode, ConversationView, SourceView } from './schemas.js';

const DAY_MS = 24 * 60 * 60 * 1000;
const TITLE_MAX_LENGTH = 80;

interface FinishedTurn {
  userId: string;
  conversationId: string;
  query: string;
  answer: string;
  sources: SourceView[];
  mode: AnswerMode;
}

/** A past exchange as the chat reads it (for the prompt and for query rewriting). */
export interface PastTurn {
  query: string;
  answer: string;
}

/** Chat history rules: ownership, the turn cap and the age purge. Every read is scoped to its owner, admins included. */
export class ConversationsService {
  constructor(readonly repository: ConversationsRepository, private readonly settings: SettingsStore) {}

  /**
   * The last `limit` turns of a conversation the user owns; 404 for an unknown id or someone else's.
   * A withheld turn (it cites what the reader may no longer read) keeps its question, not its answer.
   */
  async history(userId: string, groups: string[], conversationId: string, limit: number): Promise<PastTurn[]> {
    await this.owned(userId, conversationId);
    const turns = await this.repository.recentTurns(conversationId, limit, groups);
    return turns.map(({ query, answer, withheld }) => ({ query, answer: withheld ? WITHHELD_ANSWER : answer }));
  }

  /** Stores a completed turn (creating the conversation on its first); called only once the answer is whole. */
  async record(turn: FinishedTurn): Promise<void> {
    const outcome = await this.repository.appendTurn({
      ...turn,
      title: titleOf(turn.query),
      sources: JSON.stringify(turn.sources),
      at: clock.now(),
      maxTurns: this.settings.current('RAG_CONVERSATION_MAX_TURNS'),
    });
    if (outcome === 'not_owned') throw notFound('Conversation');
  }

  async list(userId: string, limit: number, offset: number) {
    const { conversations, total } = await this.repository.list(userId, limit, offset);
    return { conversations: conversations.map((row) => ({ ...dates(row), id: row.id, title: row.title, turns: row.turn_count })), total };
  }

  /** With the reader's groups: a turn citing a document they may not read now is shown withheld. */
  async get(userId: string, groups: string[], conversationId: string): Promise<ConversationView> {
    const row = await this.owned(userId, conversationId);
    const turns = await this.repository.turns(conversationId, groups);
    return { id: row.id, title: row.title, ...dates(row), turns: turns.map(toTurnView) };
  }

  /** Deletes conversations idle for longer than RAG_CONVERSATION_MAX_AGE_DAYS; returns how many. */
  purgeExpired(): Promise<number> {
    return this.repository.deleteInactiveSince(clock.now() - this.settings.current('RAG_CONVERSATION_MAX_AGE_DAYS') * DAY_MS);
  }

  private async owned(userId: string, conversationId: string): Promise<ConversationRow> {
    const row = await this.repository.findOwned(conversationId, userId);
    if (!row) throw notFound('Conversation');
    return row;
  }
}

function titleOf(query: string): string {
  const oneLine = query.replace(/\s+/g, ' ').trim();
  return oneLine.length <= TITLE_MAX_LENGTH ? oneLine : `${oneLine.slice(0, TITLE_MAX_LENGTH - 1).trimEnd()}…`;
}

const dates = (row: ConversationRow) => ({ created_at: clock.iso(row.created_at), updated_at: clock.iso(row.updated_at) });

/** What a withheld turn shows instead of its answer. */
export const WITHHELD_ANSWER = 'This answer is hidden: it cites a document you can no longer read, or one that was deleted.';

function toTurnView(row: TurnRow) {
  const shown = row.withheld ? { answer: WITHHELD_ANSWER, sources: [], withheld: true } : { answer: row.answer, sources: JSON.parse(row.sources) as SourceView[] };
  return { query: row.query, ...shown, mode: row.mode, created_at: clock.iso(row.created_at) };
}
