/**
 * Tuning on an index `npm run eval` left behind (HEARTH_EVAL_WORK): the fusion settings below, compared
 * in-process through the real RetrievalService over that data dir's SQLite file, vector index and model,
 * on one half of the questions (HEARTH_EVAL_SET, default dev: choices are made there, then reported on test).
 * `HEARTH_EVAL_DIR=... HEARTH_EVAL_WORK=... npx tsx scripts/eval/tune.ts`
 */
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { openDatabase } from '../../core/db/database.js';
import { loadEmbedder } from '../../native/embeddings/index.js';
import { openVectorIndex } from '../../native/vector-index/index.js';
import { DEFAULT_FUSION, type FusionSettings } from '../../plugins/retrieval/fusion.js';
import { RetrievalRepository } from '../../plugins/retrieval/repository.sqlite.js';
import { RetrievalService, type SearchMode } from '../../plugins/retrieval/service.js';
import { mean, ndcgAt10, recallAt5, reciprocalRankAt10, table } from './metrics.js';
import { readQuestions, rightDocuments } from './questions.js';

interface Variant {
  label: string;
  mode: SearchMode;
  fusion?: Partial<FusionSettings>;
}

const rrf = (keyword: number, vector: number, rrfK = 60): Partial<FusionSettings> => ({ method: 'rrf', rrfK, weights: { keyword, vector } });

const VARIANTS: Variant[] = [
  { label: 'keyword', mode: 'keyword' },
  { label: 'vector', mode: 'vector' },
  { label: 'hybrid (default)', mode: 'hybrid' },
  { label: 'hybrid rrf equal weights', mode: 'hybrid', fusion: rrf(1, 1) },
  ...[1.5, 2, 3].map((w): Variant => ({ label: `hybrid rrf kw×${w}`, mode: 'hybrid', fusion: rrf(w, 1) })),
  ...[10, 30].map((k): Variant => ({ label: `hybrid rrf k=${k} kw×2`, mode: 'hybrid', fusion: rrf(2, 1, k) })),
  ...[0.5, 0.6, 0.7, 0.8].map((w): Variant => ({ label: `hybrid weighted kw ${w}`, mode: 'hybrid', fusion: { method: 'weighted', weights: { keyword: w, vector: 1 - w } } })),
  ...[1, 2, 3].map((n): Variant => ({ label: `keyword perDoc ${n}`, mode: 'keyword', fusion: { perDocument: n } })),
  ...[1, 2, 3].map((n): Variant => ({ label: `hybrid equal weights perDoc ${n}`, mode: 'hybrid', fusion: { ...rrf(1, 1), perDocument: n } })),
  ...[1, 2].map((n): Variant => ({ label: `hybrid kw×2 perDoc ${n}`, mode: 'hybrid', fusion: { ...rrf(2, 1), perDocument: n } })),
];

async function main(): Promise<void> {
  const work = process.env.HEARTH_EVAL_WORK;
  const evalDir = process.env.HEARTH_EVAL_DIR;
  if (!work || !(evalDir || process.env.HEARTH_EVAL_QUESTIONS)) throw new Error('Set HEARTH_EVAL_WORK (a folder `npm run eval` indexed) and HEARTH_EVAL_DIR');
  const set = process.env.HEARTH_EVAL_SET ?? 'dev';
  const only = process.env.HEARTH_EVAL_VARIANTS?.split(',');
  const questions = (await readQuestions(process.env.HEARTH_EVAL_QUESTIONS ?? path.join(evalDir!, 'questions.jsonl'))).filter((q) => set === 'all' || q.set === set);
  const dataDir = path.join(work, 'data');
  const corpusDir = path.join(work, 'corpus');
  const db = await openDatabase(path.join(dataDir, 'hearth.db'));
  const embedder = (await loadEmbedder({ modelDir: process.env.HEARTH_EVAL_MODEL_DIR ?? path.join(dataDir, 'models'), device: 'cpu' }))!;
  const pointer = JSON.parse(await readFile(path.join(dataDir, 'index', 'current.json'), 'utf8')) as { base: string };
  const vectors = await openVectorIndex({ file: path.join(dataDir, 'index', pointer.base), dimension: embedder.dimension, modelId: embedder.modelId });
  const documents = await db.selectFrom('documents').select(['id', 'source_path']).execute();
  const corpusIdOf = new Map(documents.map((d) => [d.id, path.relative(corpusDir, d.source_path ?? '')]));
  const sources = { embedder: () => embedder, vectors: () => vectors };
  const rows: Array<Array<string | number>> = [];
  try {
    for (const variant of VARIANTS.filter((v) => !only || only.includes(v.label))) {
      const service = new RetrievalService(new RetrievalRepository(db), sources, { ...DEFAULT_FUSION, ...variant.fusion });
      const scores: Array<{ kind: string; r: number; mrr: number; ndcg: number }> = [];
      for (const question of questions) {
        const { results } = await service.search({ query: question.question, k: 10, mode: variant.mode, groups: ['everyone'] });
        const ranked = results.map((result) => corpusIdOf.get(result.document_id)!);
        const right = rightDocuments(question);
        scores.push({ kind: question.kind, r: recallAt5(ranked, right), mrr: reciprocalRankAt10(ranked, right), ndcg: ndcgAt10(ranked, right) });
      }
      const of = (kind?: string) => scores.filter((s) => !kind || s.kind === kind);
      rows.push([variant.label, mean(of().map((s) => s.r)), mean(of('same').map((s) => s.r)), mean(of('paraphrased').map((s) => s.r)), mean(of().map((s) => s.mrr)), mean(of().map((s) => s.ndcg))]);
    }
    console.log(`${set}: ${questions.length} questions`);
    console.log(table(['variant', 'recall@5', 'same', 'paraphr.', 'MRR@10', 'nDCG@10'], rows));
  } finally {
    await embedder.close();
    await db.destroy();
  }
}

await main();
