import { Type, type Static } from 'typebox';
import { StringEnum, VISIBLE_TEXT_PATTERN } from '../../core/schemas.js';
import { ANSWER_MODES, SourceView } from '../conversations/index.js';
import { RetrievalSettingsSchema, SEARCH_MODES } from '../retrieval/index.js';
import { CHAT_DEFAULT_K } from './service.js';

const CHAT_MAX_K = 20;
const QUERY_MAX_LENGTH = 4000;

export const ChatBody = Type.Object(
  {
    query: Type.String({ minLength: 1, maxLength: QUERY_MAX_LENGTH, pattern: VISIBLE_TEXT_PATTERN, description: 'The question' }),
    conversation_id: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'Continue this conversation (yours); absent: a new one' })),
    k: Type.Optional(Type.Integer({ minimum: 1, maximum: CHAT_MAX_K, default: CHAT_DEFAULT_K, description: 'Passages retrieved' })),
    mode: Type.Optional(StringEnum(SEARCH_MODES, { default: 'hybrid', description: 'Retrieval mode: hybrid, vector or keyword' })),
  },
  { additionalProperties: false },
);
export type ChatBody = Static<typeof ChatBody>;

const TokenBudgetSchema = Type.Object(
  {
    limit: Type.Integer({ description: 'Context window in tokens (EFFECTIVE_N_CTX)' }),
    estimated_prompt: Type.Integer({ description: "Prompt tokens by the model's tokenizer, after trimming" }),
    reserved_completion: Type.Integer({ description: 'Tokens kept for the answer' }),
    chunks_dropped: Type.Integer({ description: 'Lowest-relevance passages trimmed to fit' }),
    turns_dropped: Type.Integer({ description: 'Oldest conversation turns trimmed to fit' }),
  },
  { description: 'Null when nothing had to be trimmed (and always without a model)' },
);

/** The retrieval's own settings (absent when small talk skipped retrieval) plus the chat's. */
const ChatRetrievalSettings = Type.Object(
  {
    ...Type.Partial(RetrievalSettingsSchema).properties,
    k: Type.Integer(),
    mode: StringEnum(SEARCH_MODES),
    classification: StringEnum(['small_talk', 'document', 'metadata'] as const, { description: 'What the classifier made of the question' }),
    retrieved: Type.Boolean({ description: 'false when small talk was answered without retrieval' }),
    rewritten_query: Type.Union([Type.String(), Type.Null()], { description: 'The standalone query searched for a follow-up (RAG_QUERY_REWRITE_ENABLED), else null' }),
    expanded_query: Type.Union([Type.String(), Type.Null()], { description: "The question plus the chat model's extra terms, as searched (RAG_QUERY_EXPANSION_ENABLED), else null" }),
  },
  { description: 'Effective retrieval settings for the query' },
);

const Timing = Type.Object({
  classify: Type.Number({ description: 'ms, classification and query rewriting' }),
  retrieve: Type.Number({ description: 'ms' }),
  generate: Type.Number({ description: 'ms, generation (or quoting) of the answer' }),
});

const metadata = {
  conversation_id: Type.String(),
  sources: Type.Array(SourceView),
  token_budget: Type.Union([TokenBudgetSchema, Type.Null()]),
  retrieval_settings: ChatRetrievalSettings,
  timing: Timing,
  mode: StringEnum(ANSWER_MODES, { description: 'generative (a model answered) or extractive (no model: quoted passages)' }),
};

export const ChatResponse = Type.Object({ ...metadata, answer: Type.String() });
