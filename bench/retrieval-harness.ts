/**
 * Retrieval quality on the corpus the repository builds (test/fixtures/retrieval-corpus.ts):
 * recall@5 and MRR@10 of keyword, vector and hybrid search through the real RetrievalService,
 * SQLite FTS5 and HNSW index. Hybrid is reported for each fusion setting tried.
 * Alone: `npx tsx bench/retrieval-harness.ts` uses MODEL_DIR's active model when MODEL_DIR is set,
 * else the tiny test model (random token vectors: vector figures near chance are expected).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { openDatabase } from '../core/db/database.js';
import type { Embedder } from '../native/embeddings/index.js';
import { openVectorIndex } from '../native/vector-index/index.js';
import { DEFAULT_FUSION, type FusionSettings } from '../plugins/retrieval/fusion.js';
import { RetrievalRepository } from '../plugins/retrieval/repository.sqlite.js';
import { RetrievalService, type SearchMode } from '../plugins/retrieval/service.js';
import { buildRetrievalCorpus, questionOverlap } from '../test/fixtures/retrieval-corpus.js';
import { embedChunks, insertDocuments } from '../test/fixtures/search-data.js';

export interface HarnessScore {
  label: string;
  mode: SearchMode;
  fusion?: FusionSettings;
  recallAt5: number;
  mrr: number;
}

export interface HarnessReport {
  passages: number;
  questions: number;
  /** Share of a question's content words found in its target passage. */
  overlap: { mean: number; max: number };
  /** recall@5 and MRR of a random ranking, for scale. */
  chance: { recallAt5: number; mrr: number };
  modelId: string | null;
  scores: HarnessScore[];
}

/** Fusion settings compared on the harness; the first is the service default. */
export const FUSION_CANDIDATES: Array<{ label: string; fusion: FusionSettings }> = [
  { label: 'hybrid default', fusion: DEFAULT_FUSION },
  { label: 'hybrid rrf k=60, equal weights', fusion: { method: 'rrf', rrfK: 60, weights: { ...DEFAULT_FUSION.weights, vector: 1, keyword: 1 }, perDocument: 0, documentConfidence: 0, keywordConfidence: { coverage: 2, weight: 0, passages: 1 } } },
  { label: 'hybrid weighted 0.5/0.5', fusion: { ...DEFAULT_FUSION, method: 'weighted', weights: { ...DEFAULT_FUSION.weights, vector: 0.5, keyword: 0.5 } } },
  { label: 'hybrid weighted 0.3/0.7', fusion: { ...DEFAULT_FUSION, method: 'weighted', weights: { ...DEFAULT_FUSION.weights, vector: 0.3, keyword: 0.7 } } },
  { label: 'hybrid weighted 0.7/0.3', fusion: { ...DEFAULT_FUSION, method: 'weighted', weights: { ...DEFAULT_FUSION.weights, vector: 0.7, keyword: 0.3 } } },
];

/** Runs every mode (vector and hybrid only with an embedder) on a fresh temporary database. */
export async function runRetrievalHarness(embedder: Embedder | null, fusions = FUSION_CANDIDATES): Promise<HarnessReport> {
  const corpus = buildRetrievalCorpus();
  const dir = await mkdtemp(path.join(os.tmpdir(), 'hearth-harness-'));
  const db = await openDatabase(path.join(dir, 'harness.db'));
  try {
    const chunks = await insertDocuments(db, corpus.documents);
    const vectors = embedder ? await openVectorIndex({ file: path.join(dir, 'vectors.hnsw'), dimension: embedder.dimension, modelId: embedder.modelId }) : null;
    if (embedder && vectors) await embedChunks(db, embedder, vectors, chunks);
    const sources = { embedder: () => embedder, vectors: () => vectors };
    const repository = new RetrievalRepository(db);
    const targetIds = corpus.questions.map((q) => chunks[q.target].id);

    const score = async (label: string, mode: SearchMode, fusion?: FusionSettings): Promise<HarnessScore> => {
      const service = new RetrievalService(repository, sources, fusion);
      let found = 0;
      let reciprocal = 0;
      for (const [i, q] of corpus.questions.entries()) {
        const { results } = await service.search({ groups: ['everyone'], query: q.question, k: 10, mode });
        const rank = results.findIndex((r) => r.chunk_id === targetIds[i]) + 1;
        if (rank >= 1 && rank <= 5) found++;
        if (rank >= 1) reciprocal += 1 / rank;
      }
      return { label, mode, fusion, recallAt5: found / corpus.questions.length, mrr: reciprocal / corpus.questions.length };
    };

    const scores = [await score('keyword', 'keyword')];
    if (embedder) {
      scores.push(await score('vector', 'vector'));
      for (const { label, fusion } of fusions) scores.push(await score(label, 'hybrid', fusion));
    }
    const overlaps = corpus.questions.map((q) => questionOverlap(corpus, q));
    const n = corpus.passages.length;
    return {
      passages: n,
      questions: corpus.questions.length,
      overlap: { mean: overlaps.reduce((a, b) => a + b, 0) / overlaps.length, max: Math.max(...overlaps) },
      chance: { recallAt5: 5 / n, mrr: Array.from({ length: 10 }, (_, r) => 1 / (r + 1)).reduce((a, b) => a + b, 0) / n },
      modelId: embedder?.modelId ?? null,
      scores,
    };
  } finally {
    await db.destroy();
    await rm(dir, { recursive: true, force: true });
  }
}

export function formatHarnessReport(report: HarnessReport): string {
  const lines = [
    `retrieval harness: ${report.passages} passages, ${report.questions} paraphrased questions, word overlap with target mean ${report.overlap.mean.toFixed(2)} max ${report.overlap.max.toFixed(2)}`,
    `embedder: ${report.modelId ?? 'none'}; chance: recall@5 ${report.chance.recallAt5.toFixed(3)}, MRR@10 ${report.chance.mrr.toFixed(3)}`,
    'mode                              recall@5   MRR@10',
  ];
  for (const s of report.scores) lines.push(`${s.label.padEnd(32)} ${s.recallAt5.toFixed(3).padStart(9)} ${s.mrr.toFixed(3).padStart(8)}`);
  return lines.join('\n');
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  const { loadEmbedder } = await import('../native/embeddings/index.js');
  let modelDir = process.env.MODEL_DIR;
  let temp: string | undefined;
  if (!modelDir) {
    temp = modelDir = await mkdtemp(path.join(os.tmpdir(), 'hearth-harness-model-'));
    const { installTinyEmbeddingModel } = await import('../test/fixtures/tiny-embedding-model.js');
    await installTinyEmbeddingModel(modelDir);
  }
  const embedder = await loadEmbedder({ modelDir, device: 'cpu' });
  try {
    console.log(formatHarnessReport(await runRetrievalHarness(embedder)));
  } finally {
    await embedder?.close();
    if (temp) await rm(temp, { recursive: true, force: true });
  }
}
