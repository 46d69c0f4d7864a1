import { conflict } from '../../core/errors.js';
import { BoundedMap } from '../../core/bounded-map.js';
import { decodeWordIds } from '../../core/db/chunk-words.js';
import type { Embedder } from '../../native/embeddings/index.js';
import type { VectorIndex } from '../../native/vector-index/index.js';
import { searchVectors } from '../search-index/index.js';
import { DEFAULT_FUSION, NEAR_DUPLICATE_JACCARD, SOFT_PASSAGES, capPerDocument, dropNearDuplicates, fuse, passageScore, passagesInPlace, textSignature, withDocumentRanking, keywordConfident, withKeywordConfidence, withSoftMatch, withSoftPassages, type DocumentPlace, type FusionMethod, type FusionSettings, type Scored, type TextSignature } from './fusion.js';
import { KEYWORD_LIMITS, candidateTerms, planKeywordQuery, termCoverage, type KeywordPlan, type RankedMatch, type TermFrequency } from './keyword-query.js';
import { DenseRows, TERM_CACHE_BYTES, WORD_CACHE_BYTES, WordNumbering, WordVectors, softMatchScores, softTermWeight } from './soft-match.js';
import type { ChunkHit, ReadScope, ReadableKeys, RetrievalRepository, SearchFilters } from './repository.sqlite.js';
import { RERANK_BATCH, type CrossEncoder } from '../../native/reranker/index.js';
import { rerankCandidates, type RerankReport, type RerankSettings } from './rerank.js';

export const SEARCH_MODES = ['hybrid', 'vector', 'keyword'] as const;
export type SearchMode = (typeof SEARCH_MODES)[number];
export const DEFAULT_K = 5;
export const MAX_K = 50;
/**
 * `POST /api/search` finds documents: by default each document's best chunk comes before any document's second
 * (per_document 1), which the evaluation's dev half chose for document recall (docs/retrieval-quality.md). The chat
 * keeps the fusion's own setting (no cap): its answer quotes passages, and a document's second chunk often holds the answer.
 */
export const SEARCH_PER_DOCUMENT = 1;
/**
 * Candidates each side hands to fusion for `wanted` results (k, or the reranker's RERANK_TOP_N when more): enough for
 * RRF to find agreement, few enough to hydrate cheaply. The same 20 for any k up to 20, so that a search's first
 * results do not depend on how many it asks for (the web UI asks for 20, the chat for 5): with 2k, k 20 ranked dev's
 * first five worse (recall@5 0.488 against 0.508 at k 10).
 */
const candidatesPerSide = (wanted: number) => Math.max(20, wanted);
/** Keyword rows kept to represent documents the whole-document ranking finds (none of their first rows a candidate). */
const DOCUMENT_CHUNKS = 100;
/** Rows fetched per side at most when filters hide many candidates. */
const MAX_FETCH = 1000;
/**
 * Recent query vectors, by model and exact text. With a MiniLM-class model the query's embedding is
 * most of a hybrid search (~3 ms of 6 here); the same text comes back for another page, k or mode,
 * and from chat follow-ups that search again.
 */
const QUERY_VECTOR_CACHE = 256;
/**
 * The first fused documents whose chunks soft term matching scores (session 21: the prototype re-ranked the first 30;
 * the evaluation's first 30 hold about 1,100 chunks). SEARCH_SOFT_MATCH_CHUNKS bounds the chunks read, in this order.
 */
const SOFT_MATCH_DOCUMENTS = 30;

/** Soft term matching: the chunks of the first candidate documents it may score per search (0: off). */
export interface SoftMatchSettings {
  chunks: number;
}

/** Where the embedder and vector index in force come from (app.activeEmbedding); both null on a box without a model. */
interface SearchSources {
  embedder(): Embedder | null;
  vectors(): VectorIndex | null;
}

interface SearchRequest {
  query: string;
  k?: number;
  mode?: SearchMode;
  filters?: SearchFilters;
  /** The reader's groups (app.groups.readerGroups): only documents allowed to one of them are searched. */
  groups: string[];
  /** Chunks of one document among the first results at most (0: no cap); the fusion settings' when absent. */
  perDocument?: number;
  /** The lists' weights in hybrid mode; the fusion settings' when absent (the chat asks for its own: CHAT_FUSION_WEIGHTS). */
  weights?: FusionSettings['weights'];
  /** The trust in a passage holding the question's words; the fusion settings' when absent (the chat's: CHAT_KEYWORD_CONFIDENCE). */
  keywordConfidence?: FusionSettings['keywordConfidence'];
  /** Soft term matching's chunk budget (0: off); the service's (SEARCH_SOFT_MATCH_CHUNKS) when absent. */
  softMatchChunks?: number;
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
  /**
   * document: the whole-document keyword ranking's weight (0 when it did not run: not hybrid, a metadata filter, only
   * common words); soft: the soft term match's (0 when it did not run: its chunk budget 0, SEARCH_SOFT_MATCH_CHUNKS or
   * CHAT_SOFT_MATCH_CHUNKS; not hybrid, a metadata filter, or an embedder without a token table); keyword: the keyword
   * list's weight in this search (keyword_coverage raised it when it reached the fusion's keywordConfidence).
   */
  weights: { vector: number; keyword: number; document: number; soft: number };
  /** The whole-document ranking's first document's place gains weights.document / (rrf_k + 1) × this × its lead (0 when that ranking did not run). */
  document_confidence: number;
  /** The share of the question's terms (weighed by rarity) the keyword list's first chunk holds; null when not hybrid or that list is empty. */
  keyword_coverage: number | null;
  /** documents: whole documents ranked for the fusion. */
  candidates: { vector: number; keyword: number; documents: number };
  near_duplicate_jaccard: number;
  /** Chunks of one document among the first results at most, before other documents' (0: no cap). */
  per_document: number;
  filters: SearchFilters;
  model_id: string | null;
  /** The cross-encoder stage after fusion; null when no reranker is installed or it is off. */
  rerank: RerankReport | null;
}

export interface SearchResponse {
  results: SearchResult[];
  retrieval_settings: RetrievalSettings;
}

type VectorSide = { embedder: Embedder; vectors: VectorIndex } | { unavailable: string };

/** The query as the vector side searches it: its vector, and the chunks a metadata filter admits (absent: no filter). */
interface EmbeddedQuery {
  vector: Float32Array;
  allowed?: Set<number>;
}

/** Lets the event loop run once: a reply the embedder's thread posted meanwhile is taken in. */
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** Hybrid retrieval: HNSW vector candidates and bounded-cost bm25 candidates, fused and deduplicated. */
export class RetrievalService {
  private readonly queryVectors = new BoundedMap<string, Float32Array>(QUERY_VECTOR_CACHE);
  private readonly wordVectors = new WordVectors<number>(WORD_CACHE_BYTES, () => new DenseRows());
  private readonly termVectors = new WordVectors<string>(TERM_CACHE_BYTES, () => new Map());
  private readonly wordNumbering = new WordNumbering();

  constructor(
    private readonly repository: RetrievalRepository,
    private readonly sources: SearchSources,
    private readonly fusion: FusionSettings = DEFAULT_FUSION,
    private readonly reranker: { model: CrossEncoder | null; settings: RerankSettings } = { model: null, settings: { topN: 0, budgetMs: 0 } },
    private readonly softMatch: SoftMatchSettings = { chunks: 0 },
  ) {}

  async search(request: SearchRequest): Promise<SearchResponse> {
    const k = Math.min(MAX_K, Math.max(1, Math.floor(request.k ?? DEFAULT_K)));
    const mode = request.mode ?? 'hybrid';
    const filters = request.filters ?? {};
    const perDocument = request.perDocument ?? this.fusion.perDocument;
    const requested: FusionSettings = { ...this.fusion, weights: request.weights ?? this.fusion.weights, keywordConfidence: request.keywordConfidence ?? this.fusion.keywordConfidence };
    const scope: ReadScope = { ...filters, groups: request.groups };
    const side = this.vectorSide();
    if ('unavailable' in side && mode === 'vector') throw conflict('embedder_unavailable', `Vector search is unavailable: ${side.unavailable}`);
    const modeUsed: SearchMode = 'unavailable' in side ? 'keyword' : mode;
    const { model: reranker, settings: rerank } = this.reranker;
    const reranking = reranker && rerank.budgetMs > 0 ? reranker : null;
    // What fusion must yield: the k results, or the reranker's candidates when one is in force.
    const wanted = reranking ? Math.max(k, rerank.topN) : k;
    const n = candidatesPerSide(wanted);

    const hits = new Map<number, ChunkHit>();
    const looked = new Set<number>();
    /** Looks up the chunks of rowids not seen yet: the allowed ones land in `hits`. */
    const hydrate = async (items: Scored[]) => {
      const fresh = items.map((item) => item.rowid).filter((rowid) => !looked.has(rowid));
      for (const rowid of fresh) looked.add(rowid);
      for (const hit of await this.repository.chunksByRowid(fresh, scope)) hits.set(hit.rowid, hit);
    };
    // The access keys of what the reader may read (null: every indexed document), for both sides.
    const readable = await this.repository.readableKeys(scope);
    // Whole documents are ranked too in hybrid mode, unless a metadata filter narrows the chunks (a document's rank
    // would then weigh chunks the filter hides).
    const rankDocuments = modeUsed === 'hybrid' && requested.weights.document > 0 && !scope.metadata?.length;
    const vectors = modeUsed !== 'keyword' && !('unavailable' in side) ? side : null;
    // The query embeds in the embedder's own thread while the keyword side plans. Between the keyword stages (after the
    // plan, after the chunk ranking) the event loop turns once to take the vector in, and once it is back the graph walk
    // is queued on libuv's pool, to run while this thread goes on with the keyword SQL. A slow model's vector, not back
    // by the end, is awaited then and the walk follows, as the keywords never wait for it.
    const embedding = vectors ? this.embedQuery(vectors.embedder, request.query, scope) : null;
    const arrived: { query?: EmbeddedQuery } = {};
    embedding?.then((query) => (arrived.query = query), () => undefined); // a failure is met where it is awaited below
    const walk = (query: EmbeddedQuery) => this.vectorCandidates(vectors!.vectors, query, n, readable);
    let walking: Promise<Candidates> | null = null;
    /** Between keyword stages: lets the embedder's reply in, and queues the walk as soon as the vector is back. */
    const pause = async () => {
      if (walking || !embedding) return;
      if (!arrived.query) await nextTurn();
      if (arrived.query) (walking = walk(arrived.query)).catch(() => undefined); // its failure is met where it is awaited
    };
    const { plan, frequencies } = modeUsed !== 'vector' ? await this.keywordPlan(request.query) : { plan: null, frequencies: [] };
    if (plan) await pause();
    const keywordSide = plan ? await this.keywordCandidates(plan, n, scope, readable.keys, rankDocuments, pause) : null;
    const vectorSide = walking ? await walking : embedding ? await walk(await embedding) : null;
    await hydrate([...(vectorSide?.list ?? []), ...(keywordSide?.list ?? [])]);
    const vectorList = vectorSide ? await this.visible(vectorSide, n, hydrate, hits) : [];
    const keywordList = keywordSide ? await this.visible(keywordSide, n, hydrate, hits) : [];

    const signatures = new Map<number, TextSignature>();
    const signatureOf = (item: Scored) => {
      let signature = signatures.get(item.rowid);
      if (!signature) signatures.set(item.rowid, (signature = textSignature(hits.get(item.rowid)!.text)));
      return signature;
    };
    // Deduplicated per side too, so that copies do not push distinct chunks down a side's ranking.
    const [vector, keyword] = [vectorList, keywordList].map((list) => dropNearDuplicates(list, signatureOf, n));
    // The chunks in the index (the vector index's live ones): the denominator of the terms' idf in the keyword coverage and soft matching.
    const indexed = vectors?.vectors.size() ?? 0;
    // A question in the keyword list's first chunk's own words: that list weighs more in this search (withKeywordConfidence).
    const coverage = modeUsed === 'hybrid' && keyword.length ? termCoverage(frequencies, hits.get(keyword[0].rowid)!.text, indexed) : null;
    const fusion = withKeywordConfidence(requested, coverage);
    const fused = modeUsed === 'hybrid' ? fuse(vector, keyword, fusion) : modeUsed === 'vector' ? vector : keyword;
    const documents = keywordSide?.documents;
    const withDocumentPlaces = documents?.ranking.length ? await this.withDocuments(fused, documents, { fusion, perDocument, wanted, hits, hydrate }) : fused;
    const documentOf = (item: Scored) => hits.get(item.rowid)!.document_id;
    // Soft term matching weighs a document by all its chunks, so (as the whole-document ranking) not under a metadata filter.
    const softBudget = request.softMatchChunks ?? this.softMatch.chunks;
    const softly = modeUsed === 'hybrid' && fusion.weights.soft > 0 && softBudget > 0 && frequencies.length > 0 && !scope.metadata?.length && vectors?.embedder.tokenTable ? vectors.embedder : null;
    const soft = softly ? await this.withSoftMatch(withDocumentPlaces, frequencies, softly, documentOf, fusion, softBudget, indexed) : null;
    // Its best chunks the reader may read, best first: a document's passage may be one no list found.
    const softPassages = soft ? await this.softPassages(soft.passages, hydrate, hits) : [];
    const matched = soft ? withSoftPassages(soft.items, softPassages, documentOf) : withDocumentPlaces;
    // In hybrid mode a document's places go to its passages in the order both chunk lists give them at equal weights
    // (the keyword list's at keywordConfidence.passages for a question in a passage's own words; and, when soft matching
    // ran, its own best chunks at SOFT_PASSAGE_WEIGHT).
    const passageKeyword = keywordConfident(fusion, coverage) ? fusion.keywordConfidence.passages : 1;
    const ranked = modeUsed === 'hybrid' ? passagesInPlace(matched, documentOf, passageScore(vector, keyword, fusion.rrfK, softPassages, passageKeyword)) : matched;
    const diverse = capPerDocument(ranked, documentOf, perDocument);
    const unique = dropNearDuplicates(diverse, signatureOf, wanted);
    const reranked = reranking ? await rerankCandidates(reranking, request.query, unique, (item) => hits.get(item.rowid)!.text, rerank, RERANK_BATCH) : null;

    return {
      results: (reranked?.list ?? unique).slice(0, k).map((item, index) => toResult(hits.get(item.rowid)!, index + 1, item.score)),
      retrieval_settings: { ...this.settings({ k, mode, modeUsed, n, filters, side, fusion, perDocument, documents: documents?.ranking.length ?? null, soft: softly !== null, coverage }), rerank: reranked?.report ?? null },
    };
  }

  private settings(run: { k: number; mode: SearchMode; modeUsed: SearchMode; n: number; filters: SearchFilters; side: VectorSide; fusion: FusionSettings; perDocument: number; documents: number | null; soft: boolean; coverage: number | null }): Omit<RetrievalSettings, 'rerank'> {
    const { k, mode, modeUsed, n, filters, side, fusion, perDocument, documents, soft, coverage } = run;
    const hybrid = modeUsed === 'hybrid';
    return {
      k,
      mode,
      mode_used: modeUsed,
      ...('unavailable' in side && mode === 'hybrid' ? { reason: side.unavailable } : {}),
      fusion: hybrid ? fusion.method : 'none',
      score: hybrid ? fusion.method : modeUsed === 'vector' ? 'cosine' : 'bm25',
      ...(hybrid && fusion.method === 'rrf' ? { rrf_k: fusion.rrfK } : {}),
      weights: hybrid
        ? { ...fusion.weights, document: documents === null ? 0 : fusion.weights.document, soft: soft ? fusion.weights.soft : 0 }
        : { vector: modeUsed === 'vector' ? 1 : 0, keyword: modeUsed === 'keyword' ? 1 : 0, document: 0, soft: 0 },
      document_confidence: hybrid && documents !== null ? fusion.documentConfidence : 0,
      keyword_coverage: coverage === null ? null : Math.round(coverage * 1000) / 1000,
      candidates: { vector: modeUsed === 'keyword' ? 0 : n, keyword: modeUsed === 'vector' ? 0 : n, documents: documents ?? 0 },
      near_duplicate_jaccard: NEAR_DUPLICATE_JACCARD,
      per_document: perDocument,
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

  /** The query's vector and, with a metadata filter, the chunks that pass it (the only ones the vector side may return). */
  private async embedQuery(embedder: Embedder, query: string, scope: ReadScope): Promise<EmbeddedQuery> {
    const [vector, allowed] = await Promise.all([this.queryVector(embedder, query), scope.metadata?.length ? this.repository.rowidsWithMetadata(scope.metadata) : undefined]);
    return { vector, allowed };
  }

  /**
   * The nearest chunks among the documents the scope may read (the addon filters their access keys inside its
   * graph walk) and, with a metadata filter, among the chunks that pass it. The walk is queued on libuv's pool
   * before this returns its promise.
   */
  private async vectorCandidates(vectors: VectorIndex, query: EmbeddedQuery, n: number, readable: ReadableKeys): Promise<Candidates> {
    const fetch = async (limit: number) => (await searchVectors(vectors, query.vector, limit, query.allowed, readable.keys ?? undefined)).map(({ label, score }) => ({ rowid: label, score }));
    return { list: await fetch(n), limit: n, fetch };
  }

  private async queryVector(embedder: Embedder, query: string): Promise<Float32Array> {
    const key = `${embedder.modelId}\n${query}`;
    const cached = this.queryVectors.get(key);
    if (cached) {
      // Least recently used goes first: a hit moves to the end.
      this.queryVectors.delete(key);
      this.queryVectors.set(key, cached);
      return cached;
    }
    const [vector] = await embedder.embed([query], { priority: 'query' });
    this.queryVectors.set(key, vector);
    return vector;
  }

  /** The keyword side's plan (null when none of the query's terms is found) and the terms' probed frequencies it was made from. */
  private async keywordPlan(query: string): Promise<{ plan: KeywordPlan | null; frequencies: TermFrequency[] }> {
    const terms = candidateTerms(query);
    const probed = await this.repository.termFrequencies(terms, KEYWORD_LIMITS.probeCap);
    const frequencies = terms.map((term, i) => ({ term, df: probed[i] }));
    return { plan: planKeywordQuery(frequencies), frequencies };
  }

  /**
   * The fused candidates with soft term matching added as one more list (soft-match.ts): every chunk of the first
   * SOFT_MATCH_DOCUMENTS candidate documents (at most `budget`, in the documents' order) against the
   * query's terms, each weighed by its idf from the frequencies the keyword plan probed over the `indexed` chunks (the
   * vector index's live chunks, as the keyword coverage counts them); each candidate ranks by its document's best chunk.
   */
  private async withSoftMatch(items: Scored[], frequencies: TermFrequency[], embedder: Embedder, documentOf: (item: Scored) => string, fusion: FusionSettings, budget: number, indexed: number): Promise<SoftMatched> {
    if (!items.length) return { items, passages: [] };
    const documents = [...new Set(items.map(documentOf))].slice(0, SOFT_MATCH_DOCUMENTS);
    const termWords = frequencies.map(({ term }) => term);
    const [stored, known] = await Promise.all([this.repository.documentWordsOf(documents, budget), this.repository.vocabularyIds(termWords)]);
    const terms = frequencies.map(({ term, df }) => ({ word: term, weight: softTermWeight(df, indexed) }));
    const idOf = new Map(known.map(({ id, word }) => [word, id]));
    const words = this.wordNumbering.of(
      stored.map((row) => ({ counts: decodeWordIds(row.counts), words: decodeWordIds(row.words) })),
      termWords.map((word) => idOf.get(word)),
      budget,
    );
    await Promise.all([
      this.termVectors.load(embedder, termWords, async (list) => new Map(list.map((word) => [word, word]))),
      this.wordVectors.load(embedder, words.words, async (ids) => new Map((await this.repository.vocabularyWords(ids)).map(({ id, word }) => [id, word]))),
    ]);
    // From here to the scores, nothing awaits: the rows read are the ones just looked up.
    const termRows = this.termVectors.copy(termWords);
    const wordRows = this.wordVectors.rowsOf(words.words);
    if (termRows.dimension !== wordRows.dimension) return { items, passages: [] }; // the model changed between the two loads
    const scores = softMatchScores(terms, termRows.rows, words, wordRows);
    const best = new Map<string, number>();
    // Each chunk's place in its document's reading order (a document's rows come in order, each holding its next chunks).
    const read = new Map<string, number>();
    const chunks = Array.from(words.documents, (row, chunk) => {
      const document_id = stored[row].document_id;
      const position = read.get(document_id) ?? 0;
      read.set(document_id, position + 1);
      best.set(document_id, Math.max(best.get(document_id) ?? 0, scores[chunk]));
      return { document_id, position, score: scores[chunk] };
    });
    const passages = chunks.filter((chunk) => chunk.score > 0).sort((a, b) => b.score - a.score).slice(0, SOFT_PASSAGES);
    return { items: withSoftMatch(items, (item) => best.get(documentOf(item)) ?? 0, fusion), passages };
  }

  /** The soft term match's best chunks as Scored, best first: looked up by place, hydrated, those the reader may not read left out. */
  private async softPassages(passages: SoftMatched['passages'], hydrate: (items: Scored[]) => Promise<void>, hits: Map<number, ChunkHit>): Promise<Scored[]> {
    if (!passages.length) return [];
    const list = (await this.repository.chunksAt(passages)).map(({ rowid, score }) => ({ rowid, score }));
    await hydrate(list);
    return list.filter((item) => hits.has(item.rowid));
  }

  /**
   * The keyword side: bm25 over chunks, bounded by the plan; with `rankDocuments`, also the first n whole documents
   * for the same match. Not for a windowed plan (only common words): its chunk ranking reads just the newest
   * matches to bound the cost, and a document ranking would read them all. `pause` runs between the chunk and the
   * document rankings (search() queues the graph walk there once the query's vector is back).
   */
  private async keywordCandidates(plan: KeywordPlan, n: number, scope: ReadScope, keys: ReadableKeys['keys'], rankDocuments: boolean, pause: () => Promise<void>): Promise<KeywordCandidates> {
    /** The first n rows are the candidates; `depth` rows are fetched (the deeper ones for the document ranking). */
    const ranked = async (query: RankedMatch, depth = n) => {
      const floor = plan.windowed ? await this.repository.newestMatchFloor(query.match, KEYWORD_LIMITS.rowBudget, scope.metadata) : 0;
      const fetch = (limit: number) => this.repository.keywordRanked(query, limit, keys, { minRowid: floor, metadata: scope.metadata });
      const rows = await fetch(depth);
      return { candidates: { list: rows.slice(0, n), limit: n, fetch }, rows };
    };
    const relaxed = plan.relaxed;
    if (!rankDocuments || !plan.rare) {
      const { candidates } = await ranked(plan);
      return { ...candidates, ...(relaxed ? { relaxed: async () => (await ranked(relaxed)).candidates } : {}) };
    }
    // bm25 scores every match whatever the limit, so the deeper rows cost 0.2-0.4 ms more: they hold the best chunk of
    // a ranked document none of whose first n chunks is a candidate.
    const { candidates, rows } = await ranked(plan, Math.max(n, DOCUMENT_CHUNKS));
    await pause();
    // Ranked by the rare terms alone: a common term's doclist over whole documents costs a search most of its time.
    const ranking = await this.repository.documentsRanked(plan.rare, n, scope, keys === null);
    return { ...candidates, documents: { ranking, chunks: rows } };
  }

  /**
   * The fused chunks with the whole-document ranking added (withDocumentRanking). A ranked document none of whose
   * chunks is a candidate is represented by its best chunk among the keyword side's deeper rows, looked up only if
   * it could be among the first `wanted` results; without one there, it is left out.
   */
  private async withDocuments(fused: Scored[], documents: NonNullable<KeywordCandidates['documents']>, run: { fusion: FusionSettings; perDocument: number; wanted: number; hits: Map<number, ChunkHit>; hydrate: (items: Scored[]) => Promise<void> }): Promise<Scored[]> {
    const { fusion, perDocument, wanted, hits, hydrate } = run;
    const documentOf = (item: Scored | DocumentPlace) => ('rowid' in item ? hits.get(item.rowid)!.document_id : item.document);
    const ranked = withDocumentRanking(fused, documents.ranking, (rowid) => hits.get(rowid)!.document_id, fusion);
    // Dropping near-duplicates may pull later items up: look twice as deep as the results wanted.
    const reachable = new Set(capPerDocument(ranked, documentOf, perDocument).slice(0, 2 * wanted));
    const places = new Map(ranked.filter((item): item is DocumentPlace => !('rowid' in item) && reachable.has(item)).map((place) => [place.document, place]));
    const best = new Map<string, Scored>();
    for (const chunk of documents.chunks) {
      const place = places.get(chunk.document_id);
      if (place && !best.has(place.document)) best.set(place.document, { rowid: chunk.rowid, score: place.score });
    }
    await hydrate([...best.values()]);
    return ranked.flatMap((item) => {
      if ('rowid' in item) return [item];
      const chunk = best.get(item.document);
      return chunk && hits.has(chunk.rowid) ? [chunk] : [];
    });
  }

  /**
   * The first n candidates whose chunks may be returned (both sides rank readable chunks only; a chunk
   * whose document is mid-reindex may still drop here); fetches deeper while some drop, and relaxes a plan that finds nothing.
   */
  private async visible(candidates: Candidates, n: number, hydrate: (items: Scored[]) => Promise<void>, hits: Map<number, ChunkHit>): Promise<Scored[]> {
    let { list: raw, limit } = candidates;
    for (;;) {
      const list = raw.filter((item) => hits.has(item.rowid)).slice(0, n);
      if (list.length >= n || raw.length < limit || limit >= MAX_FETCH) {
        if (list.length || !candidates.relaxed) return list;
        const relaxed = await candidates.relaxed();
        await hydrate(relaxed.list);
        return this.visible(relaxed, n, hydrate, hits);
      }
      raw = await candidates.fetch((limit *= 4));
      await hydrate(raw);
    }
  }
}

/** Soft term matching's result: the candidates with its list added, and its best chunks by their place (best first). */
interface SoftMatched {
  items: Scored[];
  passages: Array<{ document_id: string; position: number; score: number }>;
}

/** The keyword side's chunk candidates and, when asked for, its ranking of whole documents (for the same match). */
interface KeywordCandidates extends Candidates {
  /** Whole documents best first, and the keyword side's deeper chunk rows (best first) to represent them. */
  documents?: { ranking: Array<{ document_id: string; score: number }>; chunks: Array<Scored & { document_id: string }> };
}

/** One side's candidates, best first: the first `limit` fetched, and how to fetch deeper. */
interface Candidates {
  list: Scored[];
  limit: number;
  fetch(limit: number): Promise<Scored[]>;
  /** The keyword plan's fallback when its matches are all hidden or absent. */
  relaxed?: () => Promise<Candidates>;
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
