/**
 * The keyword index of whole documents (migration 0018, issue 16): ingestion writes a document's row once its
 * chunks are written, any change to its chunks takes the row away, the ranking reads only what the reader may
 * read, and hybrid search fuses it as a third list.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RetrievalRepository } from '../../plugins/retrieval/repository.sqlite.js';
import { multipartBody } from '../fixtures/multipart.js';
import { asBeforeMigration } from '../fixtures/older-schema.js';
import { installTinyEmbeddingModel } from '../fixtures/tiny-embedding-model.js';
import { type TestApp, startApp } from '../helpers.js';

/** About 200 words of neutral prose: sections this long become chunks of their own. */
const filler = (topic: string) => Array.from({ length: 20 }, (_, i) => `The ${topic} crew checked line ${i + 1} of the rota and wrote down what they saw there.`).join(' ');
/** The question's three words, one in each of three sections (so in three chunks). */
const SPREAD = `# Harbour manual\n\n## Plants\n\n${filler('garden')} Quillwort grows by the slipway.\n\n## Boats\n\n${filler('boat')} Marshalling happens at dawn.\n\n## Buoys\n\n${filler('buoy')} The bellbuoy rings at high tide.\n`;
/** One of the words, twice, in a short note. */
const SINGLE = '# Garden note\n\nQuillwort, quillwort: the note says it wants wet ground and some shade, and the keeper waters it each morning before the first boats leave.\n';
const MATCH = '"quillwort" OR "marshalling" OR "bellbuoy"';

describe('the keyword index of whole documents', () => {
  let t: TestApp;
  let modelDir: string;
  let editor: string;
  let viewer: string;
  const ids: Record<string, string> = {};
  const repository = () => new RetrievalRepository(t.app.db);
  const rowsOf = async () => (await t.app.db.selectFrom('document_keywords').select(['id', 'document_id']).execute()).sort((a, b) => a.document_id.localeCompare(b.document_id));

  beforeAll(async () => {
    modelDir = mkdtempSync(path.join(os.tmpdir(), 'hearth-document-ranking-'));
    await installTinyEmbeddingModel(modelDir);
    t = await startApp({ MODEL_DIR: modelDir });
    editor = (await t.userWithRole('editor')).access;
    viewer = (await t.userWithRole('viewer')).access;
    const files: Record<string, string> = { 'spread.md': SPREAD, 'single.md': SINGLE };
    for (let i = 0; i < 8; i++) files[`filler-${i}.md`] = `# Log ${i}\n\n${filler(`deck ${i}`)}\n`;
    for (const [filename, content] of Object.entries(files)) {
      const res = await t.request({ method: 'POST', url: '/api/docs/upload', token: editor, ...multipartBody([{ name: 'file', content, filename }]) });
      expect(res.statusCode, res.body).toBe(202);
      ids[filename] = res.json().document.id;
    }
    await t.app.jobs.idle();
  });
  afterAll(async () => {
    await t.close();
    rmSync(modelDir, { recursive: true, force: true });
  });

  it('holds one row per indexed document, written by ingestion', async () => {
    expect((await rowsOf()).map((row) => row.document_id)).toEqual(Object.values(ids).sort());
    const chunks = await t.app.db.selectFrom('chunks').select('rowid').where('document_id', '=', ids['spread.md']).execute();
    expect(chunks.length).toBeGreaterThanOrEqual(3);
  });

  it("ranks a document holding every word of the question over its chunks above one holding one word, and names each ranked chunk's document", async () => {
    const ranked = await repository().documentsRanked(MATCH, 10, { groups: ['everyone'] });
    expect(ranked.map((row) => row.document_id)).toEqual([ids['spread.md'], ids['single.md']]);
    expect(ranked[0].score).toBeGreaterThan(ranked[1].score);
    // The chunk ranking names each row's document (what represents a document found by the ranking above).
    const phraseFrequencies = await repository().termFrequencies(['quillwort', 'marshalling', 'bellbuoy'], 1001);
    const chunks = await repository().keywordRanked({ match: MATCH, phraseFrequencies }, 20, null);
    const documentOf = new Map((await t.app.db.selectFrom('chunks').select(['rowid', 'document_id']).execute()).map((row) => [row.rowid, row.document_id]));
    expect(chunks.length).toBeGreaterThan(3);
    for (const chunk of chunks) expect(chunk.document_id).toBe(documentOf.get(chunk.rowid));
    expect(chunks.map((chunk) => chunk.score)).toEqual([...chunks.map((chunk) => chunk.score)].sort((a, b) => b - a));
  });

  it('ranks only documents the reader may read', async () => {
    expect(await repository().documentsRanked(MATCH, 10, { groups: ['nobody'] })).toEqual([]);
    // A reader of every document takes the ranking without the access test: the same rows.
    expect(await repository().documentsRanked(MATCH, 10, { groups: ['everyone'] }, true)).toEqual(await repository().documentsRanked(MATCH, 10, { groups: ['everyone'] }));
    expect((await repository().documentsRanked(MATCH, 10, { groups: ['everyone'], document_ids: [ids['single.md']] })).map((row) => row.document_id)).toEqual([ids['single.md']]);
  });

  it('is fused into hybrid search only, and says so in retrieval_settings', async () => {
    const search = async (mode: string) => {
      const res = await t.request({ method: 'POST', url: '/api/search', token: viewer, payload: { query: 'quillwort marshalling bellbuoy', mode } });
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as { results: Array<{ document_id: string }>; retrieval_settings: { weights: { document: number }; candidates: { documents: number } } };
    };
    const hybrid = await search('hybrid');
    expect(hybrid.retrieval_settings.weights.document).toBe(3);
    expect(hybrid.retrieval_settings.candidates.documents).toBe(2);
    for (const mode of ['keyword', 'vector']) {
      const other = await search(mode);
      expect(other.retrieval_settings).toMatchObject({ weights: { document: 0 }, candidates: { documents: 0 } });
    }
  });

  it("loses a document's row with any of its chunks, and with the document", async () => {
    const spread = ids['spread.md'];
    const [first] = await t.app.db.selectFrom('chunks').select('rowid').where('document_id', '=', spread).orderBy('ordinal').limit(1).execute();
    // A chunk leaving (a document written again, or discarded) takes the document's row: its old words are never found.
    await t.app.db.deleteFrom('chunks').where('rowid', '=', first.rowid).execute();
    expect((await rowsOf()).map((row) => row.document_id)).not.toContain(spread);
    expect((await repository().documentsRanked(MATCH, 10, { groups: ['everyone'] })).map((row) => row.document_id)).toEqual([ids['single.md']]);

    expect((await t.request({ method: 'DELETE', url: `/api/docs/${ids['single.md']}`, token: editor })).statusCode).toBe(204);
    expect((await rowsOf()).map((row) => row.document_id)).not.toContain(ids['single.md']);
    expect(await repository().documentsRanked(MATCH, 10, { groups: ['everyone'] })).toEqual([]);
    // No index row is left behind either (a contentless table answers a match from its index alone).
    expect((await sql<{ n: number }>`select count(*) as n from documents_fts where documents_fts match ${MATCH}`.execute(t.app.db)).rows[0].n).toBe(0);
  });

  it('is built for the documents already indexed when a box upgrades to it', async () => {
    // Every document with chunks: the one that lost a chunk above included (its row went with the chunk).
    const before = await t.app.db.selectFrom('chunks').select('document_id').distinct().orderBy('document_id').execute();
    expect(before.length).toBe((await rowsOf()).length + 1);
    await asBeforeMigration(t.app.db, '0018');
    t = await t.restart();
    expect((await rowsOf()).map((row) => row.document_id)).toEqual(before.map((row) => row.document_id));
    expect((await repository().documentsRanked('"rota"', 20, { groups: ['everyone'] })).length).toBe(before.length);
  });
});
