/**
 * Turns a user's query into a cheap FTS5 MATCH expression. bm25() scores every row the expression
 * matches (~1 µs a row here), so a naive OR over every word of a question costs ~100 ms at 100k
 * chunks; and to weigh each term it first reads the term's whole doclist (~35 ns an entry), which
 * for a few common words costs as much again. The plan below bounds both, using document
 * frequencies probed per term.
 */
import { stemmer } from 'stemmer';
import { STOPWORDS, eachWord } from '../../core/text/words.js';

/** Rows bm25 may score for the OR part: rarest terms are added while their frequencies fit. */
const ROW_BUDGET = 1000;

export const KEYWORD_LIMITS = {
  /** Longest distinct words kept from a long query (length is a cheap first proxy for rarity). */
  maxCandidateTerms: 12,
  /** A term's document frequency is counted one row past the budget (a term found more often can only refine), then estimated. */
  probeCap: ROW_BUDGET + 1,
  rowBudget: ROW_BUDGET,
  maxOrTerms: 8,
  /** Common terms that refine the ranking of rows found by the rare ones. */
  maxRefiningTerms: 4,
  /** With only common terms, their AND over the newest `rowBudget` matching rows. */
  maxAndTerms: 3,
  /** Common terms join, rarest first, while their frequencies sum to at most this: their doclists then cost bm25() about what scoring the row budget does. */
  commonTermRows: 30 * ROW_BUDGET,
} as const;

/** Words as FTS5's unicode61 tokenizer cuts them (letters, digits, marks), each once: quotes, *, -, ( ) and AND/OR syntax fall away. */
export function queryWords(query: string): string[] {
  const words = new Set<string>();
  eachWord(query, (word) => words.add(word));
  return [...words];
}

/** Content words of the query, longest first. Function words never reach the MATCH: bm25 would read their doclists whole. */
export function candidateTerms(query: string): string[] {
  return queryWords(query)
    .filter((word) => !STOPWORDS.has(word))
    .map((word, position) => ({ word, position }))
    .sort((a, b) => b.word.length - a.word.length || a.position - b.position)
    .slice(0, KEYWORD_LIMITS.maxCandidateTerms)
    .map(({ word }) => word);
}

/** A quoted FTS5 string: the tokenizer still stems it, but nothing inside is syntax. */
export const quoteTerm = (term: string) => `"${term.replaceAll('"', '""')}"`;

export interface TermFrequency {
  term: string;
  /** Matching chunks: exact up to KEYWORD_LIMITS.probeCap, estimated beyond it. */
  df: number;
}

/**
 * A term's document frequency from a probe that stopped at `cap` matches: the count below the cap;
 * at the cap, extrapolated from how far into the chunks' rowid range the last match counted lies
 * (matches come in rowid order), so common terms can still be told apart at the cost of a rare one.
 */
export function probedFrequency(probe: { n: number; last: number | null }, cap: number, rowids: { first: number | null; last: number | null }): number {
  const n = Number(probe.n);
  if (n < cap || probe.last === null || rowids.first === null || rowids.last === null) return n;
  return Math.max(n, Math.round((n * (rowids.last - rowids.first + 1)) / (probe.last - rowids.first + 1)));
}

/** A MATCH expression and the matching chunks of each of its phrases, in its order (a term may stand twice): what hearth_bm25 weighs them by. */
export interface RankedMatch {
  match: string;
  phraseFrequencies: number[];
}

export interface KeywordPlan extends RankedMatch {
  /** The rare terms' OR alone (absent for a windowed plan): what whole documents are ranked by. */
  rare?: string;
  /** Only common terms: rank just the newest matches (the vector side carries such vague queries). */
  windowed: boolean;
  /** Tried when a windowed AND finds nothing: the rarest common term alone. */
  relaxed?: RankedMatch;
  terms: string[];
}

/**
 * Rare terms are OR'd while their frequencies fit the row budget; common terms only re-rank
 * rows that a rare term found (`R OR (R AND C)` scores the rows of R alone, with C's weight added),
 * as many as fit their own budget: the most common add the least weight and cost the most.
 */
export function planKeywordQuery(frequencies: TermFrequency[]): KeywordPlan | null {
  const present = frequencies.filter((f) => f.df > 0).sort((a, b) => a.df - b.df);
  if (!present.length) return null;
  const rare: TermFrequency[] = [];
  let rows = 0;
  for (const f of present) {
    if (rare.length >= KEYWORD_LIMITS.maxOrTerms || rows + f.df > KEYWORD_LIMITS.rowBudget) break;
    rare.push(f);
    rows += f.df;
  }
  const common = present.slice(rare.length);
  const termsOf = (list: TermFrequency[]) => list.map((f) => f.term);
  const frequenciesOf = (list: TermFrequency[]) => list.map((f) => f.df);
  if (!rare.length) {
    const and = commonTerms(common, KEYWORD_LIMITS.maxAndTerms, 1);
    const relaxed = and.length > 1 ? { match: quoteTerm(and[0].term), phraseFrequencies: [and[0].df] } : undefined;
    return { match: termsOf(and).map(quoteTerm).join(' AND '), phraseFrequencies: frequenciesOf(and), windowed: true, relaxed, terms: termsOf(and) };
  }
  const refine = commonTerms(common, KEYWORD_LIMITS.maxRefiningTerms, 0);
  const anyRare = `(${termsOf(rare).map(quoteTerm).join(' OR ')})`;
  if (!refine.length) return { match: anyRare, phraseFrequencies: frequenciesOf(rare), rare: anyRare, windowed: false, terms: termsOf(rare) };
  const match = `${anyRare} OR (${anyRare} AND (${termsOf(refine).map(quoteTerm).join(' OR ')}))`;
  return { match, phraseFrequencies: frequenciesOf([...rare, ...rare, ...refine]), rare: anyRare, windowed: false, terms: termsOf([...rare, ...refine]) };
}

/** The rarest common terms, up to `max`, while their frequencies fit KEYWORD_LIMITS.commonTermRows (at least `min` of them). */
function commonTerms(common: TermFrequency[], max: number, min: number): TermFrequency[] {
  const kept: TermFrequency[] = [];
  let rows = 0;
  for (const f of common) {
    if (kept.length >= max || (kept.length >= min && rows + f.df > KEYWORD_LIMITS.commonTermRows)) break;
    kept.push(f);
    rows += f.df;
  }
  return kept;
}

/** idf of a term found in `df` of `chunks` chunks; a term no chunk holds weighs as if one did. */
export const termWeight = (df: number, chunks: number) => Math.log(1 + Math.max(chunks, 1) / Math.max(df, 1));

/**
 * How much of the question a text holds: the share of its terms found in the text, each term and each word of the
 * text by its Porter stem (the keyword index's own stemmer: `archives` holds `archive`), each term weighed by its
 * rarity over `chunks` chunks (termWeight), 0 to 1. A question in a passage's own words scores near 1, a paraphrase
 * low. Only the text's words that begin as a term's stem does are stemmed (Porter keeps a word's first two letters).
 */
export function termCoverage(frequencies: TermFrequency[], text: string, chunks: number): number {
  if (!frequencies.length) return 0;
  const stems = frequencies.map(({ term }) => stemmer(term));
  const starts = new Set(stems.map((stem) => stem.slice(0, 2)));
  const held = new Set<string>();
  eachWord(text, (word) => {
    if (starts.has(word.slice(0, 2))) held.add(stemmer(word));
  });
  let found = 0;
  let total = 0;
  frequencies.forEach(({ df }, index) => {
    const weight = termWeight(df, chunks);
    total += weight;
    if (held.has(stems[index])) found += weight;
  });
  return total > 0 ? found / total : 0;
}
