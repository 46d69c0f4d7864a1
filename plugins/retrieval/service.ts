import { conflict } from '../../core/errors.js';
import type { Embedder } from '../../native/embeddings/embedder.js';
import type { VectorIndex } from '../../native/vector-index/vector-index.js';
import { DEFAULT_FUSION, NEAR_DUPLICATE_JACCARD, dropNearDuplicates, fuse, textSignature, type FusionMethod, type FusionSettings, type Scored, type TextSignature } from './fusion.js';
import { KEYWORD_LIMITS, candidateTerms, planKeywordQuery } from './keyword-query.js';
import type { ChunkHit, RetrievalRepository, SearchFilters } from './repository.js';

export const SEARCH_MODES = ['hybrid', 'vector', 'keyword'] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];
export const DEFAULT_K = 5;
export const MAX_K = 50;
/** Candidates each side hands to fusion: enough for RRF to find agreement, few enough to hydrate cheaply. */
export const candidatesPerSide = (k: number) => Math.min(100, Math.max(20, 2 * k));
/** Rows fetched per side at most when filters hide many candidates. */
const MAX_FETCH = 1000;

/** Where the embedder and vector index in force come from (app.searchIndex); both null on a box without a model. */
export interface SearchSources {
  embedder(): Embedder | null;
  vectors(): VectorIndex | null;
}

export interface SearchRequest {
  query: string;
  k?: number;
  mode?: SearchMode;
  filters?: SearchFilters;
}

export interface SearchResult {
  rank: number;
  score: number;
  chunk_id: string;
  document_id: string;
  filename: string;
  page?: number;
  heading?: string;
  text: string;
}

export interface RetrievalSettings {
  k: number;
  mode: SearchMode;
  /** What actually ran: hybrid falls back to keyword when no embedding model is usable. */
  mode_used: SearchMode;
  reason?: string;
  /** How `score` was computed: fused (rrf/weighted), or the one side's bm25 or cosine. */
  fusion: FusionMethod | 'none';
  score: 'rrf' | 'weighted' | 'bm25' | 'cosine';
  rrf_k?: number;
  weights: { vector: number; keyword: number };
  candidates: { vector: number; keyword: number };
  near_duplicate_jaccard: number;
  filters: SearchFilters;
  model_id: string | null;
}

export interface SearchResponse {
  results: SearchResult[];
  retrieval_settings: RetrievalSettings;
}

type VectorSide = { embedder: Embedder; vectors: VectorIndex } | { unavailable: string };

/** Hybrid retrieval: HNSW vector candidates and bounded-cost bm25 candidates, fused and deduplicated. */
export class RetrievalService {
  constructor(
    private readonly repository: RetrievalRepository,
    private readonly sources: SearchSources,
    private readonly fusion: FusionSettings = DEFAULT_FUSION,
  ) {}

  async search(request: SearchRequest): Promise<SearchResponse> {
    const k = Math.min(MAX_K, Math.max(1, Math.floor(request.k ?? DEFAULT_K)));
    const mode = request.mode ?? 'hybrid';
    const filters = request.filters ?? {};
    const side = this.vectorSide();
    if ('unavailable' in side && mode === 'vector') throw conflict('embedder_unavailable', `Vector search is unavailable: ${side.unavailable}`);
    const modeUsed: SearchMode = 'unavailable' in side ? 'keyword' : mode;
    const n = candidatesPerSide(k);

    const hits = new Map<number, ChunkHit>();
    const signatures = new Map<number, TextSignature>();
    const signatureOf = (item: Scored) => {
      let signature = signatures.get(item.rowid);
      if (!signature) signatures.set(item.rowid, (signature = textSignature(hits.get(item.rowid)!.text)));
      return signature;
    };
    // Deduplicated per side too, so that copies do not push distinct chunks down a side's ranking.
    const [vector, keyword] = (
      await Promise.all([
        modeUsed !== 'keyword' && !('unavailable' in side) ? this.vectorCandidates(side, request.query, n, filters, hits) : [],
        modeUsed !== 'vector' ? this.keywordCandidates(request.query, n, filters, hits) : [],
      ])
    ).map((list) => dropNearDuplicates(list, signatureOf, n));
    const ranked = modeUsed === 'hybrid' ? fuse(vector, keyword, this.fusion) : modeUsed === 'vector' ? vector : keyword;
    const unique = dropNearDuplicates(ranked, signatureOf, k);

    return {
      results: unique.map((item, index) => toResult(hits.get(item.rowid)!, index + 1, item.score)),
      retrieval_settings: this.settings({ k, mode, modeUsed, n, filters, side }),
    };
  }

  private settings(run: { k: number; mode: SearchMode; modeUsed: SearchMode; n: number; filters: SearchFilters; side: VectorSide }): RetrievalSettings {
    const { k, mode, modeUsed, n, filters, side } = run;
    const hybrid = modeUsed === 'hybrid';
    return {
      k,
      mode,
      mode_used: modeUsed,
      ...('unavailable' in side && mode === 'hybrid' ? { reason: side.unavailable } : {}),
      fusion: hybrid ? this.fusion.method : 'none',
      score: hybrid ? this.fusion.method : modeUsed === 'vector' ? 'cosine' : 'bm25',
      ...(hybrid && this.fusion.method === 'rrf' ? { rrf_k: this.fusion.rrfK } : {}),
      weights: hybrid ? this.fusion.weights : { vector: modeUsed === 'vector' ? 1 : 0, keyword: modeUsed === 'keyword' ? 1 : 0 },
      candidates: { vector: modeUsed === 'keyword' ? 0 : n, keyword: modeUsed === 'vector' ? 0 : n },
      near_duplicate_jaccard: NEAR_DUPLICATE_JACCARD,
      filters,
      model_id: 'unavailable' in side || modeUsed === 'keyword' ? null : side.embedder.modelId,
    };
  }

  private vectorSide(): VectorSide {
    const embedder = this.sources.embedder();
    const vectors = this.sources.vectors();
    if (!embedder) return { unavailable: 'no embedding model is installed' };
    if (!vectors) return { unavailable: 'the vector index is not loaded' };
    if (vectors.modelId !== embedder.modelId || vectors.dimension !== embedder.dimension) return { unavailable: 'the vector index belongs to another embedding model' };
    return { embedder, vectors };
  }

  private async vectorCandidates(side: { embedder: Embedder; vectors: VectorIndex }, query: string, n: number, filters: SearchFilters, hits: Map<number, ChunkHit>): Promise<Scored[]> {
    const [queryVector] = await side.embedder.embed([query]);
    return this.visible(async (limit) => side.vectors.search(queryVector, limit).map(({ label, score }) => ({ rowid: label, score })), n, filters, hits);
  }

  private async keywordCandidates(query: string, n: number, filters: SearchFilters, hits: Map<number, ChunkHit>): Promise<Scored[]> {
    const terms = candidateTerms(query);
    const frequencies = await this.repository.termFrequencies(terms, KEYWORD_LIMITS.probeCap);
    const plan = planKeywordQuery(terms.map((term, i) => ({ term, df: frequencies[i] })));
    if (!plan) return [];
    const ranked = async (match: string) => {
      const floor = plan.windowed ? await this.repository.newestMatchFloor(match, KEYWORD_LIMITS.rowBudget) : 0;
      return this.visible((limit) => this.repository.keywordRanked(match, limit, floor), n, filters, hits);
    };
    const found = await ranked(plan.match);
    return found.length || !plan.relaxed ? found : ranked(plan.relaxed);
  }

  /** The first n candidates whose chunks may be returned; fetches deeper while filters hide too many. */
  private async visible(fetch: (limit: number) => Promise<Scored[]>, n: number, filters: SearchFilters, hits: Map<number, ChunkHit>): Promise<Scored[]> {
    for (let limit = n; ; limit *= 4) {
      const raw = await fetch(limit);
      const found = await this.repository.chunksByRowid(raw.map((item) => item.rowid), filters);
      for (const hit of found) hits.set(hit.rowid, hit);
      const allowed = new Set(found.map((hit) => hit.rowid));
      const list = raw.filter((item) => allowed.has(item.rowid)).slice(0, n);
      if (list.length >= n || raw.length < limit || limit >= MAX_FETCH) return list;
    }
  }
}

function toResult(hit: ChunkHit, rank: number, score: number): SearchResult {
  return {
    rank,
    score,
    chunk_id: hit.chunk_id,
    document_id: hit.document_id,
    filename: hit.filename,
    ...(hit.page !== null ? { page: hit.page } : {}),
    ...(hit.heading ? { heading: hit.heading } : {}),
    text: hit.text,
  };
}
