/**
 * Cost per query of the reranker stage (plugins/retrieval/rerank.ts) with a cross-encoder of
 * ms-marco-MiniLM-L-6-v2's architecture (random weights: the same compute, no meaning; fp32, as the
 * published ONNX export is) installed through `models import-reranker`'s code, on this machine's CPU.
 * For each top-N and budget: p50 / p95 ms of the stage per query and how many candidates it scored.
 *
 * `node --import tsx bench/rerank.ts`; BENCH_RERANK_QUERIES (default 20), BENCH_RERANK_TOKENS (passage
 * length in words, default 180: about a 256-token chunk), BENCH_RERANK_THREADS (ONNX intra-op threads,
 * default 1).
 */
import { mkdir, mkdtemp, rm, copyFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { importReranker, loadReranker, RERANK_BATCH } from '../native/reranker/index.js';
import { rerankCandidates } from '../plugins/retrieval/rerank.js';
import { miniLmShapeModelBytes } from './minilm-shape-model.js';
import { MINILM_TOKENIZER_DIR } from '../test/fixtures/models.js';

const QUERIES = Number(process.env.BENCH_RERANK_QUERIES ?? 20);
const WORDS = Number(process.env.BENCH_RERANK_TOKENS ?? 180);
const THREADS = Number(process.env.BENCH_RERANK_THREADS ?? 1);
const VOCABULARY = 'lantern harbour keeper storm copper glass council fund dredger basin silt boats tide orchard apple pear pruning buds graft rootstock ledger server request route plugin schema header cookie session token database index query vector keyword'.split(' ');

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))];

function passage(seed: number): string {
  return Array.from({ length: WORDS }, (_, i) => VOCABULARY[(seed * 31 + i * 7) % VOCABULARY.length]).join(' ');
}

async function main(): Promise<void> {
  const work = await mkdtemp(path.join(os.tmpdir(), 'hearth-bench-rerank-'));
  try {
    const source = path.join(work, 'source');
    await mkdir(source, { recursive: true });
    await writeFile(path.join(source, 'model.onnx'), miniLmShapeModelBytes(42, { crossEncoder: true }));
    for (const file of ['tokenizer.json', 'tokenizer_config.json']) await copyFile(path.join(MINILM_TOKENIZER_DIR, file), path.join(source, file));
    const modelDir = path.join(work, 'models');
    await importReranker(source, { modelDir, id: 'minilm-shape-cross-encoder', maxTokens: 512 });
    const reranker = (await loadReranker({ modelDir, threads: THREADS }))!;
    const candidates = Array.from({ length: 100 }, (_, i) => ({ rowid: i, score: 1 / (i + 1) }));
    const texts = candidates.map((c) => passage(c.rowid));
    console.log(`reranker: MiniLM-L6 architecture cross-encoder (random weights, fp32), ${THREADS} thread(s), passages of ${WORDS} words, ${QUERIES} queries per row, batches of ${RERANK_BATCH}`);
    console.log('top_n  budget_ms   p50 ms   p95 ms   scored (median)');
    for (const [topN, budgetMs] of [[5, 10_000], [10, 10_000], [20, 10_000], [20, 300], [50, 300]] as const) {
      const times: number[] = [];
      const scored: number[] = [];
      for (let q = 0; q < QUERIES; q++) {
        const { report } = await rerankCandidates(reranker, `how do I replace the copper lantern ${q}`, candidates, (c) => texts[c.rowid], { topN, budgetMs }, RERANK_BATCH);
        times.push(report.ms);
        scored.push(report.scored);
      }
      console.log(`${String(topN).padStart(5)}  ${String(budgetMs).padStart(9)}  ${percentile(times, 50).toFixed(1).padStart(7)}  ${percentile(times, 95).toFixed(1).padStart(7)}   ${percentile(scored, 50)}`);
    }
    await reranker.close();
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

await main();
