import { Type, type Static } from 'typebox';
import { StringEnum } from '../../core/schemas.js';

export const ANSWER_MODES = ['generative', 'extractive'] as const;
export type AnswerMode = (typeof ANSWER_MODES)[number];

/** One source of an answer: the numbered chunk the answer's [n] markers point at, quoted verbatim. */
export const SourceView = Type.Object(
  {
    marker: Type.Integer({ minimum: 1, description: 'The number used for this source in the answer, as [n]' }),
    chunk_id: Type.String(),
    document_id: Type.String(),
    filename: Type.String(),
    page: Type.Optional(Type.Integer()),
    heading: Type.Optional(Type.String()),
    score: Type.Number({ description: 'Retrieval score (see retrieval_settings.score for its kind)' }),
    text: Type.String({ description: 'Verbatim text of the chunk' }),
  },
  { $id: 'ChatSource' },
);
export type SourceView = Static<typeof SourceView>;

const ConversationSummary = Type.Object({
  id: Type.String(),
  title: Type.String({ description: 'The first question, truncated' }),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  turns: Type.Integer({ description: 'Turns kept (at most RAG_CONVERSATION_MAX_TURNS)' }),
});

export const ConversationList = Type.Object({ conversations: Type.Array(ConversationSummary), total: Type.Integer() });

const TurnView = Type.Object({
  query: Type.String(),
  answer: Type.String(),
  withheld: Type.Optional(Type.Boolean({ description: 'True when the turn cites a document the caller may not read now (or that was deleted): its answer and sources are hidden' })),
  sources: Type.Array(SourceView),
  mode: StringEnum(ANSWER_MODES),
  created_at: Type.String({ format: 'date-time' }),
});

export const ConversationView = Type.Object({
  id: Type.String(),
  title: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  updated_at: Type.String({ format: 'date-time' }),
  turns: Type.Array(TurnView, { description: 'Oldest first' }),
});
export type ConversationView = Static<typeof ConversationView>;

export const ListConversationsQuery = Type.Object(
  {
    limit: Type.Integer({ minimum: 1, maximum: 200, default: 50 }),
    offset: Type.Integer({ minimum: 0, default: 0 }),
  },
  { additionalProperties: false },
);

export const ConversationIdParams = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64 }) });
