import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadEmbedder, type Embedder } from '../../native/embeddings/index.js';
import { openVectorIndex } from '../../native/vector-index/index.js';
import { FUSION_CANDIDATES, runRetrievalHarness } from '../../bench/retrieval-harness.js';
import { openDatabase } from '../../core/db/database.js';
import { KEYWORD_LIMITS, candidateTerms, planKeywordQuery } from '../../plugins/retrieval/keyword-query.js';
import { DEFAULT_FUSION } from '../../plugins/retrieval/fusion.js';
import { RetrievalRepository } from '../../plugins/retrieval/repository.sqlite.js';
import { buildRetrievalCorpus, questionOverlap } from '../fixtures/retrieval-corpus.js';
import { embedChunks, insertDocuments, type SeededChunk } from '../fixtures/search-data.js';
import { installTinyEmbeddingModel } from '../fixtures/tiny-embedding-model.js';
import { startApp, type TestApp } from '../helpers.js';

const RESULT_FIELDS = ['rank', 'score', 'chunk_id', 'document_id', 'filename', 'page', 'heading', 'text'];
const DUPLICATE = 'Quarterly audit checklist: verify ledger totals, reconcile bank statements, sign the register, archive receipts, notify the treasurer, update the asset inventory, review petty cash, confirm payroll, check supplier invoices and file the report with the board secretary before month end.';

const FILLER = ['Ships leave the harbour at dawn when the tide turns and the pilot boards.', 'The bakery opens early and sells rye bread, pretzels and seed rolls to commuters.', 'Volunteers repaint the bandstand in the park each spring before the concerts begin.', 'The museum archive stores maps, letters and photographs in climate controlled rooms.', 'Cyclists follow the canal towpath from the mill to the old railway viaduct.'];

describe('POST /api/search', () => {
  let t: TestApp;
  let viewer: { access: string };
  let chunks: SeededChunk[];
  const search = (payload: unknown, token: string | null = viewer.access) => t.request({ method: 'POST', url: '/api/search', payload: payload as object, token: token ?? undefined });

  beforeAll(async () => {
    t = await startApp();
    viewer = await t.userWithRole('viewer');
    chunks = await insertDocuments(t.app.db, [
      {
        filename: 'lighthouse.md',
        chunks: [
          { text: 'The lighthouse keeper writes the logbook every evening at dusk and records the weather.', heading: 'Duties', page: 3 },
          { text: 'A lighthouse lens focuses the beam so that ships see it over twenty nautical miles.', heading: 'Optics', page: 4 },
        ],
      },
      { filename: 'harbour.txt', chunks: [{ text: 'The harbour master keeps a logbook of arrivals, departures and cargo manifests.' }, ...FILLER.map((text) => ({ text }))] },
      { filename: 'copy-a.txt', chunks: [{ text: DUPLICATE }] },
      { filename: 'copy-b.txt', chunks: [{ text: DUPLICATE.toUpperCase().replaceAll(',', ' ;') }] },
      { filename: 'copy-c.txt', chunks: [{ text: DUPLICATE.replace('treasurer', 'chairman') }] },
      { filename: 'draft.md', status: 'indexing', chunks: [{ text: 'Zephyrine notes from the draft that is still being indexed.' }] },
      { filename: 'broken.pdf', status: 'failed', chunks: [{ text: 'Zephyrine notes from a document that failed.' }] },
      { filename: 'waiting.docx', status: 'queued', chunks: [{ text: 'Zephyrine notes from a document still queued.' }] },
    ]);
  });
  afterAll(() => t.close());

  describe('keyword search (no embedding model installed)', () => {
    it('ranks the chunk matching more query terms first, with the fixed field names', async () => {
      const res = await search({ query: 'Where is the lighthouse logbook?', mode: 'keyword' });
      expect(res.statusCode).toBe(200);
      const { results, retrieval_settings } = res.json();
      expect(results[0]).toEqual({
        rank: 1,
        score: expect.any(Number),
        chunk_id: chunks[0].id,
        document_id: chunks[0].documentId,
        filename: 'lighthouse.md',
        page: 3,
        heading: 'Duties',
        text: chunks[0].text,
      });
      expect(results.map((r: { rank: number }) => r.rank)).toEqual(results.map((_: unknown, i: number) => i + 1));
      const scores = results.map((r: { score: number }) => r.score);
      expect([...scores].sort((a, b) => b - a)).toEqual(scores);
      expect(new Set(results.slice(1, 3).map((r: { filename: string }) => r.filename))).toEqual(new Set(['lighthouse.md', 'harbour.txt']));
      for (const result of results) expect(RESULT_FIELDS).toEqual(expect.arrayContaining(Object.keys(result)));
      const harbour = results.find((r: { filename: string }) => r.filename === 'harbour.txt');
      expect(harbour).not.toHaveProperty('page'); // absent, not null, when the chunk has none
      expect(harbour).not.toHaveProperty('heading');
      expect(retrieval_settings).toMatchObject({ k: 5, mode: 'keyword', mode_used: 'keyword', fusion: 'none', score: 'bm25', weights: { vector: 0, keyword: 1 }, filters: {} });
      expect(retrieval_settings.candidates).toEqual({ vector: 0, keyword: expect.any(Number), documents: 0 });
    });

    it('hybrid runs on keywords alone and says why; vector answers 409 embedder_unavailable', async () => {
      const hybrid = await search({ query: 'lighthouse beam' });
      expect(hybrid.statusCode).toBe(200);
      expect(hybrid.json().results[0].chunk_id).toBe(chunks[1].id);
      expect(hybrid.json().retrieval_settings).toMatchObject({ mode: 'hybrid', mode_used: 'keyword', reason: expect.stringMatching(/no embedding model/), model_id: null });
      const vector = await search({ query: 'lighthouse beam', mode: 'vector' });
      expect(vector.statusCode).toBe(409);
      expect(vector.json().error.code).toBe('embedder_unavailable');
    });

    it('keeps one of several identical or near-identical chunks', async () => {
      const res = await search({ query: 'quarterly audit checklist ledger treasurer chairman', mode: 'keyword', k: 10 });
      const copies = res.json().results.filter((r: { filename: string }) => r.filename.startsWith('copy-'));
      expect(copies).toHaveLength(1);
    });

    it('returns only chunks of indexed documents', async () => {
      const res = await search({ query: 'zephyrine notes', mode: 'keyword' });
      expect(res.statusCode).toBe(200);
      expect(res.json().results.filter((r: { text: string }) => /zephyrine/i.test(r.text))).toEqual([]);
    });

    it('honours k: the default is 5, 1 and 50 are accepted', async () => {
      expect((await search({ query: 'the', mode: 'keyword' })).json().retrieval_settings.k).toBe(5);
      expect((await search({ query: 'lighthouse', k: 1 })).json().results).toHaveLength(1);
      const all = await search({ query: 'the harbour lighthouse bakery museum canal park', k: 50 });
      expect(all.statusCode).toBe(200);
      expect(all.json().results.length).toBeLessThanOrEqual(50);
    });

    it.each([
      'AND', 'OR', 'NOT', 'NEAR', '"', '"unbalanced quote', '(', ')', '((lighthouse', '*', 'light*', '-', '-lighthouse', 'lighthouse -keeper',
      'a AND OR NOT b', 'NEAR(lighthouse keeper, 2)', 'text:lighthouse', '{text heading}: beam', '^lighthouse', 'lighthouse + logbook',
      "'; DROP TABLE chunks; --", '"" OR ""', '😀 emoji only', 'ǅ', 'x'.repeat(2000), 'lighthouse '.repeat(180),
    ])('takes FTS syntax in the query literally and never fails: %s', async (query) => {
      for (const mode of ['keyword', 'hybrid']) {
        const res = await search({ query: query.slice(0, 2000), mode });
        expect(res.statusCode, res.body).toBe(200);
      }
    });

    it('finds words next to FTS operators in the query', async () => {
      const res = await search({ query: 'lighthouse AND (beam OR "nautical") NOT -keeper*', mode: 'keyword' });
      expect(res.json().results.map((r: { chunk_id: string }) => r.chunk_id)).toContain(chunks[1].id);
    });

    it.each([
      [{}, 'body.query'],
      [{ query: '' }, 'body.query'],
      [{ query: '   ' }, 'body.query'],
      [{ query: 'x'.repeat(2001) }, 'body.query'],
      [{ query: 42 }, 'body.query'],
      [{ query: 'lighthouse', k: 0 }, 'body.k'],
      [{ query: 'lighthouse', k: 51 }, 'body.k'],
      [{ query: 'lighthouse', k: 2.5 }, 'body.k'],
      [{ query: 'lighthouse', k: '5' }, 'body.k'],
      [{ query: 'lighthouse', mode: 'semantic' }, 'body.mode'],
      [{ query: 'lighthouse', filters: {} }, 'body.filters'],
    ])('refuses bad input %j with 400 on %s', async (payload, field) => {
      const res = await search(payload);
      expect(res.statusCode).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'validation_failed', field });
    });

    it('answers for terms found in thousands of chunks, ranking only a bounded window of them', async () => {
      const many = Array.from({ length: KEYWORD_LIMITS.probeCap + 100 }, (_, i) => ({ text: `Widget inventory line ${i} counted by the warehouse team.` }));
      await insertDocuments(t.app.db, [{ filename: 'inventory.csv', chunks: many }, { filename: 'gizmo.txt', chunks: [{ text: 'The widget gizmo needs a spare spring.' }] }]);
      const common = await search({ query: 'widget', mode: 'keyword' });
      expect(common.statusCode).toBe(200);
      expect(common.json().results).toHaveLength(5);
      for (const r of common.json().results) expect(r.text).toMatch(/widget/i);
      const rare = await search({ query: 'widget gizmo', mode: 'keyword' });
      expect(rare.json().results[0].filename).toBe('gizmo.txt');
    });

    it('fetches deeper when the best matches belong to documents that may not be returned', async () => {
      const hidden = Array.from({ length: 30 }, (_, i) => ({ text: `Quillwort quillwort survey plot ${i}.` }));
      await insertDocuments(t.app.db, [
        { filename: 'quillwort-draft.md', status: 'indexing', chunks: hidden },
        { filename: 'pond-survey.txt', chunks: [{ text: `The pond survey lists sedges, rushes, water mint and one quillwort rosette near the inflow, ${FILLER[3]}` }] },
      ]);
      const res = await search({ query: 'quillwort', mode: 'keyword' });
      expect(res.json().results.map((r: { filename: string }) => r.filename)).toEqual(['pond-survey.txt']);
    });

    it('needs a signed-in user: viewers may search, anonymous callers get 401', async () => {
      expect((await search({ query: 'lighthouse' }, null)).statusCode).toBe(401);
      expect((await search({ query: 'lighthouse' }, 'not-a-token')).statusCode).toBe(401);
      const admin = await t.login();
      expect((await search({ query: 'lighthouse' }, admin.access)).statusCode).toBe(200);
    });
  });

  describe('with the tiny ONNX embedder', () => {
    let embedder: Embedder;
    let modelDir: string;

    beforeAll(async () => {
      modelDir = await mkdtemp(path.join(os.tmpdir(), 'hearth-search-model-'));
      await installTinyEmbeddingModel(modelDir);
      embedder = (await loadEmbedder({ modelDir, device: 'cpu' }))!;
      const vectors = await openVectorIndex({ file: path.join(t.dataDir, 'vectors.hnsw'), dimension: embedder.dimension, modelId: embedder.modelId });
      await embedChunks(t.app.db, embedder, vectors, chunks);
      t.app.activeEmbedding.swap({ embedder, vectors });
    });
    afterAll(async () => {
      t.app.activeEmbedding.swap(null);
      await embedder.close();
      await rm(modelDir, { recursive: true, force: true });
    });

    it('vector mode ranks by cosine similarity', async () => {
      const res = await search({ query: 'The lighthouse keeper writes the logbook every evening at dusk and records the weather.', mode: 'vector' });
      expect(res.statusCode).toBe(200);
      const { results, retrieval_settings } = res.json();
      expect(results[0].chunk_id).toBe(chunks[0].id);
      expect(results[0].score).toBeCloseTo(1, 4);
      expect(retrieval_settings).toMatchObject({ mode_used: 'vector', score: 'cosine', model_id: embedder.modelId });
    });

    it('hybrid fuses both lists by reciprocal rank at their weights (vector 2.5, keyword 2, or 16 for a question in a passage\'s own words), with the whole-document ranking added', async () => {
      const query = 'harbour logbook';
      // The fusion's formula over the lists as each side ranks them: no per-document cap reorders them here.
      const side = async (mode: string) => (await search({ query, mode, k: 20, per_document: 0 })).json().results.map((r: { chunk_id: string }) => r.chunk_id) as string[];
      const [vector, keyword] = [await side('vector'), await side('keyword')];
      const res = await search({ query, k: 5, per_document: 0 });
      const { results, retrieval_settings } = res.json();
      // Both words stand in the keyword list's first chunk: keyword_coverage 1, so the keyword list weighs 16 here.
      expect(retrieval_settings).toMatchObject({ mode_used: 'hybrid', fusion: 'rrf', rrf_k: 30, weights: { vector: 2.5, keyword: 16, document: 3 }, keyword_coverage: 1, candidates: { vector: 20, keyword: 20 } });
      const rrf = (list: string[], id: string) => (list.includes(id) ? 1 / (30 + list.indexOf(id) + 1) : 0);
      expect(retrieval_settings.document_confidence).toBe(2);
      // Beyond the chunk lists, the whole-document ranking adds 3 / (30 + the document's rank): alike for each chunk of a
      // document, but for the first document's best chunk, which gains more by its document's lead (document_confidence).
      const gainOf = new Map<string, number>();
      let lifted = 0;
      for (const r of results) {
        const gain = r.score - (2.5 * rrf(vector, r.chunk_id) + 16 * rrf(keyword, r.chunk_id));
        if (gain > 3 / 31 + 1e-9) {
          lifted++;
          continue;
        }
        if (Math.abs(gain) > 1e-12) {
          const rank = 3 / gain - 30;
          expect(Math.abs(rank - Math.round(rank))).toBeLessThan(1e-6);
          expect(Math.round(rank)).toBeGreaterThanOrEqual(1);
        }
        expect(gainOf.get(r.document_id) ?? gain).toBeCloseTo(gain, 10);
        gainOf.set(r.document_id, gain);
      }
      expect(lifted).toBeLessThanOrEqual(1);
      expect([...gainOf.values()].some((gain) => gain > 0)).toBe(true);
      expect(keyword.length).toBeLessThan(5); // three chunks have either word: the rest come from the vector side
      expect(results).toHaveLength(5);
      expect(results[0].chunk_id).toBe(chunks[2].id);
      // Every chunk is a vector candidate here, so keyword matches (found by both sides) come first.
      expect(results.slice(0, keyword.length).map((r: { chunk_id: string }) => r.chunk_id).sort()).toEqual([...keyword].sort());
    });

    it('fuses the same 20 candidates a side for any k up to 20, so the first results do not depend on k; k above 20 fuses k a side', async () => {
      const query = 'harbour logbook weather';
      const first = async (k: number) => {
        const { results, retrieval_settings } = (await search({ query, k })).json();
        return { ids: results.slice(0, 5).map((r: { chunk_id: string }) => r.chunk_id), candidates: retrieval_settings.candidates };
      };
      const [five, twenty, fifty] = [await first(5), await first(20), await first(50)];
      expect(five.candidates).toMatchObject({ vector: 20, keyword: 20 });
      expect(twenty.candidates).toMatchObject({ vector: 20, keyword: 20 });
      expect(fifty.candidates).toMatchObject({ vector: 50, keyword: 50 });
      expect(twenty.ids).toEqual(five.ids);
    });

    it('embeds a query text once: another page, k or mode reuses its vector, another text does not', async () => {
      const embed = vi.spyOn(embedder, 'embed');
      try {
        const query = 'Where does the keeper record the evening weather?';
        const first = (await search({ query, mode: 'vector', k: 3 })).json().results;
        expect((await search({ query, mode: 'vector', k: 3 })).json().results).toEqual(first);
        await search({ query, k: 10 });
        expect(embed).toHaveBeenCalledTimes(1);
        await search({ query: `${query} Today.`, mode: 'vector' });
        expect(embed).toHaveBeenCalledTimes(2);
      } finally {
        embed.mockRestore();
      }
    });

    it('keeps excluding documents that are not indexed, and duplicates', async () => {
      const res = await search({ query: 'Zephyrine notes quarterly audit checklist', k: 50 });
      const texts = res.json().results.map((r: { text: string; filename: string }) => r.filename);
      expect(texts.filter((f: string) => ['draft.md', 'broken.pdf', 'waiting.docx'].includes(f))).toEqual([]);
      expect(texts.filter((f: string) => f.startsWith('copy-'))).toHaveLength(1);
    });
  });
});

describe('keyword query plan', () => {
  it('keeps content words, longest first, and drops FTS syntax and function words', () => {
    expect(candidateTerms('How do I "reset" (the) password* -AND OR NOT vpn?')).toEqual(['password', 'reset', 'vpn']);
    expect(candidateTerms('to be or not to be')).toEqual([]); // nothing to match on: the vector side answers such queries
  });

  it('ORs the rare terms within the row budget and lets common ones only refine them', () => {
    const plan = planKeywordQuery([{ term: 'server', df: 2000 }, { term: 'kestrel', df: 12 }, { term: 'absent', df: 0 }, { term: 'filter', df: 300 }]);
    expect(plan).toEqual({
      match: '("kestrel" OR "filter") OR (("kestrel" OR "filter") AND ("server"))',
      phraseFrequencies: [12, 300, 12, 300, 2000], // each phrase of the match, in its order
      rare: '("kestrel" OR "filter")',
      windowed: false,
      terms: ['kestrel', 'filter', 'server'],
    });
    expect(planKeywordQuery([{ term: 'kestrel', df: 12 }])).toMatchObject({ match: '("kestrel")', phraseFrequencies: [12] });
    expect(planKeywordQuery([{ term: 'absent', df: 0 }])).toBeNull();
  });

  it('refines with the rarest common terms only while their frequencies fit their own budget', () => {
    const budget = KEYWORD_LIMITS.commonTermRows;
    const plan = planKeywordQuery([{ term: 'server', df: budget / 2 }, { term: 'kestrel', df: 12 }, { term: 'network', df: budget / 3 }, { term: 'system', df: 2 * budget }]);
    expect(plan?.terms).toEqual(['kestrel', 'network', 'server']);
    expect(planKeywordQuery([{ term: 'system', df: 2 * budget }, { term: 'server', df: 3 * budget }])).toMatchObject({ match: '"system"', windowed: true, terms: ['system'] });
  });

  it('with common terms only, ANDs them over a bounded window, relaxing to the rarest alone', () => {
    const cap = KEYWORD_LIMITS.probeCap;
    expect(planKeywordQuery([{ term: 'server', df: 5 * cap }, { term: 'network', df: cap }])).toEqual({
      match: '"network" AND "server"',
      phraseFrequencies: [cap, 5 * cap],
      windowed: true,
      relaxed: { match: '"network"', phraseFrequencies: [cap] },
      terms: ['network', 'server'],
    });
  });
});

describe('term frequency probes', () => {
  it('are kept while the keyword index is unchanged (other writes too) and probed afresh after chunks are added, edited or deleted', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'hearth-probe-cache-'));
    const db = await openDatabase(path.join(dir, 'probe.db'));
    try {
      const cap = KEYWORD_LIMITS.probeCap;
      const [first] = await insertDocuments(db, [{ filename: 'a.txt', chunks: [{ text: 'The zephyrine valve.' }, { text: 'A plain line.' }] }]);
      const repository = new RetrievalRepository(db);
      const probes = vi.spyOn(repository as unknown as { probe: (params: unknown) => Promise<unknown> }, 'probe');
      const frequency = async () => (await repository.termFrequencies(['zephyrine'], cap))[0];
      expect(await frequency()).toBe(1);
      expect(await frequency()).toBe(1);
      await sql`update documents set groups = '["ops"]'`.execute(db); // a write elsewhere: the index is the same
      expect(await frequency()).toBe(1);
      expect(probes).toHaveBeenCalledTimes(1);
      const [added] = await insertDocuments(db, [{ filename: 'b.txt', chunks: [{ text: 'Another zephyrine seal.' }] }]);
      expect(await frequency()).toBe(2);
      await sql`update chunks set text = 'A zephyrine gasket.' where rowid = ${first.rowid + 1}`.execute(db);
      expect(await frequency()).toBe(3);
      await sql`delete from chunks where rowid in (${first.rowid}, ${added.rowid})`.execute(db);
      expect(await frequency()).toBe(1);
      expect(probes).toHaveBeenCalledTimes(4);
    } finally {
      await db.destroy();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('count up to the cap and estimate beyond it from where the cap-th match lies', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'hearth-probe-'));
    const db = await openDatabase(path.join(dir, 'probe.db'));
    try {
      const cap = KEYWORD_LIMITS.probeCap;
      const lines = Array.from({ length: 4 * cap }, (_, i) => ({ text: `Ledger ${i % 2 ? 'memo' : 'audit'} line ${i}${i === 7 ? ' zephyrine' : ''}.` }));
      await insertDocuments(db, [{ filename: 'ledger.txt', chunks: lines }]);
      const [ledger, audit, zephyrine, absent] = await new RetrievalRepository(db).termFrequencies(['ledger', 'audit', 'zephyrine', 'absent'], cap);
      expect(ledger).toBe(4 * cap);
      expect(Math.abs(audit - 2 * cap)).toBeLessThanOrEqual(2);
      expect([zephyrine, absent]).toEqual([1, 0]);
    } finally {
      await db.destroy();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

/**
 * What each mode reaches today on the harness with the tiny test model (docs/performance.md: keyword 0.500 / 0.400, vector 0.350 / 0.193,
 * hybrid 0.575 / 0.413 with the default fusion (keyword×2, RRF k=30, chosen on the real-collection evaluation,
 * docs/retrieval-quality.md; 0.550 / 0.396 at k=60); chance 0.083 / 0.049), less two questions of recall@5 and two first places lost of MRR
 * (2 × 0.5 / 40): the run is deterministic (seeded model, fixed corpus, seeded HNSW); the margin is for float differences
 * between CPUs flipping a near tie.
 */
const HARNESS_FLOORS: Record<string, { recallAt5: number; mrr: number }> = {
  keyword: { recallAt5: 0.45, mrr: 0.375 },
  vector: { recallAt5: 0.3, mrr: 0.165 },
  // Keyword × 1 since session 16 (it gained on both real question sets): this tiny model's near-chance vector list
  // then weighs as much as the keywords, and its MRR fell from 0.413 to 0.359 (the built-in embedder's rose, 0.545 to 0.573).
  // Vector × 3, whole documents × 3 since session 20, chosen with the shipped embedder (which reaches 1.000 / 0.788 here,
  // test/api/shipped-embedder.spec.ts): this near-chance list weighs more still, 0.575 / 0.359 → 0.550 / 0.327; a document's
  // passages then ordered by both chunk lists at equal weights: 0.550 / 0.352.
  'hybrid default': { recallAt5: 0.5, mrr: 0.3 },
};

describe('retrieval-quality harness', () => {
  it('builds 60 passages and 40 questions that share at most half their words with their target', () => {
    const corpus = buildRetrievalCorpus();
    expect(corpus.passages).toHaveLength(60);
    expect(corpus.questions).toHaveLength(40);
    for (const q of corpus.questions) expect(questionOverlap(corpus, q), q.question).toBeLessThanOrEqual(0.5);
  });

  it('keeps keyword, vector and hybrid (the default fusion) at the recall@5 and MRR they reach today; hybrid finds more than either list alone', async () => {
    const modelDir = await mkdtemp(path.join(os.tmpdir(), 'hearth-harness-model-'));
    try {
      await installTinyEmbeddingModel(modelDir);
      const embedder = (await loadEmbedder({ modelDir, device: 'cpu' }))!;
      const report = await runRetrievalHarness(embedder, FUSION_CANDIDATES.slice(0, 1));
      await embedder.close();
      const score = (label: string) => report.scores.find((s) => s.label === label)!;
      expect(report.scores.map((s) => s.label)).toEqual(Object.keys(HARNESS_FLOORS));
      for (const [label, floor] of Object.entries(HARNESS_FLOORS)) {
        expect(score(label).recallAt5, `${label} recall@5`).toBeGreaterThanOrEqual(floor.recallAt5);
        expect(score(label).mrr, `${label} MRR`).toBeGreaterThanOrEqual(floor.mrr);
      }
      const hybrid = score(FUSION_CANDIDATES[0].label);
      expect(hybrid.fusion).toEqual(DEFAULT_FUSION);
      expect(hybrid.recallAt5).toBeGreaterThan(score('keyword').recallAt5);
      expect(hybrid.recallAt5).toBeGreaterThan(score('vector').recallAt5);
    } finally {
      await rm(modelDir, { recursive: true, force: true });
    }
  });
});

describe('keyword index maintenance', () => {
  it('merges the segments ingestion leaves, in steps, without changing any answer; nothing to do until the next write', async () => {
    const t = await startApp();
    try {
      const words = ['harbour', 'lantern', 'copper', 'tide', 'dredger', 'basin', 'orchard', 'ledger', 'quay', 'pilot'];
      // One transaction per document, as ingestion writes them: every commit leaves FTS5 segments behind.
      for (let d = 0; d < 60; d++) {
        const chunks = Array.from({ length: 5 }, (_, c) => ({ text: `Entry ${d}-${c}: the ${words[(d + c) % 10]} and the ${words[(d * 3 + c) % 10]} near ${words[(d * 7) % 10]} ${d * 5 + c}.` }));
        await insertDocuments(t.app.db, [{ filename: `log-${d}.txt`, chunks }]);
      }
      const viewer = (await t.userWithRole('viewer')).access;
      const search = async (query: string) => (await t.request({ method: 'POST', url: '/api/search', token: viewer, payload: { query, k: 20, mode: 'keyword' } })).json().results;
      const queries = ['copper lantern', 'pilot quay basin', 'ledger 17', 'orchard'];
      const before = await Promise.all(queries.map(search));
      const dataRows = async () => Number((await sql<{ n: number }>`select count(*) as n from chunks_fts_data`.execute(t.app.db)).rows[0].n);
      const rowsBefore = await dataRows();

      expect(await t.app.keywordIndexMerger.compact()).toBeGreaterThan(0);
      expect(await dataRows()).toBeLessThan(rowsBefore);
      await sql`insert into chunks_fts(chunks_fts) values ('integrity-check')`.execute(t.app.db);
      expect(await Promise.all(queries.map(search))).toEqual(before);
      expect(await t.app.keywordIndexMerger.compact()).toBe(0);

      await insertDocuments(t.app.db, [{ filename: 'late.txt', chunks: [{ text: 'A late copper lantern entry.' }] }]);
      await t.app.keywordIndexMerger.compact();
      expect((await search('late copper')).some((result: { filename: string }) => result.filename === 'late.txt')).toBe(true);
    } finally {
      await t.close();
    }
  });
});
