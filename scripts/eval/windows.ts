/**
 * Window vectors (an experiment, not product), measured offline on an index `npm run eval` left in HEARTH_EVAL_WORK:
 * a static embedder averages a chunk's ~256 tokens into one vector, so a question about one line of it meets that
 * line diluted by the rest. Here every chunk is also embedded as overlapping windows of W words (stride W/2), and a
 * chunk's vector score is mix·cos(chunk) + (1 − mix)·max cos(window). A brute-force stand-in for the vector index
 * serves the real RetrievalService (vector and hybrid, one chunk per document first as `POST /api/search` ranks).
 * HEARTH_WINDOWS "W,mix;…" (W 0: the chunk vector alone).
 * `HEARTH_EVAL_DIR=... HEARTH_EVAL_WORK=... npx tsx scripts/eval/windows.ts`
 */
import path from 'node:path';
import { loadEmbedderOnThisThread } from '../../native/embeddings/index.js';
import type { VectorIndex } from '../../native/vector-index/index.js';
import { DEFAULT_FUSION } from '../../plugins/retrieval/fusion.js';
import { RetrievalRepository } from '../../plugins/retrieval/repository.sqlite.js';
import { RetrievalService, type SearchMode } from '../../plugins/retrieval/service.js';
import { evalWork, indexedChunks, openEvalDatabase, searchScores, unitVector } from './eval-index.js';
import { printSummary, summaryRow } from './metrics.js';

const PAGE = 512;

function windowsOf(text: string, size: number): string[] {
  const words = text.split(/\s+/).filter(Boolean);
  if (words.length <= size) return [words.join(' ')];
  const out: string[] = [];
  const stride = Math.max(1, Math.floor(size / 2));
  for (let start = 0; start < words.length; start += stride) {
    out.push(words.slice(start, start + size).join(' '));
    if (start + size >= words.length) break;
  }
  return out;
}

async function main(): Promise<void> {
  const { work, set, questions } = await evalWork();
  const settings = (process.env.HEARTH_WINDOWS ?? '0,1;48,0;48,0.5;24,0.5;96,0.5').split(';').map((cell) => cell.split(',').map(Number) as [number, number]);
  const modes = (process.env.HEARTH_WINDOWS_MODES ?? 'vector,hybrid').split(',') as SearchMode[];
  const { db, score } = await openEvalDatabase(work);
  const { chunks } = await indexedChunks(db);
  const embedder = (await loadEmbedderOnThisThread({ modelDir: process.env.HEARTH_EVAL_MODEL_DIR ?? path.join(work, 'data', 'models'), device: 'cpu' }))!;
  const dimension = embedder.dimension;
  const embedAll = async (texts: string[]) => {
    const out = new Float32Array(texts.length * dimension);
    for (let i = 0; i < texts.length; i += PAGE) (await embedder.embed(texts.slice(i, i + PAGE))).forEach((v, j) => out.set(unitVector(v), (i + j) * dimension));
    return out;
  };
  const chunkVectors = await embedAll(chunks.map((c) => c.text));
  const windowCache = new Map<number, { vectors: Float32Array; owner: Int32Array }>();
  const windowsFor = async (size: number) => {
    let found = windowCache.get(size);
    if (!found) {
      const texts: string[] = [];
      const owner: number[] = [];
      chunks.forEach((chunk, index) => windowsOf(chunk.text, size).forEach((text) => (texts.push(text), owner.push(index))));
      const started = performance.now();
      found = { vectors: await embedAll(texts), owner: Int32Array.from(owner) };
      console.log(`W ${size}: ${texts.length} windows (${(texts.length / chunks.length).toFixed(1)} a chunk) embedded in ${((performance.now() - started) / 1000).toFixed(1)} s`);
      windowCache.set(size, found);
    }
    return found;
  };
  const dot = (a: Float32Array, offset: number, q: Float32Array) => {
    let s = 0;
    for (let d = 0; d < dimension; d++) s += a[offset + d] * q[d];
    return s;
  };
  const rows: Array<Array<string | number>> = [];
  try {
    for (const [size, mix] of settings) {
      const windows = size > 0 ? await windowsFor(size) : null;
      const scoreChunks = (query: Float32Array) => {
        const q = unitVector(query);
        const best = new Float32Array(chunks.length).fill(-2);
        if (windows) for (let w = 0; w < windows.owner.length; w++) best[windows.owner[w]] = Math.max(best[windows.owner[w]], dot(windows.vectors, w * dimension, q));
        return chunks.map((chunk, index) => ({ label: chunk.rowid, score: mix * dot(chunkVectors, index * dimension, q) + (windows ? (1 - mix) * best[index] : 0) }));
      };
      const top = (query: Float32Array, k: number) => scoreChunks(query).sort((a, b) => b.score - a.score).slice(0, k);
      const vectors: VectorIndex = {
        dimension,
        modelId: embedder.modelId,
        size: () => chunks.length,
        add: () => undefined,
        setKeys: () => undefined,
        remove: () => undefined,
        has: () => true,
        labels: () => chunks.map((c) => c.rowid),
        search: top,
        searchAsync: async (query, k) => top(query, k),
        save: async () => undefined,
        diskBytes: () => 0,
      };
      const sources = { embedder: () => embedder, vectors: () => vectors };
      for (const mode of modes) {
        const service = new RetrievalService(new RetrievalRepository(db), sources, { ...DEFAULT_FUSION, perDocument: 1 });
        rows.push([`${mode}, W ${size} mix ${mix}`, ...summaryRow(await searchScores(service, questions, mode, score))]);
        console.log(rows.at(-1)!.map((cell) => (typeof cell === 'number' ? cell.toFixed(3) : cell)).join('  '));
      }
    }
    printSummary(set, questions.length, rows);
  } finally {
    await embedder.close();
    await db.destroy();
  }
}

await main();
