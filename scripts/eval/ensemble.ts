/**
 * Two embedders as one (an experiment, not product), measured offline on an index `npm run eval` left in
 * HEARTH_EVAL_WORK: every chunk is embedded by the service's model (HEARTH_EVAL_MODEL_DIR, else the work's own) and by
 * a second one (HEARTH_ENSEMBLE_SECOND, a MODEL_DIR holding it, e.g. potion-base-4M-int8 imported), and each pair of
 * vectors, each L2-normalised, is joined into one: [√(1−s)·a, √s·b], so that its cosine is (1−s)·cos a + s·cos b for
 * the second model's share s (HEARTH_ENSEMBLE_SHARES, default 0,0.3,0.5,0.7,1; 0 is the first model alone, 1 the
 * second). For each share a fresh vector index is searched by the real RetrievalService on HEARTH_EVAL_SET (vector and
 * hybrid, one chunk per document first as `POST /api/search` ranks) and, with HEARTH_ENSEMBLE_CHAT=1, the chat's
 * extractive answers are scored as scripts/eval/quotes.ts scores them.
 * `HEARTH_EVAL_DIR=... HEARTH_EVAL_WORK=... HEARTH_ENSEMBLE_SECOND=/path/to/models npx tsx scripts/eval/ensemble.ts`
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { EXTRACTIVE_SETTINGS, extractiveQuotes, quoteEmbedder, quoteWordTable } from '../../plugins/chat/extractive.js';
import { extractiveAnswer } from '../../plugins/chat/prompt.js';
import { relevantResults } from '../../plugins/chat/relevance.js';
import { CHAT_DEFAULT_K, toSource } from '../../plugins/chat/service.js';
import { type Embedder, loadEmbedderOnThisThread } from '../../native/embeddings/index.js';
import { openVectorIndex } from '../../native/vector-index/index.js';
import { CHAT_FUSION_WEIGHTS, DEFAULT_FUSION } from '../../plugins/retrieval/fusion.js';
import { RetrievalRepository } from '../../plugins/retrieval/repository.sqlite.js';
import { RetrievalService, type SearchMode } from '../../plugins/retrieval/service.js';
import { evalWork, indexedChunks, openEvalDatabase, searchScores, unitVector } from './eval-index.js';
import { containsSpan, printSummary, summaryRow, table } from './metrics.js';

const PAGE = 256;

/** The two vectors joined, the second weighing `share` of the cosine. */
function joined(a: Float32Array, b: Float32Array, share: number): Float32Array {
  const out = new Float32Array(a.length + b.length);
  out.set(unitVector(a).map((x) => x * Math.sqrt(1 - share)), 0);
  out.set(unitVector(b).map((x) => x * Math.sqrt(share)), a.length);
  return out;
}

async function main(): Promise<void> {
  const { work, set, questions } = await evalWork();
  const second = process.env.HEARTH_ENSEMBLE_SECOND;
  if (!second) throw new Error('Set HEARTH_ENSEMBLE_SECOND to a model folder (MODEL_DIR) holding the second embedder');
  const shares = (process.env.HEARTH_ENSEMBLE_SHARES ?? '0,0.3,0.5,0.7,1').split(',').map(Number);
  const { db, score } = await openEvalDatabase(work);
  const { chunks: all, keys } = await indexedChunks(db);
  const first = (await loadEmbedderOnThisThread({ modelDir: process.env.HEARTH_EVAL_MODEL_DIR ?? path.join(work, 'data', 'models'), device: 'cpu' }))!;
  const other = (await loadEmbedderOnThisThread({ modelDir: second, device: 'cpu' }))!;
  const folder = await mkdtemp(path.join(os.tmpdir(), 'hearth-ensemble-'));
  try {
    const started = performance.now();
    const embedAll = async (embedder: Embedder) => {
      const vectors: Float32Array[] = [];
      for (let i = 0; i < all.length; i += PAGE) vectors.push(...(await embedder.embed(all.slice(i, i + PAGE).map((c) => c.text))));
      return vectors;
    };
    const [firstVectors, otherVectors] = [await embedAll(first), await embedAll(other)];
    console.log(`${all.length} chunks embedded by ${first.modelId} (${first.dimension} d) and ${other.modelId} (${other.dimension} d) in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    const rows: Array<Array<string | number>> = [];
    const chats: Array<Array<string | number>> = [];
    for (const share of shares) {
      const dimension = first.dimension + other.dimension;
      const embedder: Embedder = {
        modelId: `ensemble-${share}`,
        dimension,
        maxTokens: Math.min(first.maxTokens, other.maxTokens),
        device: 'cpu',
        tokenTable: false,
        countTokens: (text) => first.countTokens(text),
        close: async () => {},
        embed: async (texts) => {
          const [a, b] = await Promise.all([first.embed(texts), other.embed(texts)]);
          return a.map((vector, i) => joined(vector, b[i], share));
        },
      };
      const vectors = await openVectorIndex({ file: path.join(folder, `ensemble-${share}.hnsw`), dimension, modelId: embedder.modelId });
      for (let i = 0; i < all.length; i += PAGE) {
        vectors.add(all.slice(i, i + PAGE).map((c) => c.rowid), firstVectors.slice(i, i + PAGE).map((vector, j) => joined(vector, otherVectors[i + j], share)), keys.slice(i, i + PAGE));
      }
      const sources = { embedder: () => embedder, vectors: () => vectors };
      for (const mode of ['vector', 'hybrid'] as SearchMode[]) {
        const service = new RetrievalService(new RetrievalRepository(db), sources, { ...DEFAULT_FUSION, perDocument: 1 });
        rows.push([`${mode}, share ${share}`, ...summaryRow(await searchScores(service, questions, mode, score))]);
      }
      if (process.env.HEARTH_ENSEMBLE_CHAT === '1') {
        // The chat's retrieval: the fusion's own settings (no per-document cap).
        const chat = new RetrievalService(new RetrievalRepository(db), sources, { ...DEFAULT_FUSION, weights: CHAT_FUSION_WEIGHTS });
        let quoted = 0;
        let held = 0;
        const quoteWords = quoteWordTable();
        for (const question of questions) {
          const search = await chat.search({ query: question.question, k: CHAT_DEFAULT_K, mode: 'hybrid', groups: ['everyone'] });
          const found = relevantResults(search.results, question.question, search.retrieval_settings.score).map(toSource);
          if (found.some((source) => containsSpan(source.text, question.answer))) held++;
          const answer = extractiveAnswer(await extractiveQuotes(question.question, found, quoteEmbedder(embedder, quoteWords), EXTRACTIVE_SETTINGS)).join('');
          if (containsSpan(answer, question.answer)) quoted++;
        }
        chats.push([`share ${share}`, (quoted / questions.length).toFixed(3), (held / questions.length).toFixed(3)]);
      }
    }
    printSummary(set, questions.length, rows);
    if (chats.length) console.log(table(['chat', 'answer quotes span', 'sources hold span'], chats));
  } finally {
    await rm(folder, { recursive: true, force: true });
    await first.close();
    await other.close();
    await db.destroy();
  }
}

await main();
