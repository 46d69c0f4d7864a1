/**
 * Turns a user's query into a cheap FTS5 MATCH expression. bm25() scores every row the expression
 * matches (~1.5 µs a row here), so a naive OR over every word of a question costs ~100 ms at 100k
 * chunks; the plan below bounds the rows scored instead, using document frequencies probed per term.
 */

/** English function words: they match most chunks and say nothing about the topic. */
export const STOPWORDS = new Set(
  (
    'a about above after again against all also am an and any are as at be because been before being below between both but by ' +
    'can could did do does doing done down during each either else etc even ever every few for from further get gets got had has ' +
    'have having he her here hers herself him himself his how however i if in into is it its itself just let like may me might ' +
    'mine more most much must my myself need no nor not now of off on once one only or other others our ours ourselves out over ' +
    'own per please same shall she should since so some such than that the their theirs them themselves then there these they ' +
    'this those though through thus to too under until up upon us use used using very via was we well were what whatever when ' +
    'where whether which while who whom whose why will with within without would yet you your yours yourself yourselves'
  ).split(' '),
);

export const KEYWORD_LIMITS = {
  /** Longest distinct words kept from a long query (length is a cheap first proxy for rarity). */
  maxCandidateTerms: 12,
  /** A term's document frequency is counted up to this many rows: enough to call it common. */
  probeCap: 2000,
  /** Rows bm25 may score for the OR part: rarest terms are added while their frequencies fit. */
  rowBudget: 1000,
  maxOrTerms: 8,
  /** Common terms that refine the ranking of rows found by the rare ones. */
  maxRefiningTerms: 4,
  /** With only common terms, their AND over the newest `rowBudget` matching rows. */
  maxAndTerms: 3,
} as const;

/** Words as FTS5's unicode61 tokenizer cuts them (letters, digits, marks): quotes, *, -, ( ) and AND/OR syntax fall away. */
export function queryWords(query: string): string[] {
  const words = query.toLowerCase().match(/[\p{L}\p{N}\p{M}]+/gu) ?? [];
  return [...new Set(words)];
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
  /** Matching chunks, counted up to KEYWORD_LIMITS.probeCap. */
  df: number;
}

export interface KeywordPlan {
  match: string;
  /** Only common terms: rank just the newest matches (the vector side carries such vague queries). */
  windowed: boolean;
  /** Tried when a windowed AND finds nothing: the rarest common term alone. */
  relaxed?: string;
  terms: string[];
}

/**
 * Rare terms are OR'd while their frequencies fit the row budget; common terms only re-rank
 * rows that a rare term found (`R OR (R AND C)` scores the rows of R alone, with C's weight added).
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
  if (!rare.length) {
    const and = common.slice(0, KEYWORD_LIMITS.maxAndTerms).map((f) => f.term);
    const relaxed = and.length > 1 ? quoteTerm(and[0]) : undefined;
    return { match: and.map(quoteTerm).join(' AND '), windowed: true, relaxed, terms: and };
  }
  const refine = common.slice(0, KEYWORD_LIMITS.maxRefiningTerms).map((f) => f.term);
  const anyRare = `(${rare.map((f) => quoteTerm(f.term)).join(' OR ')})`;
  const match = refine.length ? `${anyRare} OR (${anyRare} AND (${refine.map(quoteTerm).join(' OR ')}))` : anyRare;
  return { match, windowed: false, terms: [...rare.map((f) => f.term), ...refine] };
}
