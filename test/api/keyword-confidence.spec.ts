import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadEmbedder, type Embedder } from '../../native/embeddings/index.js';
import { openVectorIndex } from '../../native/vector-index/index.js';
import { embedChunks, insertDocuments, type SeededChunk } from '../fixtures/search-data.js';
import { installTinyEmbeddingModel } from '../fixtures/tiny-embedding-model.js';
import { startApp, type TestApp } from '../helpers.js';

const QUERY = 'How do I rotate the quasar ledger signing keys?';
/** The manual's chunk that answers in the question's own words, and one that holds only one of them. */
const ANSWER = 'Rotate the quasar ledger signing keys with the rekey command once a month, then restart the node.';
const OVERVIEW = 'An overview of the tool: installation, the configuration files, backups and where the keys live.';

/**
 * A question in a passage's own words through POST /api/search: the keyword list has the answering chunk first, while
 * the vector list (vectors set by the test, not embedded) prefers another chunk of the same document and five chunks of
 * other documents. The search trusts the keyword list there (keyword_coverage 1: weights.keyword 16) and shows the
 * answering chunk as its document's passage (the keyword list weighs 8 in the passage order; at equal weights the
 * overview, the vector list's first, would stand for the manual).
 */
describe('a question in a passage\'s own words', () => {
  let t: TestApp;
  let viewer: string;
  let embedder: Embedder;
  let modelDir: string;
  let chunks: SeededChunk[];

  beforeAll(async () => {
    t = await startApp();
    viewer = (await t.userWithRole('viewer')).access;
    chunks = await insertDocuments(t.app.db, [
      { filename: 'manual.txt', chunks: [{ text: OVERVIEW }, { text: ANSWER }] },
      // Five chunks of other documents holding two or three of the question's words: above the overview in the keyword list.
      { filename: 'ledger.txt', chunks: [{ text: 'The quasar ledger stores every balance of the cluster in one file.' }] },
      { filename: 'signing.txt', chunks: [{ text: 'Signing keys are kept offline on a hardware token by the operator.' }] },
      { filename: 'rotation.txt', chunks: [{ text: 'Log files rotate at midnight; the ledger keeps its own journal.' }] },
      { filename: 'quasar.txt', chunks: [{ text: 'Quasar nodes gossip their signing state every few seconds.' }] },
      { filename: 'audit.txt', chunks: [{ text: 'Auditors read the ledger and check each signing record by hand.' }] },
    ]);
    modelDir = await mkdtemp(path.join(os.tmpdir(), 'hearth-confidence-model-'));
    await installTinyEmbeddingModel(modelDir);
    embedder = (await loadEmbedder({ modelDir, device: 'cpu' }))!;
    const vectors = await openVectorIndex({ file: path.join(t.dataDir, 'vectors.hnsw'), dimension: embedder.dimension, modelId: embedder.modelId });
    await embedChunks(t.app.db, embedder, vectors, chunks);
    // The vector list's order, set outright: the overview is the question's own vector, the five others lie near it
    // (each a little further), the answer points away from it (last).
    const [question] = await embedder.embed([QUERY]);
    const near = (step: number) => {
      const tilted = Float32Array.from(question, (x, i) => x + (i % 2 ? step : -step) * 0.05);
      const norm = Math.hypot(...tilted);
      return tilted.map((x) => x / norm);
    };
    const [overview, answer, ...others] = chunks;
    vectors.add([overview.rowid], [question], [overview.key]);
    vectors.add([answer.rowid], [question.map((x) => -x)], [answer.key]);
    others.forEach((chunk, index) => vectors.add([chunk.rowid], [near(index + 1)], [chunk.key]));
    t.app.activeEmbedding.swap({ embedder, vectors });
  });
  afterAll(async () => {
    t.app.activeEmbedding.swap(null);
    await embedder.close();
    await t.close();
    await rm(modelDir, { recursive: true, force: true });
  });

  const search = async (payload: Record<string, unknown>) => {
    const res = await t.request({ method: 'POST', url: '/api/search', token: viewer, payload: { query: QUERY, k: 10, ...payload } });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { results: Array<{ chunk_id: string; filename: string; text: string }>; retrieval_settings: { keyword_coverage: number | null; weights: Record<string, number> } };
  };
  const ids = (results: Array<{ chunk_id: string }>) => results.map((r) => r.chunk_id);

  it('the lists disagree as set: the keyword list has the answer first and the overview past the fifth place, the vector list the reverse', async () => {
    const [overview, answer] = chunks;
    const keyword = ids((await search({ mode: 'keyword', per_document: 0 })).results);
    const vector = ids((await search({ mode: 'vector', per_document: 0 })).results);
    expect(keyword[0]).toBe(answer.id);
    expect(keyword.indexOf(overview.id)).toBeGreaterThanOrEqual(5);
    expect(vector[0]).toBe(overview.id);
    expect(vector.indexOf(answer.id)).toBe(vector.length - 1);
    expect(vector.length).toBeGreaterThanOrEqual(7);
  });

  it('trusts the keyword list (coverage 1: weight 16) and shows the answering chunk as the manual\'s passage', async () => {
    const { results, retrieval_settings } = await search({});
    expect(retrieval_settings.keyword_coverage).toBe(1);
    expect(retrieval_settings.weights).toMatchObject({ vector: 2.5, keyword: 16, document: 3 });
    const manual = results.filter((r) => r.filename === 'manual.txt');
    expect(manual[0].text).toBe(ANSWER);
    expect(results[0].text).toBe(ANSWER);
  });

  it('a paraphrase with few of the passage\'s words keeps the search\'s own weights', async () => {
    const { retrieval_settings } = await search({ query: 'Which command renews the credentials of the quasar book every month?' });
    expect(retrieval_settings.keyword_coverage).toBeLessThan(0.6);
    expect(retrieval_settings.weights).toMatchObject({ vector: 2.5, keyword: 2, document: 3 });
  });
});
