/**
 * The corpus-adaptive default embedder (issue 16 item 5), measured offline on an index `npm run eval` left
 * in HEARTH_EVAL_WORK: the collection's chunks (as the service stored them) are tokenised with the built-in
 * embedder's WordPiece tokenizer, their windowed co-occurrence is blended into the WordNet matrix at each
 * weight of HEARTH_ADAPT_WEIGHTS (0: the fixed table), and for each table every chunk is embedded again into
 * a fresh vector index that the real RetrievalService searches (keyword, vector, hybrid with the default
 * fusion) on HEARTH_EVAL_SET (dev by default).
 * `HEARTH_EVAL_DIR=... HEARTH_EVAL_WORK=... HEARTH_ADAPT_WEIGHTS=0,0.5,1 npx tsx scripts/eval/adaptive.ts`
 * Other knobs: HEARTH_ADAPT_WINDOW (5), HEARTH_ADAPT_MIN_COUNT (10), HEARTH_ADAPT_NEW_ROWS (1).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { loadEmbedderOnThisThread } from '../../native/embeddings/index.js';
import { openVectorIndex } from '../../native/vector-index/index.js';
import { DEFAULT_FUSION, type FusionSettings } from '../../plugins/retrieval/fusion.js';
import { RetrievalRepository } from '../../plugins/retrieval/repository.sqlite.js';
import { RetrievalService, type SearchMode } from '../../plugins/retrieval/service.js';
import { installDefaultModel, vocabularyTokens } from '../../plugins/search-index/default-embedder/build.js';
import { blendCorpus, contentTokenMask, CooccurrenceCounts, defaultTokenizer } from './adaptive-corpus.js';
import { evalWork, indexedChunks, openEvalDatabase } from './eval-index.js';
import { mean, type QuestionScore, SUMMARY_HEADER, summaryRow, table } from './metrics.js';

async function main(): Promise<void> {
  const { work, set, questions } = await evalWork();
  const weights = (process.env.HEARTH_ADAPT_WEIGHTS ?? '0,0.5,1').split(',').map(Number);
  const window = Number(process.env.HEARTH_ADAPT_WINDOW ?? 5);
  const minCount = Number(process.env.HEARTH_ADAPT_MIN_COUNT ?? 10);
  const newRows = process.env.HEARTH_ADAPT_NEW_ROWS !== '0';
  const { db, score } = await openEvalDatabase(work);
  const { chunks: all, keys } = await indexedChunks(db);

  let started = performance.now();
  const tokenizer = await defaultTokenizer();
  const vocab = await vocabularyTokens();
  const content = contentTokenMask(vocab);
  const counts = new CooccurrenceCounts(vocab.length);
  for (const chunk of all) counts.addChunk(tokenizer.encode(chunk.text, { add_special_tokens: false }).ids, content, window);
  console.log(`${all.length} chunks, ${counts.tokens} content tokens, ${counts.pairs} pairs (window ±${window}): ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const modelDir = await mkdtemp(path.join(os.tmpdir(), 'hearth-adapt-models-'));
  const rows: Array<Array<string | number>> = [];
  try {
    for (const weight of weights) {
      const id = `adapt-${String(weight).replace('.', '_')}`;
      started = performance.now();
      const manifest = await installDefaultModel({ modelDir, id, activate: false, extendMatrix: weight > 0 ? blendCorpus({ counts, weight, minCount, newRows }) : undefined });
      const buildSeconds = (performance.now() - started) / 1000;
      const embedder = (await loadEmbedderOnThisThread({ modelDir, device: 'cpu', id }))!;
      const vectors = await openVectorIndex({ file: path.join(modelDir, `${id}.hnsw`), dimension: embedder.dimension, modelId: embedder.modelId });
      for (let i = 0; i < all.length; i += 256) {
        const page = all.slice(i, i + 256);
        vectors.add(page.map((c) => c.rowid), await embedder.embed(page.map((c) => c.text)), keys.slice(i, i + 256));
      }
      const runs: Array<{ label: string; mode: SearchMode; fusion: FusionSettings }> = [
        ...(weight === weights[0] ? [{ label: 'keyword', mode: 'keyword' as const, fusion: DEFAULT_FUSION }] : []),
        { label: `vector w=${weight}`, mode: 'vector', fusion: DEFAULT_FUSION },
        { label: `hybrid w=${weight}`, mode: 'hybrid', fusion: DEFAULT_FUSION },
        { label: `hybrid w=${weight} equal weights`, mode: 'hybrid', fusion: { ...DEFAULT_FUSION, method: 'rrf', weights: { ...DEFAULT_FUSION.weights, keyword: 1, vector: 1 } } },
      ];
      for (const run of runs) {
        const service = new RetrievalService(new RetrievalRepository(db), { embedder: () => embedder, vectors: () => vectors }, run.fusion);
        const scores: QuestionScore[] = [];
        for (const question of questions) {
          const { results } = await service.search({ query: question.question, k: 10, mode: run.mode, groups: ['everyone'] });
          scores.push(score(question, results));
        }
        for (const part of set === 'all' ? ['dev', 'test'] : [set]) {
          const inPart = scores.filter((s) => s.set === part);
          const paraphrased = inPart.filter((s) => s.kind === 'paraphrased');
          rows.push([part, run.label, ...summaryRow(inPart), mean(paraphrased.map((s) => s.mrr)), mean(paraphrased.map((s) => s.ndcg))]);
          console.log(rows[rows.length - 1].join('  '));
        }
      }
      console.log(`w=${weight}: build ${buildSeconds.toFixed(1)} s, stats ${JSON.stringify(manifest.stats)}, model ${embedder.modelId}`);
      await embedder.close();
    }
    console.log(`${set}: ${questions.length} questions; window ±${window}, min count ${minCount}, new rows ${newRows}`);
    rows.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
    console.log(table(['set', 'variant', ...SUMMARY_HEADER, 'par. MRR', 'par. nDCG'], rows));
  } finally {
    await rm(modelDir, { recursive: true, force: true });
    await db.destroy();
  }
}

await main();
