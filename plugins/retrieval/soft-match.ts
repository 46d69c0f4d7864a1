/**
 * Soft term matching (session 21; for search only when SEARCH_SOFT_MATCH_CHUNKS is set, before the chat's extractive
 * answers unless EXTRACTIVE_SOFT_MATCH_CHUNKS is 0): each of the question's content words
 * meets its most similar word of a chunk, by the cosine of the two words' own vectors from a token-table embedder (the
 * same word: 1), weighed by the question word's rarity (idf); a chunk scores the weighted mean of those best matches,
 * and a document its best chunk. A paraphrase ("refresh the package lists" against "update the cache") then counts word
 * by word, where bm25 needs the same word and a chunk's one vector averages the answering line with the rest of the
 * chunk. Hybrid search ranks its first candidate documents by it as one more RRF list (fusion.ts, weights.soft). Only
 * for an embedder whose words mean the same alone (Embedder.tokenTable): a word's vector is then a table lookup in the
 * embedder's thread, cached here. docs/retrieval-quality.md has its figures and its cost.
 */
import { BoundedMap } from '../../core/bounded-map.js';
import type { Embedder } from '../../native/embeddings/index.js';
import { STOPWORDS, eachWord } from './keyword-query.js';

/**
 * Word vectors kept between searches, in bytes at most: 64k words of a 128-dimension model, as many distinct words as
 * the evaluation's 16-19k chunks hold twice over. Least recently used goes first. Nothing is kept while soft matching is off.
 */
const WORD_CACHE_BYTES = 32 * 1024 * 1024;
/** Longer "words" (hashes, base64, long identifiers) never match another word softly; they still match exactly. */
const MAX_WORD_LENGTH = 40;

/** A question word and its weight (idf over the chunks). */
export interface SoftTerm {
  word: string;
  weight: number;
}

/** idf of a word found in `frequency` of `chunks` chunks; a word no chunk holds weighs as if one did. */
export const softTermWeight = (frequency: number, chunks: number) => Math.log(1 + Math.max(chunks, 1) / Math.max(frequency, 1));

/** The chunks' words as soft matching compares them: ids into one vocabulary, each chunk's distinct content words. */
export interface ChunkWords {
  vocabulary: string[];
  chunks: Int32Array[];
}

/**
 * The texts' content words (eachWord, without function words), each once a chunk, numbered in one vocabulary: one Map
 * lookup a word, and each distinct word's similarities are then computed once for all the chunks.
 */
export function chunkWords(texts: string[]): ChunkWords {
  const idOf = new Map<string, number>();
  const vocabulary: string[] = [];
  const chunks = texts.map((text) => {
    const ids = new Set<number>();
    eachWord(text, (word) => {
      if (STOPWORDS.has(word)) return;
      let id = idOf.get(word);
      if (id === undefined) {
        idOf.set(word, (id = vocabulary.length));
        vocabulary.push(word);
      }
      ids.add(id);
    });
    return Int32Array.from(ids);
  });
  return { vocabulary, chunks };
}

/** Each word's vector by the embedder in force, embedded once (in its thread, before bulk work) and then cached. */
export class WordVectors {
  private cache: { modelId: string; vectors: BoundedMap<string, Float32Array> } | null = null;

  async of(embedder: Embedder, words: string[]): Promise<Map<string, Float32Array>> {
    if (this.cache?.modelId !== embedder.modelId) {
      this.cache = { modelId: embedder.modelId, vectors: new BoundedMap(Math.max(1, Math.floor(WORD_CACHE_BYTES / (4 * embedder.dimension)))) };
    }
    const { vectors } = this.cache;
    const found = new Map<string, Float32Array>();
    const missing: string[] = [];
    for (const word of words) {
      const vector = vectors.get(word);
      if (vector) {
        found.set(word, vector);
        vectors.delete(word);
        vectors.set(word, vector);
      } else if (word.length <= MAX_WORD_LENGTH) missing.push(word);
    }
    if (missing.length) {
      const embedded = await embedder.embed(missing, { priority: 'query' });
      missing.forEach((word, index) => {
        found.set(word, embedded[index]);
        vectors.set(word, embedded[index]);
      });
    }
    return found;
  }
}

/**
 * Each chunk's soft match with the terms, 0 to 1, in the order given: Σ weight × (best cosine of the term with one of
 * the chunk's words, at least 0) / Σ weight. A term meets itself at 1 whether or not it has a vector; a word without
 * one matches only itself.
 */
export function softMatchScores(terms: SoftTerm[], words: ChunkWords, vectorOf: Map<string, Float32Array>): Float64Array {
  const scores = new Float64Array(words.chunks.length);
  const total = terms.reduce((sum, term) => sum + term.weight, 0);
  if (!terms.length || total <= 0) return scores;
  const width = terms.length;
  const termVectors = terms.map((term) => vectorOf.get(term.word));
  // Each vocabulary word's similarity with each term, once for all the chunks holding it: row `id` of `similarities`.
  const similarities = new Float32Array(words.vocabulary.length * width);
  words.vocabulary.forEach((word, id) => {
    const vector = vectorOf.get(word);
    for (let t = 0; t < width; t++) {
      const other = termVectors[t];
      similarities[id * width + t] = terms[t].word === word ? 1 : vector && other ? Math.max(0, dot(vector, other)) : 0;
    }
  });
  const best = new Float32Array(width);
  words.chunks.forEach((ids, index) => {
    best.fill(0);
    for (const id of ids) {
      const row = id * width;
      for (let t = 0; t < width; t++) if (similarities[row + t] > best[t]) best[t] = similarities[row + t];
    }
    let sum = 0;
    for (let t = 0; t < width; t++) sum += terms[t].weight * best[t];
    scores[index] = sum / total;
  });
  return scores;
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i] * b[i];
  return sum;
}
