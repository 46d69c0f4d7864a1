/**
 * The pipeline prepares the documents of queued jobs ahead of their turn (extraction, chunking and
 * embedding requests), then writes each in its own job. Through the HTTP surface: a burst of uploads
 * gives exactly the chunks and vectors of uploads indexed one at a time, and a document deleted or
 * cancelled while it waits leaves nothing behind.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makePdf, prose } from '../fixtures/documents.js';
import { multipartBody } from '../fixtures/multipart.js';
import { installTinyEmbeddingModel } from '../fixtures/tiny-embedding-model.js';
import { startApp, type TestApp } from '../helpers.js';

let fixtures: string;
let modelDir: string;
let files: string[];
let t: TestApp | undefined;

beforeAll(async () => {
  fixtures = mkdtempSync(path.join(os.tmpdir(), 'hearth-pipeline-fixtures-'));
  modelDir = mkdtempSync(path.join(os.tmpdir(), 'hearth-pipeline-models-'));
  await installTinyEmbeddingModel(modelDir);
  const notes = Array.from({ length: 4 }, (_, i) => {
    const file = path.join(fixtures, `note-${i}.txt`);
    writeFileSync(file, `Note ${i}\n\n${prose(7000 + i, 4 + i * 3)}\n\n${prose(8000 + i, 5)}\n`);
    return file;
  });
  files = [...notes.slice(0, 3), await makePdf(fixtures, 6), notes[3]];
});

afterEach(async () => {
  await t?.close();
  t = undefined;
});

async function start(): Promise<{ app: TestApp; token: string }> {
  t = await startApp({ MODEL_DIR: modelDir, INDEX_UPSERT_BATCH_SIZE: '8' });
  return { app: t, token: (await t.userWithRole('editor')).access };
}

async function upload(app: TestApp, token: string, file: string): Promise<{ document: { id: string }; job: { id: string } }> {
  const res = await app.request({ method: 'POST', url: '/api/docs/upload', token, ...multipartBody([{ name: 'file', content: readFileSync(file), filename: path.basename(file) }]) });
  expect(res.statusCode, res.body).toBe(202);
  return res.json();
}

/** Chunk texts by filename (ids include the document's id, which differs between apps), and the index stats. */
async function indexed(app: TestApp, token: string) {
  const rows = await app.app.db.selectFrom('chunks').innerJoin('documents', 'documents.id', 'chunks.document_id').select(['documents.filename', 'chunks.id', 'chunks.text', 'chunks.ordinal']).orderBy('chunks.ordinal').execute();
  const byFile: Record<string, string[]> = {};
  for (const row of rows) (byFile[row.filename] ??= []).push(row.text);
  const stats = (await app.request({ method: 'GET', url: '/api/index/stats', token })).json();
  return { byFile, rows, stats };
}

describe('documents queued behind each other', () => {
  it('are prepared ahead and each indexed once, with the chunks and vectors of one-at-a-time indexing', async () => {
    const one = await start();
    for (const file of files) {
      await upload(one.app, one.token, file);
      await one.app.app.jobs.idle();
    }
    const expected = await indexed(one.app, one.token);
    await one.app.close();
    t = undefined;

    const burst = await start();
    const uploads = await Promise.all(files.map((file) => upload(burst.app, burst.token, file)));
    await burst.app.app.jobs.idle();
    const got = await indexed(burst.app, burst.token);
    expect(got.byFile).toEqual(expected.byFile);
    expect(got.stats).toMatchObject({ chunks: expected.rows.length, vectors: expected.rows.length, stale_chunks: 0 });
    for (const { document } of uploads) {
      const doc = (await burst.app.request({ method: 'GET', url: `/api/docs?limit=50`, token: burst.token })).json().documents.find((d: { id: string }) => d.id === document.id);
      expect(doc.status).toBe('indexed');
    }
    // Each vector sits on its own chunk: a chunk's own text finds that chunk first.
    for (const row of got.rows) {
      const res = await burst.app.request({ method: 'POST', url: '/api/search', token: burst.token, payload: { query: row.text, mode: 'vector', k: 1 } });
      expect(res.json().results[0]?.chunk_id, row.filename).toBe(row.id);
    }
  });

  it('a document deleted or cancelled while it waits leaves no chunk or vector behind', async () => {
    const { app, token } = await start();
    const [pdf, kept, deleted, cancelled, last] = await Promise.all([files[3], files[0], files[1], files[2], files[4]].map((file) => upload(app, token, file)));
    expect((await app.request({ method: 'DELETE', url: `/api/docs/${deleted.document.id}`, token })).statusCode).toBe(204);
    expect((await app.request({ method: 'POST', url: `/api/jobs/${cancelled.job.id}/cancel`, token })).statusCode).toBe(202);
    await app.app.jobs.idle();

    const { rows, stats } = await indexed(app, token);
    const documentsOf = new Set(rows.map((row) => row.filename));
    expect(documentsOf).toEqual(new Set([files[3], files[0], files[4]].map((file) => path.basename(file))));
    expect(stats).toMatchObject({ chunks: rows.length, vectors: rows.length, stale_chunks: 0 });
    const listed = (await app.request({ method: 'GET', url: '/api/docs?limit=50', token })).json().documents as Array<{ id: string; status: string }>;
    expect(listed.find((d) => d.id === deleted.document.id)).toBeUndefined();
    for (const { document } of [pdf, kept, last]) expect(listed.find((d) => d.id === document.id)?.status).toBe('indexed');
    // Cancelled before its turn: it says so, rather than staying queued until a restart indexes it after all.
    expect(listed.find((d) => d.id === cancelled.document.id)).toMatchObject({ status: 'failed', error: 'Indexing was cancelled' });
  });
});
