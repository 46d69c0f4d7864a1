/**
 * Issue 16's reference points, rebuilt outside Hearth over the same corpus and questions (an experiment, not product),
 * so that the service's figures can be read against them: the issue measured them on its own held-out collection
 * (plain FTS5 bm25 over 1,000-character paragraph chunks 0.59; each chunk prefixed by its document's title line 0.61;
 * plus at most one chunk per document in the top 5 and pseudo-relevance feedback 0.64; potion-base-4M over those chunks
 * 0.52, fused with bm25 by RRF 0.61) against a service hybrid of 0.54 then and a target of 0.68.
 *
 * Nothing here comes from Hearth's ranking: the chunks are paragraphs packed up to 1,000 characters, the keyword side is
 * SQLite FTS5's own bm25 (unicode61 tokenizer) over an OR of the question's words, the vector side a brute-force cosine
 * over the Model2Vec embedder's vectors (the model `npm run eval` installed), RRF k 60 at equal weights.
 * `npm run eval` runs them too (scripts/eval/run.ts, `HEARTH_EVAL_REFERENCE=0` skips them), so that every run holds its own
 * baseline. Run alone, each question's first 10 documents per pipeline go to HEARTH_REFERENCE_OUT (JSON lines) when set.
 * `HEARTH_EVAL_DIR=/work/eval-man HEARTH_EVAL_CORPUS_DIR=/work/eval-man/corpus HEARTH_EVAL_MODEL_DIR=... npx tsx scripts/eval/reference.ts`
 */
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { STOPWORDS } from '../../core/text/words.js';
import { type Embedder, loadEmbedderOnThisThread, SHIPPED_EMBEDDER } from '../../native/embeddings/index.js';
import { listInstalledModels } from '../../native/model-files/index.js';
import { listFolder } from './corpus.js';
import { type EvalQuestion, readQuestions, rightDocuments } from './questions.js';
import { scoreRanking, summaryRow, SUMMARY_HEADER, table } from './metrics.js';

const CHUNK_CHARACTERS = 1000;
const RRF_K = 60;
/** Chunks each list hands on: enough for five distinct documents after one chunk per document. */
const DEPTH = 100;

interface Chunk {
  doc: string;
  text: string;
}

/** Paragraphs (blank-line separated) packed up to 1,000 characters; a longer paragraph is cut at spaces. */
export function paragraphChunks(text: string): string[] {
  const pieces: string[] = [];
  for (const paragraph of text.split(/\n\s*\n/)) {
    let rest = paragraph.replace(/\s+/g, ' ').trim();
    while (rest.length > CHUNK_CHARACTERS) {
      const cut = rest.lastIndexOf(' ', CHUNK_CHARACTERS);
      const at = cut > CHUNK_CHARACTERS / 2 ? cut : CHUNK_CHARACTERS;
      pieces.push(rest.slice(0, at));
      rest = rest.slice(at).trim();
    }
    if (rest) pieces.push(rest);
  }
  const chunks: string[] = [];
  for (const piece of pieces) {
    const last = chunks.length - 1;
    if (last >= 0 && chunks[last].length + 1 + piece.length <= CHUNK_CHARACTERS) chunks[last] += '\n' + piece;
    else chunks.push(piece);
  }
  return chunks;
}

const titleLine = (text: string) => text.split('\n').find((line) => line.trim())?.trim() ?? '';

const words = (text: string) => (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []);

/** An FTS5 query: the OR of the question's distinct words (without stopwords when `content`), each quoted. */
function orQuery(text: string, content: boolean): string {
  const terms = [...new Set(words(text))].filter((word) => !content || !STOPWORDS.has(word));
  return terms.map((term) => `"${term}"`).join(' OR ');
}

/** Documents in order of their first chunk in a ranking of chunk indexes. */
const documentsOf = (ranking: number[], chunks: Chunk[]) => [...new Set(ranking.map((index) => chunks[index].doc))];

function rrf(lists: number[][]): number[] {
  const scores = new Map<number, number>();
  for (const list of lists) list.forEach((index, rank) => scores.set(index, (scores.get(index) ?? 0) + 1 / (RRF_K + rank + 1)));
  return [...scores.entries()].sort((a, b) => b[1] - a[1]).map(([index]) => index);
}

/** Each reference pipeline's first 10 documents (corpus ids) for each question, by pipeline name, in a fixed order. */
export interface ReferenceRankings {
  pipelines: string[];
  ranked: Map<string, Record<string, string[]>>;
}

/**
 * The reference pipelines over `corpusDir` for `questions`; those with vectors only when `modelDir` holds an embedding
 * model (null, or a folder without one: bm25 only).
 */
export async function referenceRankings(corpusDir: string, questions: EvalQuestion[], modelDir: string | null): Promise<ReferenceRankings> {
  const chunks: Chunk[] = [];
  const titled: string[] = [];
  for (const { id, file } of await listFolder(corpusDir)) {
    const text = await readFile(file, 'utf8');
    const title = titleLine(text);
    for (const chunk of paragraphChunks(text)) {
      chunks.push({ doc: id, text: chunk });
      titled.push(`${title}\n${chunk}`);
    }
  }

  const db = new Database(':memory:');
  db.exec('CREATE VIRTUAL TABLE plain USING fts5(text); CREATE VIRTUAL TABLE titled USING fts5(text)');
  const insert = (table: string) => db.prepare(`INSERT INTO ${table}(rowid, text) VALUES (?, ?)`);
  db.transaction(() => {
    const plain = insert('plain');
    const withTitle = insert('titled');
    chunks.forEach((chunk, index) => {
      plain.run(index + 1, chunk.text);
      withTitle.run(index + 1, titled[index]);
    });
  })();
  const bm25 = (table: string, query: string): number[] =>
    query ? (db.prepare(`SELECT rowid FROM ${table} WHERE ${table} MATCH ? ORDER BY bm25(${table}) LIMIT ${DEPTH}`).pluck().all(query) as number[]).map((rowid) => rowid - 1) : [];

  // Pseudo-relevance feedback (RM-style): the words of the first 3 documents' best chunks, by Σ tf × idf, the 5 best
  // not already asked added to the question's OR.
  const documentFrequency = new Map<string, number>();
  for (const text of titled) for (const word of new Set(words(text))) documentFrequency.set(word, (documentFrequency.get(word) ?? 0) + 1);
  const idf = (word: string) => Math.log(1 + chunks.length / (documentFrequency.get(word) ?? 1));
  function feedback(question: string, ranking: number[]): string {
    const asked = new Set(words(question));
    const weight = new Map<string, number>();
    const firsts = new Map<string, number>();
    for (const index of ranking) if (!firsts.has(chunks[index].doc) && firsts.size < 3) firsts.set(chunks[index].doc, index);
    for (const index of firsts.values()) {
      const tokens = words(titled[index]).filter((word) => !STOPWORDS.has(word) && word.length > 2 && !/^\d+$/.test(word));
      for (const word of tokens) if (!asked.has(word)) weight.set(word, (weight.get(word) ?? 0) + idf(word) / tokens.length);
    }
    const added = [...weight.entries()].sort((a, b) => b[1] - a[1]).slice(0, 5).map(([word]) => word);
    return `${question} ${added.join(' ')}`;
  }

  // The reference embeds with potion-base-4M itself: the shipped model, not a copy adapted to the collection.
  const embedder = modelDir ? await loadEmbedderOnThisThread({ modelDir, device: 'cpu', id: await referenceModelId(modelDir) }) : null;
  const nearest = embedder ? await vectorSearch(embedder, chunks) : null;

  type Pipeline = (question: EvalQuestion) => Promise<string[]>;
  const chunkDocs = (ranking: number[]) => ranking.slice(0, 10).map((index) => chunks[index].doc);
  const titledBm25 = (q: EvalQuestion) => bm25('titled', orQuery(q.question, true));
  const pipelines: Array<[string, Pipeline]> = [
    ['bm25, all words', async (q) => chunkDocs(bm25('plain', orQuery(q.question, false)))],
    ['bm25, content words', async (q) => chunkDocs(bm25('plain', orQuery(q.question, true)))],
    ['bm25 + title line', async (q) => chunkDocs(titledBm25(q))],
    ['bm25 + title, 1 chunk/doc', async (q) => documentsOf(titledBm25(q), chunks)],
    ['bm25 + title, 1 chunk/doc, PRF', async (q) => documentsOf(bm25('titled', orQuery(feedback(q.question, titledBm25(q)), true)), chunks)],
  ];
  if (nearest) {
    pipelines.push(
      [`${embedder!.modelId.split('@')[0]}`, async (q) => chunkDocs(await nearest(q.question))],
      [`${embedder!.modelId.split('@')[0]}, 1 chunk/doc`, async (q) => documentsOf(await nearest(q.question), chunks)],
      ['RRF(bm25 + title, vector)', async (q) => chunkDocs(rrf([titledBm25(q), await nearest(q.question)]))],
      ['RRF(bm25 + title, vector), 1 chunk/doc', async (q) => documentsOf(rrf([titledBm25(q), await nearest(q.question)]), chunks)],
    );
  }
  const ranked = new Map<string, Record<string, string[]>>(questions.map((q) => [q.id, {}]));
  try {
    for (const [name, pipeline] of pipelines) for (const q of questions) ranked.get(q.id)![name] = (await pipeline(q)).slice(0, 10);
  } finally {
    await embedder?.close();
    db.close();
  }
  return { pipelines: pipelines.map(([name]) => name), ranked };
}

/** Brute-force cosine over every chunk's vector: each question's first DEPTH chunk indexes (kept per question). */
async function vectorSearch(embedder: Embedder, chunks: Chunk[]): Promise<(question: string) => Promise<number[]>> {
  const dimension = embedder.dimension;
  const matrix = new Float32Array(chunks.length * dimension);
  for (let start = 0; start < chunks.length; start += 256) {
    const vectors = await embedder.embed(chunks.slice(start, start + 256).map((chunk) => chunk.text));
    vectors.forEach((vector, offset) => matrix.set(vector, (start + offset) * dimension));
  }
  const known = new Map<string, number[]>();
  return async (question) => {
    const kept = known.get(question);
    if (kept) return kept;
    const [query] = await embedder.embed([question], { priority: 'query' });
    const scored: Array<[number, number]> = [];
    for (let index = 0; index < chunks.length; index++) {
      let dot = 0;
      for (let d = 0, at = index * dimension; d < dimension; d++) dot += query[d] * matrix[at + d];
      scored.push([index, dot]);
    }
    const ranking = scored.sort((a, b) => b[1] - a[1]).slice(0, DEPTH).map(([index]) => index);
    known.set(question, ranking);
    return ranking;
  };
}

/** Each pipeline's figures (SUMMARY_HEADER's columns) over the questions of `set`. */
export function referenceRows(reference: ReferenceRankings, questions: EvalQuestion[], set: string): Array<Array<string | number>> {
  const of = questions.filter((q) => q.set === set);
  return reference.pipelines.map((name) => [name, ...summaryRow(of.map((q) => scoreRanking(q, reference.ranked.get(q.id)![name], rightDocuments(q))))]);
}

async function main(): Promise<void> {
  const corpus = process.env.HEARTH_EVAL_CORPUS_DIR;
  const evalDir = process.env.HEARTH_EVAL_DIR;
  if (!corpus || !evalDir) throw new Error('Set HEARTH_EVAL_CORPUS_DIR and HEARTH_EVAL_DIR (and HEARTH_EVAL_MODEL_DIR for the vector pipelines)');
  const questions = await readQuestions(path.join(evalDir, 'questions.jsonl'));
  const reference = await referenceRankings(corpus, questions, process.env.HEARTH_EVAL_MODEL_DIR ?? null);
  for (const set of ['dev', 'test']) {
    console.log(`\n${set}: ${questions.filter((q) => q.set === set).length} questions`);
    console.log(table(['reference', ...SUMMARY_HEADER], referenceRows(reference, questions, set)));
  }
  const out = process.env.HEARTH_REFERENCE_OUT;
  if (out) await writeFile(out, questions.map((q) => JSON.stringify({ id: q.id, set: q.set, kind: q.kind, ranked: reference.ranked.get(q.id) })).join('\n') + '\n');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();

/** The shipped embedder when MODEL_DIR holds it, else the active model. */
async function referenceModelId(modelDir: string): Promise<string | undefined> {
  const { models } = await listInstalledModels(modelDir, 'embedding');
  return models.some((m) => m.id === SHIPPED_EMBEDDER.id) ? SHIPPED_EMBEDDER.id : undefined;
}
