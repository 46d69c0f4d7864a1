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
 * Each question's first 10 documents per pipeline go to HEARTH_REFERENCE_OUT (JSON lines) when set.
 * `HEARTH_EVAL_DIR=/work/eval-man HEARTH_EVAL_CORPUS_DIR=/work/eval-man/corpus HEARTH_EVAL_MODEL_DIR=... npx tsx scripts/eval/reference.ts`
 */
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import Database from 'better-sqlite3';
import { STOPWORDS } from '../../core/text/words.js';
import { loadEmbedderOnThisThread } from '../../native/embeddings/index.js';
import { type EvalQuestion, readQuestions, rightDocuments } from './questions.js';
import { type QuestionScore, scoreRanking, summaryRow, SUMMARY_HEADER, table } from './metrics.js';

const CHUNK_CHARACTERS = 1000;
const RRF_K = 60;
/** Chunks each list hands on: enough for five distinct documents after one chunk per document. */
const DEPTH = 100;

interface Chunk {
  doc: string;
  text: string;
}

async function corpusFiles(root: string, under = ''): Promise<string[]> {
  const files: string[] = [];
  for (const entry of await readdir(path.join(root, under), { withFileTypes: true })) {
    const relative = path.join(under, entry.name);
    if (entry.isDirectory()) files.push(...(await corpusFiles(root, relative)));
    else if (entry.isFile()) files.push(relative);
  }
  return files.sort();
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

async function main(): Promise<void> {
  const corpus = process.env.HEARTH_EVAL_CORPUS_DIR;
  const evalDir = process.env.HEARTH_EVAL_DIR;
  const modelDir = process.env.HEARTH_EVAL_MODEL_DIR;
  if (!corpus || !evalDir || !modelDir) throw new Error('Set HEARTH_EVAL_CORPUS_DIR, HEARTH_EVAL_DIR and HEARTH_EVAL_MODEL_DIR');
  const questions = await readQuestions(path.join(evalDir, 'questions.jsonl'));

  const chunks: Chunk[] = [];
  const titled: string[] = [];
  for (const doc of await corpusFiles(corpus)) {
    const text = await readFile(path.join(corpus, doc), 'utf8');
    const title = titleLine(text);
    for (const chunk of paragraphChunks(text)) {
      chunks.push({ doc, text: chunk });
      titled.push(`${title}\n${chunk}`);
    }
  }
  console.log(`${chunks.length} chunks of at most ${CHUNK_CHARACTERS} characters`);

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

  const embedder = (await loadEmbedderOnThisThread({ modelDir, device: 'cpu' }))!;
  console.log(`embedding with ${embedder.modelId}`);
  const dimension = embedder.dimension;
  const matrix = new Float32Array(chunks.length * dimension);
  for (let start = 0; start < chunks.length; start += 256) {
    const vectors = await embedder.embed(chunks.slice(start, start + 256).map((chunk) => chunk.text));
    vectors.forEach((vector, offset) => matrix.set(vector, (start + offset) * dimension));
  }
  const nearestOf = new Map<string, number[]>();
  async function nearest(question: string): Promise<number[]> {
    const known = nearestOf.get(question);
    if (known) return known;
    const [query] = await embedder.embed([question], { priority: 'query' });
    const scored: Array<[number, number]> = [];
    for (let index = 0; index < chunks.length; index++) {
      let dot = 0;
      for (let d = 0, at = index * dimension; d < dimension; d++) dot += query[d] * matrix[at + d];
      scored.push([index, dot]);
    }
    const ranking = scored.sort((a, b) => b[1] - a[1]).slice(0, DEPTH).map(([index]) => index);
    nearestOf.set(question, ranking);
    return ranking;
  }

  type Variant = (question: EvalQuestion) => Promise<string[]>;
  const chunkDocs = (ranking: number[]) => ranking.slice(0, 10).map((index) => chunks[index].doc);
  const variants: Array<[string, Variant]> = [
    ['bm25, all words', async (q) => chunkDocs(bm25('plain', orQuery(q.question, false)))],
    ['bm25, content words', async (q) => chunkDocs(bm25('plain', orQuery(q.question, true)))],
    ['bm25 + title line', async (q) => chunkDocs(bm25('titled', orQuery(q.question, true)))],
    ['bm25 + title, 1 chunk/doc', async (q) => documentsOf(bm25('titled', orQuery(q.question, true)), chunks)],
    ['bm25 + title, 1 chunk/doc, PRF', async (q) => documentsOf(bm25('titled', orQuery(feedback(q.question, bm25('titled', orQuery(q.question, true))), true)), chunks)],
    ['potion vector', async (q) => chunkDocs(await nearest(q.question))],
    ['potion vector, 1 chunk/doc', async (q) => documentsOf(await nearest(q.question), chunks)],
    ['RRF(bm25 + title, vector)', async (q) => chunkDocs(rrf([bm25('titled', orQuery(q.question, true)), await nearest(q.question)]))],
    ['RRF(bm25 + title, vector), 1 chunk/doc', async (q) => documentsOf(rrf([bm25('titled', orQuery(q.question, true)), await nearest(q.question)]), chunks)],
  ];

  const scores = new Map<string, QuestionScore[]>();
  const ranked = new Map<string, Record<string, string[]>>(questions.map((q) => [q.id, {}]));
  for (const [name, variant] of variants) {
    const of: QuestionScore[] = [];
    for (const q of questions) {
      const documents = (await variant(q)).slice(0, 10);
      ranked.get(q.id)![name] = documents;
      of.push(scoreRanking(q, documents, rightDocuments(q)));
    }
    scores.set(name, of);
  }
  const out = process.env.HEARTH_REFERENCE_OUT;
  if (out) await writeFile(out, questions.map((q) => JSON.stringify({ id: q.id, set: q.set, kind: q.kind, ranked: ranked.get(q.id) })).join('\n') + '\n');
  for (const set of ['dev', 'test']) {
    const of = questions.filter((q) => q.set === set).length;
    console.log(`\n${set}: ${of} questions`);
    console.log(table(['reference', ...SUMMARY_HEADER], variants.map(([name]) => [name, ...summaryRow(scores.get(name)!.filter((s) => s.set === set))])));
  }
  await embedder.close();
  db.close();
}

await main();
