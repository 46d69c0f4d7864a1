import type { SourceView } from '../conversations/index.js';
import type { Embedder } from '../../native/embeddings/index.js';
import { STOPWORDS, WordVectors, queryWords, softTermWeight } from '../retrieval/index.js';
import { isTopicWord, contentWords as plainWords } from '../../core/text/words.js';

/**
 * Extractive answers (no chat model): the sentences or lines of the found passages that best answer
 * the question, scored by both arms (the question's rare words, and the embedder's similarity when one
 * is installed) and, with a token-table embedder, by soft term matching (each question word's most similar word of
 * the sentence), near-repeats left out, each with its neighbours in the same block, in about EXTRACTIVE_WORDS
 * words; each quote keeps its marker.
 */
export const EXTRACTIVE_WORDS = 120;

export interface ExtractiveSettings {
  /** About how many words the quotes hold at most. */
  words: number;
  /** Share of the score from the keyword arm when both arms score; the rest is the embedder's. */
  keywordShare: number;
  /**
   * Share of the relevance from soft term matching when the embedder is a token table (session 23): each of the
   * question's content words meets its most similar word of the sentence (cosine of the two words' vectors, the same
   * word 1), weighed by its idf among the sentences, as retrieval's soft matching weighs a chunk; the rest is the two
   * arms above. A sentence's one vector averages the answering words with the rest of it; word by word a paraphrase
   * ("keep it from refreshing" against "does not update") still meets the line that answers.
   */
  softShare: number;
  /** The retrieval's order still counts: a sentence of the first passage gains this much over one of the last. */
  rankBonus: number;
  /** A sentence is quoted only when its arms score at least this share of the best sentence's: the budget is a ceiling, not a quota. */
  minRelative: number;
  /** Word-set Jaccard at or above which a sentence repeats one already quoted. */
  repeatJaccard: number;
  /**
   * Sentences of the same block (paragraph, list item) a quoted sentence brings along, after and before it, while the
   * budget allows: an answer often runs over into the next sentence, and a sentence alone often lacks its subject.
   */
  neighbours: { after: number; before: number };
  /**
   * Added to the relevance of a block's first sentence when the block defines what the question names: its term (a
   * short first line above the text, as reference pages list options, flags, fields and exit codes; or the first
   * column of a two-column line) has every word in the question. Keyword overlap alone misses these: the term is one
   * word (`SHF_ALLOC`, `8`) and its description shares none with the question.
   */
  termBonus: number;
}

/** Chosen on the dev half of the real-collection evaluation (docs/retrieval-quality.md). */
export const EXTRACTIVE_SETTINGS: ExtractiveSettings = { words: EXTRACTIVE_WORDS, keywordShare: 0.3, softShare: 0.85, rankBonus: 0.15, minRelative: 0.4, repeatJaccard: 0.6, neighbours: { after: 2, before: 1 }, termBonus: 0.5 };

/** After a sentence's end mark, not after an abbreviation ("e.g.", "i.e.", "etc.", "vs.") or a lone letter's period (initials: "S.M.A.R.T. status", "J. Smith"). */
const SENTENCE_END = /(?<!\b(?:e\.g|i\.e|etc|vs|cf|\p{L})\.)(?<=[.!?…。！？]["'”’)\]]?)\s+(?=\S)/giu;
/** A line that starts a block of its own (a list item, a table row, a quote, a heading, a fence): other lines continue a hard-wrapped paragraph (see startsBlock for option-led lines). */
const BLOCK_START = /^\s*(?:[-*+]\s|[>|]|\d+[.)]\s|#{1,6}\s|```|~~~)/;
const HAS_WORD = /[\p{L}\p{N}]/u;
/**
 * A sentence that introduces what follows it (a colon, "e.g.,", "for example", "as follows"): quoted alone it leaves
 * the answer hanging, and what it introduces often sits past a blank line (a command, a value). Session 26: answers
 * holding a quote that ends so went from 15-19% to 2-4% on the four halves, at the same length (docs/retrieval-quality.md).
 */
export const INTRODUCES = /(?::|\b(?:e\.g\.|i\.e\.|for example|for instance|such as|as follows|like this),?)\s*$/i;

export interface Quote {
  source: SourceView;
  text: string;
}

/** Word vectors the chat keeps for quoting (~15k words of a 128-dimension model, as int8 rows). */
const QUOTE_WORD_CACHE_BYTES = 2 * 1024 * 1024;

/** An empty table of words' vectors for quoteEmbedder, keyed by the word: one per chat service, kept between answers. */
export const quoteWordTable = (): WordVectors<string> => new WordVectors<string>(QUOTE_WORD_CACHE_BYTES, () => new Map());

/** The embedder in force (null when none is installed: the keyword arm decides alone). */
export type EmbedTexts = {
  embed(texts: string[]): Promise<Float32Array[]>;
  /**
   * Words' own vectors, only for an embedder whose words mean the same alone (Embedder.tokenTable): soft term matching
   * runs when it is there. The chat keeps them between answers (ChatService.embedTexts).
   */
  embedWords?: (words: string[]) => Promise<Float32Array[]>;
} | null;

interface Sentence {
  source: SourceView;
  /** Its block among all the passages' blocks: neighbours are quoted along only within one. */
  block: number;
  /** Its place among the passages' sentences: quotes read in the passages' order. */
  order: number;
  /** Where it lies in its source's text: a quote is always a verbatim slice. */
  start: number;
  end: number;
  text: string;
  words: Set<string>;
  /** Its content words as retrieval cuts them (not stemmed: each has its own vector), for soft term matching. */
  plain: string[];
  /** Its length in words, against the budget. */
  length: number;
  /** Both arms, 0..1. */
  relevance: number;
  /** Relevance and the passage's rank. */
  score: number;
  /** The term its block defines (see ExtractiveSettings.termBonus), on a block's first sentence only. */
  term: string[][] | null;
}

const stem = (word: string) => word.replace(/(ies|es|s|ing|ed|ly)$/, '') || word;
const contentWords = (text: string) => new Set(queryWords(text).filter(isTopicWord).map(stem));
const wordCount = (text: string) => text.split(/\s+/).filter(Boolean).length;
/** A term line: short enough to name one thing (`-C, --directory=DIR`, `SHF_ALLOC`, `8`), not a sentence. */
const TERM_LINE = { chars: 48, words: 5 };
/** The first column of a two-column line: `notfound    The lookup succeeded, …`. */
const TWO_COLUMN = /^(\S+(?: \S+)?) {2,}\S/;
const WORD = /[\p{L}\p{N}\p{M}]+/gu;
/** A word in capitals (`FILES`, `PATH`): a section heading or a name, matched only by the same word in capitals. */
const CAPITALS = /^[\p{Lu}\p{N}]*\p{Lu}[\p{Lu}\p{N}]*$/u;

/** How a question's words are compared with a term's: stemmed lower case, and the words it writes in capitals. */
interface AskedWords {
  lower: Set<string>;
  capitals: Set<string>;
}

const askedWords = (query: string): AskedWords => {
  const words = query.match(WORD) ?? [];
  return { lower: new Set(words.map((word) => stem(word.toLowerCase()))), capitals: new Set(words.filter((word) => CAPITALS.test(word))) };
};

/**
 * A term's alternatives, each a list of words that must all be asked for: an option line (`-C, --directory=DIR`)
 * names each option apart (`C`, `directory`), placeholders dropped; any other term is one alternative. An
 * alternative of function words only (`Note`, `-a`) names nothing a question could ask for.
 */
function termAlternatives(term: string): string[][] {
  const names = /^-/.test(term) ? term.split(/[\s,|]+/).filter((token) => token.startsWith('-')).map((token) => token.replace(/^-+/, '').split(/[=[<]/)[0]) : [term];
  return names.map((name) => name.match(WORD) ?? []).filter((words) => words.some((word) => !STOPWORDS.has(word.toLowerCase()) || /\d/.test(word)));
}

/** Whether the question asks for every word of one of a term's alternatives (a word in capitals only in capitals). */
const asksFor = (alternatives: string[][], asked: AskedWords) =>
  alternatives.some((words) => words.every((word) => (CAPITALS.test(word) && word.length > 1 ? asked.capitals.has(word) : asked.lower.has(stem(word.toLowerCase())))));

/** The term a block defines: its first line when short and more lines follow, or its first column; null for none. */
function blockTerm(text: string): string[][] | null {
  const newline = text.indexOf('\n');
  const first = (newline < 0 ? text : text.slice(0, newline)).trim();
  const term = TWO_COLUMN.exec(first)?.[1] ?? (newline >= 0 && first.length <= TERM_LINE.chars && wordCount(first) <= TERM_LINE.words ? first : null);
  const alternatives = term ? termAlternatives(term) : [];
  return alternatives.length ? alternatives : null;
}

/** Blocks of a passage as [start, end) offsets: a blank line or a BLOCK_START line begins one; hard-wrapped lines of a paragraph stay together. */
function blocksOf(text: string): Array<[number, number]> {
  const blocks: Array<[number, number]> = [];
  let offset = 0;
  let previous = '';
  for (const line of text.split('\n')) {
    const end = offset + line.length;
    const last = blocks.at(-1);
    if (line.trim() && last && last[1] === offset - 1 && !startsBlock(line, previous)) last[1] = end;
    else if (line.trim()) blocks.push([offset, end]);
    offset = end + 1;
    previous = line;
  }
  return blocks;
}

/** A line led by an option (`-C`, `--full-tree`) with no space after its dash. */
const OPTION_LED = /^\s*[-+*]\S/;
const ENDS_CLAUSE = /[.:!?]\s*$/;

/**
 * Whether a line begins a block after the (non-blank) line before it: a BLOCK_START line always; an option-led line
 * after a line that ends a sentence or introduces a list, or after another option-led line (an option list); mid-
 * sentence it continues a hard-wrapped paragraph (`… Implies` above `--full-name.`).
 */
const startsBlock = (line: string, previous: string) => BLOCK_START.test(line) || (OPTION_LED.test(line) && (ENDS_CLAUSE.test(previous) || OPTION_LED.test(previous)));

/**
 * The chat's embedder as quoting uses it: texts embedded at the query's priority and, for a token-table embedder,
 * words' vectors kept in `words` between answers (a search's words are mostly met again: ~230 words a question took
 * ~4 ms through the embedder's thread every time).
 */
export function quoteEmbedder(embedder: Embedder | null, words: WordVectors<string>): EmbedTexts {
  if (!embedder) return null;
  const embedWords = async (list: string[]) => {
    await words.load(embedder, list, async (missing) => new Map(missing.map((word) => [word, word])));
    const { rows, dimension } = words.copy(list);
    return list.map((_, index) => rows.subarray(index * dimension, (index + 1) * dimension));
  };
  return { embed: (texts) => embedder.embed(texts, { priority: 'query' }), ...(embedder.tokenTable ? { embedWords } : {}) };
}

/** The sentences of each block of each passage; pieces without a word (fences, rules) are left out. */
function sentencesOf(sources: SourceView[]): Sentence[] {
  const sentences: Sentence[] = [];
  let block = 0;
  const add = (source: SourceView, start: number, end: number, term: string[][] | null) => {
    const raw = source.text.slice(start, end);
    const lead = raw.length - raw.trimStart().length;
    const text = raw.trim();
    if (HAS_WORD.test(text)) sentences.push({ source, block, order: sentences.length, start: start + lead, end: start + lead + text.length, text, words: contentWords(text), plain: plainWords(text), length: wordCount(text), relevance: 0, score: 0, term });
  };
  for (const source of sources) {
    for (const [start, end] of blocksOf(source.text)) {
      let term = blockTerm(source.text.slice(start, end));
      let from = start;
      for (const boundary of source.text.slice(start, end).matchAll(SENTENCE_END)) {
        add(source, from, start + boundary.index, term);
        term = null;
        from = start + boundary.index + boundary[0].length;
      }
      add(source, from, end, term);
      block++;
    }
  }
  return sentences;
}

/** The question's words found in a sentence, each weighed by its rarity among the sentences (idf), relative to the best sentence. */
function keywordScores(sentences: Sentence[], query: Set<string>): number[] {
  const df = new Map<string, number>();
  for (const sentence of sentences) for (const word of sentence.words) if (query.has(word)) df.set(word, (df.get(word) ?? 0) + 1);
  const raw = sentences.map((sentence) => [...sentence.words].reduce((sum, word) => sum + (df.has(word) ? Math.log(1 + sentences.length / df.get(word)!) : 0), 0));
  const best = Math.max(...raw);
  return raw.map((score) => (best > 0 ? score / best : 0));
}

/** Cosine of each sentence with the question, min-max scaled over the sentences. */
async function vectorScores(sentences: Sentence[], query: string, embedder: NonNullable<EmbedTexts>): Promise<number[]> {
  const [queryVector, ...vectors] = await embedder.embed([query, ...sentences.map((sentence) => sentence.text)]);
  const cosines = vectors.map((vector) => cosine(queryVector, vector));
  const low = Math.min(...cosines);
  const span = Math.max(...cosines) - low;
  return cosines.map((value) => (span > 0 ? (value - low) / span : 0));
}

/**
 * Soft term matching per sentence, relative to the best sentence: Σ idf × (the term's best cosine with one of the
 * sentence's words, at least 0; the same word 1) / Σ idf, each term's idf over the sentences (softTermWeight, as
 * retrieval weighs a chunk's terms). The question's words and the sentences' distinct words (~230 for the chat's
 * passages) are looked up in one call.
 */
async function softScores(sentences: Sentence[], query: string, embedWords: (words: string[]) => Promise<Float32Array[]>): Promise<number[]> {
  const terms = plainWords(query);
  const distinct = [...new Set(sentences.flatMap((sentence) => sentence.plain))];
  if (!terms.length || !distinct.length) return sentences.map(() => 0);
  const vectors = (await embedWords([...terms, ...distinct])).map(unit);
  const column = new Map(distinct.map((word, index) => [word, index]));
  /** similarity[t][w]: term t against distinct word w. */
  const similarity = terms.map((term, t) => distinct.map((word, w) => (word === term ? 1 : Math.max(0, dot(vectors[t], vectors[terms.length + w])))));
  const weights = terms.map((term) => softTermWeight(sentences.filter((sentence) => sentence.plain.includes(term)).length, sentences.length));
  const total = weights.reduce((sum, weight) => sum + weight, 0);
  const raw = sentences.map((sentence) => {
    const columns = sentence.plain.map((word) => column.get(word)!);
    return weights.reduce((sum, weight, t) => sum + weight * columns.reduce((best, w) => Math.max(best, similarity[t][w]), 0), 0) / total;
  });
  const best = Math.max(...raw);
  return raw.map((score) => (best > 0 ? score / best : 0));
}

function unit(vector: Float32Array): Float32Array {
  const norm = Math.sqrt(dot(vector, vector));
  return norm ? vector.map((x) => x / norm) : vector;
}

function dot(a: Float32Array, b: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < a.length; i++) sum += a[i] * b[i];
  return sum;
}

function cosine(a: Float32Array, b: Float32Array): number {
  const na = dot(a, a);
  const nb = dot(b, b);
  return na && nb ? dot(a, b) / Math.sqrt(na * nb) : 0;
}

function jaccard(a: Set<string>, b: Set<string>): number {
  let common = 0;
  for (const word of a) if (b.has(word)) common++;
  const union = a.size + b.size - common;
  return union ? common / union : 1;
}

/** At most `words` words of a text, cut at a word with an ellipsis. */
function clipped(text: string, words: number): string {
  const all = text.split(/\s+/).filter(Boolean);
  return all.length <= words ? text : `${all.slice(0, words).join(' ')} …`;
}

/** The best sentences, best first, until about `settings.words` words; then in the passages' order, neighbours of one passage joined into one quote. */
export async function extractiveQuotes(query: string, sources: SourceView[], embedder: EmbedTexts, settings = EXTRACTIVE_SETTINGS): Promise<Quote[]> {
  const sentences = sentencesOf(sources);
  if (!sentences.length) return [];
  const wanted = contentWords(query);
  const keyword = keywordScores(sentences, wanted);
  const asked = askedWords(query);
  // An embedder that fails here (busy, being replaced) leaves the keyword arm to decide: the answer still comes.
  const vector = embedder ? await vectorScores(sentences, query, embedder).catch(() => null) : null;
  const embedWords = embedder?.embedWords;
  const soft = vector && embedWords && settings.softShare > 0 ? await softScores(sentences, query, embedWords).catch(() => null) : null;
  const last = Math.max(1, sources.length - 1);
  sentences.forEach((sentence, i) => {
    const arms = vector ? settings.keywordShare * keyword[i] + (1 - settings.keywordShare) * vector[i] : keyword[i];
    sentence.relevance = soft ? (1 - settings.softShare) * arms + settings.softShare * soft[i] : arms;
    if (sentence.term && asksFor(sentence.term, asked)) sentence.relevance += settings.termBonus;
    sentence.score = sentence.relevance + settings.rankBonus * (1 - sources.indexOf(sentence.source) / last);
  });
  const floor = settings.minRelative * Math.max(...sentences.map((sentence) => sentence.relevance));

  const chosen: Sentence[] = [];
  let words = 0;
  const fits = (sentence: Sentence) => words + sentence.length <= settings.words * 1.2;
  const take = (sentence: Sentence) => {
    chosen.push(sentence);
    words += sentence.length;
  };
  const { after, before } = settings.neighbours;
  const offsets = [...Array.from({ length: after }, (_, i) => i + 1), ...Array.from({ length: before }, (_, i) => -(i + 1))];
  for (const sentence of [...sentences].sort((a, b) => b.score - a.score || a.order - b.order)) {
    if (words >= settings.words) break;
    if (chosen.length && sentence.relevance < floor) continue;
    if (chosen.includes(sentence)) continue; // brought along as a neighbour already
    if (chosen.some((other) => jaccard(other.words, sentence.words) >= settings.repeatJaccard)) continue;
    if (chosen.length && !fits(sentence)) continue;
    take(sentence);
    for (const offset of offsets) {
      const neighbour = sentences[sentence.order + offset];
      if (neighbour?.block === sentence.block && !chosen.includes(neighbour) && fits(neighbour)) take(neighbour);
    }
    // A run of quoted sentences that ends by introducing what follows ("To delete the force option:", "…, e.g.,")
    // brings what it introduces along, across a blank line, as far as the budget allows.
    for (let last = sentence.order; ; last++) {
      const next = sentences[last + 1];
      if (next?.source !== sentence.source) break;
      if (chosen.includes(next)) continue; // still within the run
      if (!INTRODUCES.test(sentences[last].text) || !fits(next)) break;
      take(next);
    }
  }
  return joinNeighbours(chosen.sort((a, b) => a.order - b.order), settings.words);
}

/** Neighbouring sentences of one passage become one quote, sliced from the passage as written; a quote over the budget is clipped. */
function joinNeighbours(sentences: Sentence[], words: number): Quote[] {
  const runs: Array<{ source: SourceView; start: number; end: number; last: number }> = [];
  for (const sentence of sentences) {
    const previous = runs.at(-1);
    if (previous && previous.source === sentence.source && previous.last === sentence.order - 1) Object.assign(previous, { end: sentence.end, last: sentence.order });
    else runs.push({ source: sentence.source, start: sentence.start, end: sentence.end, last: sentence.order });
  }
  return runs.map(({ source, start, end }) => ({ source, text: clipped(source.text.slice(start, end), words) }));
}
