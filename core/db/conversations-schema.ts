import type { Generated } from 'kysely';

/** Tables of chat history (migration 0006). Timestamps are epoch ms; JSON columns are text. */

export interface ConversationsTable {
  id: string;
  user_id: string;
  /** The first question, truncated. */
  title: string;
  /** Turns kept (at most RAG_CONVERSATION_MAX_TURNS): read by the list without counting rows. */
  turn_count: number;
  created_at: number;
  /** Last turn stored: the age purge counts from it. */
  updated_at: number;
}

export interface ConversationTurnsTable {
  id: Generated<number>;
  conversation_id: string;
  query: string;
  answer: string;
  /** JSON array of the sources returned with the answer. */
  sources: string;
  mode: 'generative' | 'extractive';
  created_at: number;
}
