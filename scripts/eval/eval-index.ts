/**
 * What the experiments over an index `npm run eval` left in HEARTH_EVAL_WORK share (tune.ts, expand.ts, adaptive.ts):
 * the questions of HEARTH_EVAL_SET, the service's database with each document's corpus id, and its model and vectors.
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { type Db, openDatabase } from '../../core/db/database.js';
import { type Embedder, loadEmbedder } from '../../native/embeddings/index.js';
import { openVectorIndex, type VectorIndex } from '../../native/vector-index/index.js';
import { ChunksRepository } from '../../plugins/search-index/chunks-repository.js';
import { type EvalQuestion, readQuestions, rightDocuments } from './questions.js';
import { type QuestionScore, scoreRanking } from './metrics.js';
import type { FusionSettings } from '../../plugins/retrieval/fusion.js';
import type { RetrievalService, SearchMode } from '../../plugins/retrieval/service.js';

export interface EvalWork {
  work: string;
  /** HEARTH_EVAL_SET: dev (default), test or all. */
  set: string;
  questions: EvalQuestion[];
}

/** HEARTH_EVAL_WORK and the questions of HEARTH_EVAL_SET (from HEARTH_EVAL_QUESTIONS, else HEARTH_EVAL_DIR/questions.jsonl). */
export async function evalWork(): Promise<EvalWork> {
  const work = process.env.HEARTH_EVAL_WORK;
  const evalDir = process.env.HEARTH_EVAL_DIR;
  if (!work || !(evalDir || process.env.HEARTH_EVAL_QUESTIONS)) throw new Error('Set HEARTH_EVAL_WORK (a folder `npm run eval` indexed) and HEARTH_EVAL_DIR');
  const set = process.env.HEARTH_EVAL_SET ?? 'dev';
  const questions = (await readQuestions(process.env.HEARTH_EVAL_QUESTIONS ?? path.join(evalDir!, 'questions.jsonl'))).filter((q) => set === 'all' || q.set === set);
  return { work, set, questions };
}

export interface EvalDatabase {
  db: Db;
  /** A document's corpus id (its path under node_modules) by its id in the service. */
  corpusIdOf: Map<string, string>;
  /** A question's figures for search results, as the service returned them. */
  score(question: EvalQuestion, results: Array<{ document_id: string }>): QuestionScore;
}

export async function openEvalDatabase(work: string): Promise<EvalDatabase> {
  const db = await openDatabase(path.join(work, 'data', 'hearth.db'));
  const documents = await db.selectFrom('documents').select(['id', 'source_path']).execute();
  const corpusIdOf = new Map(documents.map((d) => [d.id, path.relative(process.env.HEARTH_EVAL_CORPUS_DIR ?? path.join(work, 'corpus'), d.source_path ?? '')]));
  const score = (question: EvalQuestion, results: Array<{ document_id: string }>) =>
    scoreRanking(question, results.slice(0, 10).map((result) => corpusIdOf.get(result.document_id)!), rightDocuments(question));
  return { db, corpusIdOf, score };
}

/** The embedding model the service used (HEARTH_EVAL_MODEL_DIR, else its own) and its vector index in force. */
export async function openEvalVectors(work: string): Promise<{ embedder: Embedder; vectors: VectorIndex }> {
  const dataDir = path.join(work, 'data');
  const embedder = (await loadEmbedder({ modelDir: process.env.HEARTH_EVAL_MODEL_DIR ?? path.join(dataDir, 'models'), device: 'cpu' }))!;
  const pointer = JSON.parse(await readFile(path.join(dataDir, 'index', 'current.json'), 'utf8')) as { base: string };
  const vectors = await openVectorIndex({ file: path.join(dataDir, 'index', pointer.base), dimension: embedder.dimension, modelId: embedder.modelId });
  return { embedder, vectors };
}

/** Every chunk of the index in rowid order, as the index rebuild reads them, and each one's access key (for vectors.add). */
export async function indexedChunks(db: Db): Promise<{ chunks: Array<{ rowid: number; text: string }>; keys: Awaited<ReturnType<ChunksRepository['keysOf']>> }> {
  const repository = new ChunksRepository(db);
  const chunks: Array<{ rowid: number; text: string }> = [];
  for (let after = 0; ; ) {
    const page = await repository.page(after, 1000);
    if (page.length === 0) break;
    chunks.push(...page);
    after = page[page.length - 1].rowid;
  }
  return { chunks, keys: await repository.keysOf(chunks.map((c) => c.rowid)) };
}

/** Each question's figures for the service's first `k` results in `mode` (everyone's groups: the evaluation indexes everything for everyone). */
export async function searchScores(service: RetrievalService, questions: EvalQuestion[], mode: SearchMode, score: EvalDatabase['score'], k = 10): Promise<QuestionScore[]> {
  const scores: QuestionScore[] = [];
  for (const question of questions) scores.push(score(question, (await service.search({ query: question.question, k, mode, groups: ['everyone'] })).results));
  return scores;
}

/**
 * `fusion` with HEARTH_EVAL_FUSION (JSON fusion settings an experiment lays over it, e.g. '{"rrfK":60}',
 * '{"weights":{"vector":3,"keyword":1}}' or '{"keywordConfidence":{"coverage":0.7}}') laid over it; the weights and
 * keywordConfidence fields named there replace only those fields.
 */
export function withFusionOverride(fusion: FusionSettings): FusionSettings {
  const override = JSON.parse(process.env.HEARTH_EVAL_FUSION ?? '{}') as Partial<FusionSettings>;
  return { ...fusion, ...override, weights: { ...fusion.weights, ...override.weights }, keywordConfidence: { ...fusion.keywordConfidence, ...override.keywordConfidence } };
}

/** The vector scaled to length 1 (a zero vector stays zero). */
export function unitVector(vector: Float32Array): Float32Array {
  let sum = 0;
  for (const x of vector) sum += x * x;
  const norm = Math.sqrt(sum) || 1;
  return vector.map((x) => x / norm);
}
