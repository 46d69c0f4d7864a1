/** Fusing the vector and keyword candidate lists, and dropping near-identical texts. */

export type FusionMethod = 'rrf' | 'weighted';

export interface FusionSettings {
  /** rrf: Σ weight / (rrf_k + rank); weighted: Σ weight × score min-max normalised within its list. */
  method: FusionMethod;
  rrfK: number;
  /**
   * vector and keyword: the chunk lists; document: the whole-document keyword ranking, each chunk weighed by its
   * document's place; soft: the candidates ranked by their document's soft term match (soft-match.ts), when it runs.
   * document and soft: hybrid only.
   */
  weights: { vector: number; keyword: number; document: number; soft: number };
  /** Chunks of one document among the first results at most, before other documents' chunks (0: no cap). */
  perDocument: number;
  /**
   * The whole-document ranking's first document: its place (its best candidate chunk, or its own place) gains its
   * document weight × this × its lead over the second document (bm25, (s1 − s2) / s1) on top of its place's gain. A
   * question whose rare words one document holds far more than any other (a package's name, an error code) then keeps
   * that document first; its other chunks are not lifted, so passages of other documents keep their places.
   */
  documentConfidence: number;
  /**
   * A question in a passage's own words: when the keyword list's first chunk holds at least `coverage` of the
   * question's terms (termCoverage: weighed by rarity), the keyword list of chunks weighs `weight` in that search
   * instead of weights.keyword (hybrid RRF only; a coverage above 1 never fires). There the keyword list has the
   * answering chunk first, and the vector list's agreeing neighbours must not push it out. `passages`: the keyword
   * list's weight beside the vector list's 1 when a document's passages are ordered in such a search (passageScore;
   * 1 keeps them equal).
   */
  keywordConfidence: { coverage: number; weight: number; passages: number };
}

/**
 * Chosen on the dev halves of the real-collection evaluation with the embedder shipped with Hearth (potion-base-4M,
 * session 20; docs/retrieval-quality.md): its vector list finds paraphrases the keywords miss (vector 3, keyword 1,
 * document 3 in session 20). Session 24's fresh question sets (dev halves) gave the keyword list of chunks more say,
 * vector 2.5, keyword 2, document 3: a question in a document's own words keeps the chunk that holds them (hybrid then
 * at or above keyword-only on those questions on three halves of four, against one), MRR@10 and nDCG@10 higher on all
 * four halves. With Hearth's WordNet table the vector list was the weaker one and weighed 1 (keyword 1, document 4).
 * documentConfidence 2 (session 20, dev halves, 0 / 1 / 2 / 4): the same recall@5, MRR@10 +0.022 and +0.029 on dev,
 * +0.014 and +0.008 on test; 4 lost a question of recall on one dev half.
 * soft 7 (session 21, dev halves, 3 / 7 / 15 / 30): the soft term match's weight where it runs (SEARCH_SOFT_MATCH_CHUNKS,
 * CHAT_SOFT_MATCH_CHUNKS).
 * keywordConfidence 0.6 / 16 (session 25, dev halves, coverage 0.5-1 × weight 3-16): hybrid finds the manual pages'
 * questions in their page's own words as often as keyword-only does (0.937 → 0.984), recall@5 +3 questions there, the
 * same on markdown; on test the same recall@5, MRR@10 up on both halves. Its passages 8 (dev, 1 / 2 / 3 / 4
 * / 8): the answer's span in a top-5 result +3 and +2 questions on dev, +6 and +7 on test.
 */
export const DEFAULT_FUSION: FusionSettings = {
  method: 'rrf',
  rrfK: 30,
  weights: { vector: 2.5, keyword: 2, document: 3, soft: 7 },
  perDocument: 0,
  documentConfidence: 2,
  keywordConfidence: { coverage: 0.6, weight: 16, passages: 8 },
};

/** Whether a search's keyword list covers the question enough to be trusted (keywordConfidence; RRF only). */
export function keywordConfident(settings: FusionSettings, coverage: number | null): boolean {
  return settings.method === 'rrf' && coverage !== null && coverage >= settings.keywordConfidence.coverage;
}

/** The settings of one search: the keyword list weighs keywordConfidence.weight when its first chunk covers the question. */
export function withKeywordConfidence(settings: FusionSettings, coverage: number | null): FusionSettings {
  const { weight } = settings.keywordConfidence;
  if (!keywordConfident(settings, coverage) || weight <= settings.weights.keyword) return settings;
  return { ...settings, weights: { ...settings.weights, keyword: weight } };
}

/** How far the whole-document ranking's first document leads the second: (s1 − s2) / s1 of their bm25, 0 to 1. */
export function documentLead(documents: Array<{ score: number }>): number {
  const [first, second] = [documents[0]?.score ?? 0, documents[1]?.score ?? 0];
  return first > 0 ? Math.min(1, Math.max(0, (first - second) / first)) : 0;
}

/**
 * The chat's weights: its extractive answer quotes lines of the passages it retrieves, and a passage that holds the
 * question's own words is the one that quotes the answer. On the dev halves the search's weights above lost 8 and 5
 * answers that quote the span; these (the search's before session 20) kept them (docs/retrieval-quality.md).
 */
export const CHAT_FUSION_WEIGHTS: FusionSettings['weights'] = { vector: 1, keyword: 1, document: 4, soft: 7 };

/**
 * The chat's: the same trust in a passage holding the question's words, but its passages keep their order (soft term
 * matching's best chunks lead it there): the keyword list at 2 or 8 in that order lost 1-3 answers' spans on the manual
 * pages' halves (session 25).
 */
export const CHAT_KEYWORD_CONFIDENCE: FusionSettings['keywordConfidence'] = { ...DEFAULT_FUSION.keywordConfidence, passages: 1 };

export interface Scored {
  rowid: number;
  score: number;
}

/** Each list best first; the result is every rowid of either list, best first. */
export function fuse(vector: Scored[], keyword: Scored[], settings: FusionSettings): Scored[] {
  const total = new Map<number, number>();
  const add = (list: Scored[], weight: number) => {
    const contribution = contributionIn(list, settings);
    list.forEach((item, index) => total.set(item.rowid, (total.get(item.rowid) ?? 0) + weight * contribution(item, index)));
  };
  add(vector, settings.weights.vector);
  add(keyword, settings.weights.keyword);
  return [...total].map(([rowid, score]) => ({ rowid, score })).sort(byScore);
}

/** A document of the whole-document ranking none of whose chunks is a candidate: the caller finds its best chunk. */
export interface DocumentPlace {
  document: string;
  score: number;
}

/**
 * Adds the whole-document keyword ranking as a list of its own: each chunk gains its document's place (a document
 * ranked first lifts every candidate chunk of it alike; the chunk lists then order them), and a ranked document
 * with no candidate chunk takes a place of its own. Best first.
 */
export function withDocumentRanking(fused: Scored[], documents: Array<{ document_id: string; score: number }>, documentOf: (rowid: number) => string, settings: FusionSettings): Array<Scored | DocumentPlace> {
  const contribution = contributionIn(documents, settings);
  const gain = new Map(documents.map((document, index) => [document.document_id, settings.weights.document * contribution(document, index)]));
  const lifted = fused.map((item) => ({ rowid: item.rowid, score: item.score + (gain.get(documentOf(item.rowid)) ?? 0) }));
  const present = new Set(fused.map((item) => documentOf(item.rowid)));
  const places = documents.filter((document) => !present.has(document.document_id)).map((document) => ({ document: document.document_id, score: gain.get(document.document_id)! }));
  const lead = settings.documentConfidence * documentLead(documents);
  if (lead > 0) {
    // The leading document's place: its best candidate chunk (the fused list is best first), else its own place.
    const leader = documents[0].document_id;
    const place: { score: number } | undefined = lifted.find((item) => documentOf(item.rowid) === leader) ?? places.find((item) => item.document === leader);
    place!.score += gain.get(leader)! * lead;
  }
  return [...lifted, ...places].sort(byScoreChunksFirst);
}

/**
 * Adds the soft term match (soft-match.ts) as one more list: the items ranked by `soft` (a tie keeps their order),
 * each gaining weights.soft × its contribution there. Best first.
 */
export function withSoftMatch(items: Scored[], soft: (item: Scored) => number, settings: FusionSettings): Scored[] {
  const list = items.map((item, index) => ({ item, index, score: soft(item) })).sort((a, b) => b.score - a.score || a.index - b.index);
  const contribution = contributionIn(list, settings);
  return list.map((entry, rank) => ({ rowid: entry.item.rowid, score: entry.item.score + settings.weights.soft * contribution(entry, rank) })).sort(byScore);
}

/** Best first; on a tie a chunk before a document's place, chunks by rowid and places by document id (a stable order). */
function byScoreChunksFirst(a: Scored | DocumentPlace, b: Scored | DocumentPlace): number {
  if (b.score !== a.score) return b.score - a.score;
  if ('rowid' in a) return 'rowid' in b ? a.rowid - b.rowid : -1;
  return 'rowid' in b ? 1 : a.document.localeCompare(b.document);
}

const byScore = (a: Scored, b: Scored) => b.score - a.score || a.rowid - b.rowid;

/** What an item at `index` of `list` adds, before its list's weight: by rank (rrf) or by its min-max normalised score. */
function contributionIn(list: Array<{ score: number }>, settings: FusionSettings): (item: { score: number }, index: number) => number {
  return settings.method === 'rrf' ? rrf(settings.rrfK) : minMax(list);
}

const rrf = (k: number) => (_item: { score: number }, index: number) => 1 / (k + index + 1);

function minMax(list: Array<{ score: number }>): (item: { score: number }) => number {
  const scores = list.map((item) => item.score);
  const low = Math.min(...scores);
  const span = Math.max(...scores) - low;
  return (item) => (span > 0 ? (item.score - low) / span : 1);
}

/**
 * Diversity: past `perDocument` chunks of one document, its further chunks wait behind every other
 * document's, so that one long document cannot fill the first places; nothing is dropped.
 */
export function capPerDocument<T>(items: T[], documentOf: (item: T) => string, perDocument: number): T[] {
  if (perDocument <= 0) return items;
  const seen = new Map<string, number>();
  const first: T[] = [];
  const later: T[] = [];
  for (const item of items) {
    const document = documentOf(item);
    const count = (seen.get(document) ?? 0) + 1;
    seen.set(document, count);
    (count <= perDocument ? first : later).push(item);
  }
  return [...first, ...later];
}

/**
 * A chunk's reciprocal ranks in the two chunk lists, summed at equal weights (fuse at vector 1, keyword 1; the keyword
 * list at `keywordWeight` where the question is in a passage's own words, keywordConfidence.passages): how well it
 * answers as a passage.
 */
export function passageScore(vector: Scored[], keyword: Scored[], rrfK: number, soft: Scored[] = [], keywordWeight = 1): (item: Scored) => number {
  const lists: FusionSettings = { ...DEFAULT_FUSION, method: 'rrf', rrfK, weights: { ...DEFAULT_FUSION.weights, vector: 1, keyword: keywordWeight } };
  const score = new Map(fuse(vector, keyword, lists).map((item) => [item.rowid, item.score]));
  soft.forEach((item, index) => score.set(item.rowid, (score.get(item.rowid) ?? 0) + SOFT_PASSAGE_WEIGHT * rrf(rrfK)(item, index)));
  return (item) => score.get(item.rowid) ?? 0;
}

/**
 * The soft term match's best chunks (session 23): how much their own ranking weighs, beside the two chunk lists at 1
 * each, when a document's passages are ordered (chosen on dev: 2 and 8 did no better), and how many of them (the best
 * over all the candidate documents' chunks scored) take part.
 */
export const SOFT_PASSAGE_WEIGHT = 4;
export const SOFT_PASSAGES = 30;

/**
 * The soft term match's best chunks that no list found, each as one more chunk of its document (only for a document
 * already ranked), at the bottom (half the lowest score): the document's places do not move, and passagesInPlace may
 * then put the chunk on its first one.
 */
export function withSoftPassages(items: Scored[], soft: Scored[], documentOf: (item: Scored) => string): Scored[] {
  if (!items.length) return items;
  const present = new Set(items.map((item) => item.rowid));
  const ranked = new Set(items.map(documentOf));
  const floor = Math.min(...items.map((item) => item.score)) / 2;
  const added = soft.filter((item) => !present.has(item.rowid) && ranked.has(documentOf(item))).map((item) => ({ rowid: item.rowid, score: floor }));
  return added.length ? [...items, ...added] : items;
}

/**
 * Which passage of a document comes first, the documents' places unchanged: each document's chunks are reordered among
 * the places its chunks hold, by `passage` (higher first; ties keep their order), and each takes the score of the place
 * it lands on, so scores still fall down the list. The fusion's weights decide which documents rank (the vector list
 * weighs three times the keywords there); `passage` decides which of a document's chunks is shown first, where a chunk
 * holding the question's rare words must not lose to one the vector list happened to rank higher.
 */
export function passagesInPlace<T extends { score: number }>(items: T[], documentOf: (item: T) => string, passage: (item: T) => number): T[] {
  const byDocument = new Map<string, T[]>();
  for (const item of items) {
    const document = documentOf(item);
    const chunks = byDocument.get(document);
    if (chunks) chunks.push(item);
    else byDocument.set(document, [item]);
  }
  const order = new Map<string, T[]>();
  for (const [document, chunks] of byDocument) {
    const ranked = chunks.map((item, index) => ({ item, index, passage: passage(item) })).sort((a, b) => b.passage - a.passage || a.index - b.index);
    order.set(document, ranked.map((entry) => entry.item));
  }
  const taken = new Map<string, number>();
  return items.map((place) => {
    const document = documentOf(place);
    const next = taken.get(document) ?? 0;
    taken.set(document, next + 1);
    const item = order.get(document)![next];
    return item === place ? place : { ...item, score: place.score };
  });
}

/** Word-set Jaccard at or above which two chunks count as the same text (a file uploaded twice, a repeated boilerplate block). */
export const NEAR_DUPLICATE_JACCARD = 0.9;

/** What near-duplicate detection compares: a hash of the word sequence (case and punctuation ignored) and the sorted hashes of its distinct words. */
export interface TextSignature {
  sequence: number;
  words: Uint32Array;
}

const WORD_CHAR = /[\p{L}\p{N}]/u;

/** One pass of FNV-1a over the lower-cased words: no strings are built, so it costs a few µs per chunk. */
export function textSignature(text: string): TextSignature {
  const lower = text.toLowerCase();
  const words: number[] = [];
  let sequence = 0x811c9dc5;
  let word = 0x811c9dc5;
  let inWord = false;
  for (let i = 0; i <= lower.length; i++) {
    const code = i < lower.length ? lower.charCodeAt(i) : 32;
    const isWordChar = (code >= 97 && code <= 122) || (code >= 48 && code <= 57) || (code > 127 && WORD_CHAR.test(lower[i]));
    if (isWordChar) {
      word = Math.imul(word ^ code, 0x01000193);
      inWord = true;
    } else if (inWord) {
      words.push(word >>> 0);
      sequence = Math.imul(sequence ^ word, 0x01000193);
      word = 0x811c9dc5;
      inWord = false;
    }
  }
  const sorted = Uint32Array.from(words).sort();
  let unique = 0;
  for (let i = 0; i < sorted.length; i++) if (i === 0 || sorted[i] !== sorted[i - 1]) sorted[unique++] = sorted[i];
  return { sequence: sequence >>> 0, words: sorted.subarray(0, unique) };
}

/**
 * Keeps the first (best) of each group of near-identical texts, up to `limit` items. Texts of
 * very different sizes are never compared word by word, so the pairwise check stays cheap.
 */
export function dropNearDuplicates<T>(items: T[], signatureOf: (item: T) => TextSignature, limit: number): T[] {
  const kept: Array<{ item: T; signature: TextSignature }> = [];
  for (const item of items) {
    if (kept.length >= limit) break;
    const signature = signatureOf(item);
    const duplicate = kept.some(({ signature: other }) => other.sequence === signature.sequence || jaccardAtLeast(signature.words, other.words, NEAR_DUPLICATE_JACCARD));
    if (!duplicate) kept.push({ item, signature });
  }
  return kept.map(({ item }) => item);
}

const SKETCH = 16;

/** Jaccard of two sorted sets of word hashes, by merging them; most pairs are ruled out by their 16 smallest hashes first. */
function jaccardAtLeast(a: Uint32Array, b: Uint32Array, threshold: number): boolean {
  if (Math.min(a.length, b.length) < threshold * Math.max(a.length, b.length)) return false; // |A∩B|/|A∪B| ≤ |small|/|large|
  // Bottom-k MinHash: the share of the union's k smallest hashes found in both estimates the Jaccard.
  // Below half, a pair at the threshold is ruled out by mistake with probability < 1e-4 (binomial, k = 16, p = 0.9).
  if (a.length > SKETCH && b.length > SKETCH && shared(a, b, SKETCH) < SKETCH / 2) return false;
  const common = shared(a, b, Infinity);
  return common / (a.length + b.length - common) >= threshold;
}

/** Hashes present in both among the union's `limit` smallest. */
function shared(a: Uint32Array, b: Uint32Array, limit: number): number {
  let count = 0;
  for (let i = 0, j = 0, seen = 0; i < a.length && j < b.length && seen < limit; seen++) {
    if (a[i] === b[j]) count++, i++, j++;
    else if (a[i] < b[j]) i++;
    else j++;
  }
  return count;
}
