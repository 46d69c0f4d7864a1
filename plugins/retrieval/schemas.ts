import { Type, type Static } from 'typebox';
import { StringEnum, VISIBLE_TEXT_PATTERN } from '../../core/schemas.js';
import { DEFAULT_FUSION } from './fusion.js';
import { DEFAULT_K, MAX_K, SEARCH_MODES, SEARCH_PER_DOCUMENT } from './service.js';

export const SearchBody = Type.Object(
  {
    query: Type.String({ minLength: 1, maxLength: 2000, pattern: VISIBLE_TEXT_PATTERN, description: 'Question or keywords; FTS syntax in it is taken literally' }),
    k: Type.Optional(Type.Integer({ minimum: 1, maximum: MAX_K, default: DEFAULT_K, description: 'Results wanted' })),
    mode: Type.Optional(StringEnum(SEARCH_MODES, { default: 'hybrid', description: 'hybrid (vector + keyword, fused), vector or keyword' })),
    per_document: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_K,
        default: SEARCH_PER_DOCUMENT,
        description: "Chunks of one document among the first results at most: a document's further chunks come after every other document's (nothing is dropped). 1 (default): one result per document first; 0: no cap, the best passages in order",
      }),
    ),
  },
  { additionalProperties: false },
);
export type SearchBody = Static<typeof SearchBody>;

const SearchResult = Type.Object({
  rank: Type.Integer({ minimum: 1 }),
  score: Type.Number({ description: 'Fused score in hybrid mode, bm25 (higher is better) in keyword mode, cosine similarity in vector mode' }),
  chunk_id: Type.String(),
  document_id: Type.String(),
  filename: Type.String(),
  page: Type.Optional(Type.Integer()),
  heading: Type.Optional(Type.String()),
  text: Type.String(),
});

const Weights = Type.Object({
  vector: Type.Number(),
  keyword: Type.Number(),
  document: Type.Number({ description: 'Weight of the whole-document keyword ranking in hybrid mode (0 when it did not run: another mode, a metadata filter, or a query of common words only)' }),
  soft: Type.Number({ description: "Weight of soft term matching in hybrid mode (0 when it did not run: off for this path (SEARCH_SOFT_MATCH_CHUNKS 0, the default), another mode, a metadata filter, a question without content words, or an embedding model that is not a token table)" }),
});

export const RetrievalSettingsSchema = Type.Object(
  {
    k: Type.Integer(),
    mode: StringEnum(SEARCH_MODES),
    mode_used: StringEnum(SEARCH_MODES),
    reason: Type.Optional(Type.String()),
    fusion: StringEnum(['rrf', 'weighted', 'none'] as const),
    score: StringEnum(['rrf', 'weighted', 'bm25', 'cosine'] as const),
    rrf_k: Type.Optional(Type.Integer()),
    weights: Weights,
    document_confidence: Type.Number({ description: "The whole-document ranking's first document: its place (best chunk) gains weights.document / (rrf_k + 1) × document_confidence × its lead over the second (bm25, (s1 − s2) / s1) besides its place's gain; 0 when that ranking did not run" }),
    keyword_coverage: Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], {
      description:
        `The share of the question's terms (each weighed by its rarity) that the keyword list's first chunk holds, 0 to 1; at ${DEFAULT_FUSION.keywordConfidence.coverage} or more the question is in that passage's own words and the keyword list weighs ${DEFAULT_FUSION.keywordConfidence.weight} in this search (weights.keyword). Null when not hybrid or no chunk holds a keyword`,
    }),
    candidates: Type.Object({ vector: Type.Integer(), keyword: Type.Integer(), documents: Type.Integer({ description: 'Whole documents ranked by bm25 over all their text' }) }, { description: 'Candidates per side before fusion' }),
    near_duplicate_jaccard: Type.Number(),
    per_document: Type.Integer({ description: 'Chunks of one document among the first results at most, before other documents\' (0: no cap)' }),
    filters: Type.Object({
      document_ids: Type.Optional(Type.Array(Type.String())),
      groups: Type.Optional(Type.Array(Type.String())),
      metadata: Type.Optional(Type.Array(Type.Object({ field: Type.String(), value: Type.String() }), { description: 'Metadata values every chunk had to have (metadata rules matched the question)' })),
    }),
    model_id: Type.Union([Type.String(), Type.Null()]),
    rerank: Type.Union(
      [
        Type.Object({
          model_id: Type.String(),
          top_n: Type.Integer({ description: 'RERANK_TOP_N: fused candidates the reranker may score' }),
          budget_ms: Type.Integer({ description: 'RERANK_BUDGET_MS: time the stage may take per query' }),
          scored: Type.Integer({ description: 'Candidates scored (fewer than top_n when the budget ran out); they lead the results in the reranker order' }),
          ms: Type.Number({ description: 'Time the stage took for this query' }),
        }),
        Type.Null(),
      ],
      { description: 'The cross-encoder stage after fusion; null when no reranker is installed (MODEL_DIR/rerankers) or RERANK_BUDGET_MS is 0' },
    ),
  },
  { $id: 'RetrievalSettings', description: 'Effective retrieval settings for the query' },
);

export const SearchResponseSchema = Type.Object({
  results: Type.Array(SearchResult),
  retrieval_settings: RetrievalSettingsSchema,
});
