/**
 * The filtered vector search alone (issue 18): `searchVectors`, as retrieval calls it, over 100k vectors of 256
 * dimensions (the built-in embedder's) in documents of 50 chunks, with access keys admitting a share of the
 * documents, from 1% to all of them. Reports recall@10 against exact filtered search (float32 cosine over the
 * admitted vectors) and the time per search. Shows where the addon compares exactly and where it walks the
 * graph, and what each costs; no HTTP, SQL or embedding.
 * `npx tsx bench/filtered-vectors.ts` (BENCH_VECTORS_CHUNKS, BENCH_VECTORS_QUERIES, BENCH_VECTORS_SHARES=1,10,50).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { openVectorIndex } from '../native/vector-index/index.js';
import { searchVectors } from '../plugins/search-index/index.js';
import { stats } from './harness.js';
import { lowRankVectors, rng } from './search.js';

const DIMENSION = 256;
const CHUNKS_PER_DOCUMENT = 50;
const ROUNDS = 5;

const chunks = Number(process.env.BENCH_VECTORS_CHUNKS ?? 100_000);
const queryCount = Number(process.env.BENCH_VECTORS_QUERIES ?? 100);
const shares = (process.env.BENCH_VECTORS_SHARES ?? '1,5,10,20,30,50,80,100').split(',').map(Number);

const scratch = await mkdtemp(path.join(os.tmpdir(), 'hearth-bench-vectors-'));
try {
  const vectors = lowRankVectors(chunks, DIMENSION, rng(chunks));
  const keyOf = (i: number) => Math.floor(i / CHUNKS_PER_DOCUMENT) + 1;
  const index = await openVectorIndex({ file: path.join(scratch, 'vectors.hnsw'), dimension: DIMENSION, modelId: 'bench' });
  for (let i = 0; i < chunks; i += 1000) {
    const labels = Array.from({ length: Math.min(1000, chunks - i) }, (_, j) => i + j + 1);
    index.add(labels, vectors.slice(i, i + labels.length), labels.map((label) => keyOf(label - 1)));
  }
  const queries = lowRankVectors(queryCount, DIMENSION, rng(7));
  const documents = Math.ceil(chunks / CHUNKS_PER_DOCUMENT);
  console.log(`searchVectors at ${chunks} vectors, k = 10, ${queryCount} queries x ${ROUNDS}, ms`);
  console.log('admitted  recall@10   mean    p50    p95');
  for (const percent of shares) {
    // Documents spread over the index (a multiplicative hash), so that no share is one contiguous run of labels.
    const keys = Uint32Array.from({ length: documents }, (_, d) => d + 1).filter((key) => ((key - 1) * 7919) % 100 < percent);
    const admitted = new Set(keys);
    const share = keys.length / documents;
    const truth = queries.map((query) => {
      const scored: Array<[number, number]> = [];
      vectors.forEach((vector, i) => {
        if (!admitted.has(keyOf(i))) return;
        let dot = 0;
        for (let j = 0; j < DIMENSION; j++) dot += vector[j] * query[j];
        scored.push([i + 1, dot]); // unit vectors: the dot product is the cosine
      });
      return new Set(scored.sort((a, b) => b[1] - a[1]).slice(0, 10).map(([label]) => label));
    });
    let found = 0;
    const times: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const [q, query] of queries.entries()) {
        const start = performance.now();
        const hits = await searchVectors(index, query, 10, undefined, share < 1 ? keys : undefined);
        times.push(performance.now() - start);
        if (round === 0) found += hits.filter(({ label }) => truth[q].has(label)).length;
      }
    }
    const { mean, p50, p95 } = stats(times);
    console.log(`${`${percent}%`.padStart(8)}  ${(found / (queryCount * 10)).toFixed(3).padStart(9)}  ${mean.toFixed(2).padStart(5)}  ${p50.toFixed(2).padStart(5)}  ${p95.toFixed(2).padStart(5)}`);
  }
} finally {
  await rm(scratch, { recursive: true, force: true });
}
