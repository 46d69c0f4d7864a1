/**
 * The whole-document keyword ranking's cost (issue 16, migration 0018): RetrievalService with and without it
 * (document weight 4 against 0), alternating query by query in one process over 100k synthetic chunks in 2,000
 * documents, for a reader of every document (the unfiltered path) and one whose groups admit half of them; hybrid,
 * k 5, per_document 1 as POST /api/search asks. No HTTP: the two differ only inside the service.
 * `npx tsx bench/document-ranking.ts` (BENCH_DOCUMENT_CHUNKS, BENCH_DOCUMENT_QUERIES).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { openDatabase } from '../core/db/database.js';
import { loadEmbedder } from '../native/embeddings/index.js';
import { openVectorIndex } from '../native/vector-index/index.js';
import { insertDocuments } from '../test/fixtures/search-data.js';
import { stats } from './harness.js';
import { groupsOf } from './filtered-search.js';
import { addSyntheticVectors, lowRankVectors, queriesFrom, rng, searchModel, syntheticDocuments } from './search.js';
import { DEFAULT_FUSION } from '../plugins/retrieval/fusion.js';
import { RetrievalRepository } from '../plugins/retrieval/repository.sqlite.js';
import { RetrievalService } from '../plugins/retrieval/service.js';

const temporary = await mkdtemp(path.join(os.tmpdir(), 'hearth-bench-documents-model-'));
const { modelDir } = await searchModel(temporary, 'builtin');
const embedder = (await loadEmbedder({ modelDir, device: 'cpu' }))!;
const dir = await mkdtemp(path.join(os.tmpdir(), 'hearth-bench-documents-'));
const db = await openDatabase(path.join(dir, 'hearth.db'));
const chunks = Number(process.env.BENCH_DOCUMENT_CHUNKS ?? 100_000);
const random = rng(chunks);
const documents = syntheticDocuments(chunks, random).map((doc, d) => ({ ...doc, id: `bench-doc-${d}`, groups: ['everyone', ...groupsOf(d)] }));
const t = performance.now();
const seeded = await insertDocuments(db, documents);
console.log('seeded', seeded.length, 'chunks of', documents.length, 'documents in', ((performance.now() - t) / 1000).toFixed(1), 's');
const vectors = await openVectorIndex({ file: path.join(dir, 'v.hnsw'), dimension: embedder.dimension, modelId: embedder.modelId });
addSyntheticVectors(vectors, seeded, lowRankVectors(seeded.length, embedder.dimension, random));
const sources = { embedder: () => embedder, vectors: () => vectors };
const services = {
  without: new RetrievalService(new RetrievalRepository(db), sources, { ...DEFAULT_FUSION, weights: { ...DEFAULT_FUSION.weights, document: 0 } }),
  with: new RetrievalService(new RetrievalRepository(db), sources, DEFAULT_FUSION),
};
const N = Number(process.env.BENCH_DOCUMENT_QUERIES ?? 300);
const { specific } = queriesFrom(seeded.map((c) => c.text), N * 2, random);
const readers = { all: ['everyone'], half: ['half'] } as const;
const times: Record<string, number[]> = {};
for (let i = 0; i < N; i++) {
  for (const [who, groups] of Object.entries(readers)) {
    const order = (i % 2 ? ['with', 'without'] : ['without', 'with']) as Array<keyof typeof services>;
    for (const name of order) {
      const start = performance.now();
      await services[name].search({ query: specific[i * 2 + (who === 'half' ? 1 : 0)], k: 5, mode: 'hybrid', groups: [...groups], perDocument: 1 });
      if (i >= 20) (times[`${who} ${name}`] ??= []).push(performance.now() - start);
    }
  }
}
for (const [k, xs] of Object.entries(times)) {
  const { p50, p95, mean } = stats(xs);
  console.log(k.padEnd(16), 'p50', p50.toFixed(2), 'p95', p95.toFixed(2), 'mean', mean.toFixed(2));
}
await embedder.close();
await db.destroy();
await rm(dir, { recursive: true, force: true });
await rm(temporary, { recursive: true, force: true });
