/**
 * The HNSW graph's recall on real text vectors: the node_modules markdown (the evaluation's corpus, scripts/eval/corpus.ts)
 * cut into paragraph chunks of up to 1,000 characters and embedded by the built-in embedder; queries are 6-12 word
 * windows of 400 random chunks. For each efSearch, recall@k of the int8 graph against exact float32 cosine over every
 * chunk (k 10 and 20: the service asks each side for 20 candidates), and the mean time of a search.
 * BENCH_RECALL_CORPUS adds the text files of other folders (comma-separated; e.g. the manual pages that
 * `npx tsx scripts/eval/man-corpus.ts DIR` renders). `npx tsx bench/graph-recall.ts` (BENCH_RECALL_EF=64,96,128;
 * BENCH_RECALL_CHUNKS caps the chunks).
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { loadEmbedder } from '../native/embeddings/index.js';
import { HNSW_PARAMETERS } from '../native/vector-index/index.js';
import { listCorpus, listFolder } from '../scripts/eval/corpus.js';
import { cachedDefaultModel } from './default-embedder.js';
import { rng } from './search.js';

const require = createRequire(import.meta.url);
const { Int8HnswIndex } = require('@hearth/hnsw-int8');
const efs = (process.env.BENCH_RECALL_EF ?? '64,96,128,192').split(',').map(Number);
const cap = Number(process.env.BENCH_RECALL_CHUNKS ?? Infinity);

const chunks: string[] = [];
const folders = (process.env.BENCH_RECALL_CORPUS ?? '').split(',').filter(Boolean);
const documents = [...(await listCorpus('node_modules')), ...(await Promise.all(folders.map((folder) => listFolder(folder)))).flat()];
for (const document of documents) {
  let current = '';
  for (const paragraph of (await readFile(document.file, 'utf8')).split(/\n\s*\n/)) {
    if (current && current.length + paragraph.length > 1000) chunks.push(current), (current = '');
    current = current ? `${current}\n\n${paragraph}` : paragraph.slice(0, 1000);
  }
  if (current.trim()) chunks.push(current);
}
chunks.length = Math.min(chunks.length, cap);
const embedder = (await loadEmbedder({ modelDir: (await cachedDefaultModel()).modelDir, device: 'cpu' }))!;
const vectors: Float32Array[] = [];
for (let i = 0; i < chunks.length; i += 256) vectors.push(...(await embedder.embed(chunks.slice(i, i + 256))));
const index = new Int8HnswIndex(embedder.dimension);
index.initIndex(vectors.length, HNSW_PARAMETERS.m, HNSW_PARAMETERS.efConstruction, HNSW_PARAMETERS.randomSeed, false);
vectors.forEach((vector, i) => index.addPoint(vector, i));

const random = rng(42);
const queries: Float32Array[] = [];
while (queries.length < 400) {
  const words = chunks[Math.floor(random() * chunks.length)].split(/\s+/).filter(Boolean);
  if (words.length < 12) continue;
  const length = 6 + Math.floor(random() * 7);
  const start = Math.floor(random() * (words.length - length));
  queries.push((await embedder.embed([words.slice(start, start + length).join(' ')], { priority: 'query' }))[0]);
}
const norm = (v: Float32Array) => Math.sqrt(v.reduce((sum, x) => sum + x * x, 0)) || 1;
const norms = vectors.map(norm);
const truth = queries.map((query) => {
  const q = norm(query);
  return vectors
    .map((vector, label) => ({ label, score: vector.reduce((sum, x, i) => sum + x * query[i], 0) / (norms[label] * q) }))
    .sort((a, b) => b.score - a.score)
    .slice(0, 20)
    .map(({ label }) => label);
});
console.log(`HNSW recall on ${vectors.length} real chunk vectors (${embedder.modelId}, ${embedder.dimension} d), ${queries.length} queries`);
console.log('efSearch  recall@10  recall@20  mean ms (k 20)');
for (const ef of efs) {
  index.setEf(ef);
  let found10 = 0;
  let found20 = 0;
  let ms = 0;
  for (const [q, query] of queries.entries()) {
    found10 += index.searchKnn(query, 10).neighbors.filter((label: number) => truth[q].slice(0, 10).includes(label)).length;
    const start = performance.now();
    const { neighbors } = index.searchKnn(query, 20);
    ms += performance.now() - start;
    found20 += neighbors.filter((label: number) => truth[q].includes(label)).length;
  }
  console.log(`${String(ef).padStart(8)}  ${(found10 / (queries.length * 10)).toFixed(3).padStart(9)}  ${(found20 / (queries.length * 20)).toFixed(3).padStart(9)}  ${(ms / queries.length).toFixed(3)}`);
}
await embedder.close();
