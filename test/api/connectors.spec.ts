import { appendFileSync, copyFileSync, existsSync, linkSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeCsv, makeMarkdown, makePdf, makeTxt, prose } from '../fixtures/documents.js';
import { LICENSE_ENV } from '../fixtures/license.js';
import { multipartBody } from '../fixtures/multipart.js';
import { installTinyEmbeddingModel } from '../fixtures/tiny-embedding-model.js';
import { snapshot, startApp, type TestApp } from '../helpers.js';

/** The only allowed root the tests can write to (/app/docs stays in the list, and need not exist). */
let root: string;
/** A folder outside every allowed root, holding a secret no scan may read. */
let outside: string;
let modelDir: string;
let t: TestApp;
let admin: string;
let editor: string;
let viewer: string;
let folders = 0;

const SECRET_WORD = 'zanzibarquokka';

beforeAll(async () => {
  root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'hearth-connector-root-')));
  outside = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'hearth-connector-outside-')));
  writeFileSync(path.join(outside, 'secret.txt'), `Top secret ${SECRET_WORD} payroll. ${prose(99, 6)}\n`);
  modelDir = mkdtempSync(path.join(os.tmpdir(), 'hearth-connector-models-'));
  await installTinyEmbeddingModel(modelDir);
});

afterAll(() => {
  for (const dir of [root, outside, modelDir]) rmSync(dir, { recursive: true, force: true });
});

beforeEach(async () => {
  t = await startApp({ ...LICENSE_ENV, MODEL_DIR: modelDir, INDEX_UPSERT_BATCH_SIZE: '8', CONNECTOR_ALLOWED_PATHS: `/app/docs:${root}` });
  admin = (await t.login()).access;
  editor = (await t.userWithRole('editor')).access;
  viewer = (await t.userWithRole('viewer')).access;
});
afterEach(async () => t.close());

/** A fresh folder inside the allowed root. */
function folder(): string {
  const dir = path.join(root, `docs-${++folders}`);
  mkdirSync(dir);
  return dir;
}

const api = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, token?: string, payload?: object) =>
  t.request({ method, url, ...(token ? { token } : {}), ...(payload ? { payload } : {}) });

async function createConnector(body: object): Promise<{ id: string; [key: string]: unknown }> {
  const res = await api('POST', '/api/connectors', admin, body);
  expect(res.statusCode, res.body).toBe(201);
  return res.json();
}

/** Starts a scan and waits for its job (scan and indexing are one job); returns the finished job. */
async function scan(id: string) {
  const res = await api('POST', `/api/connectors/${id}/scan`, editor);
  expect(res.statusCode, res.body).toBe(202);
  expect(res.json()).toMatchObject({ type: 'connector.scan', state: 'queued', subject: { connector_id: id } });
  await t.app.jobs.idle();
  return (await api('GET', `/api/jobs/${res.json().id}`, viewer)).json();
}

async function documentsOf(id: string): Promise<Array<{ id: string; filename: string; status: string; updated_at: string; source_path: string }>> {
  const res = await api('GET', `/api/docs?source_type=connector&source_id=${id}&sort=filename&order=asc`, viewer);
  return res.json().documents;
}

/** Waits (without sleeping) until a running job has reported `done` items. */
async function untilProgress(jobId: string, done: number): Promise<void> {
  for (;;) {
    const job = (await t.app.jobs.store.get(jobId))!;
    if (job.state !== 'queued' && job.state !== 'running') throw new Error(`job ended early: ${job.state}`);
    if (job.state === 'running' && job.progress.done >= done) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const chunkRowids = async (documentId: string) =>
  (await t.app.db.selectFrom('chunks').select('rowid').where('document_id', '=', documentId).orderBy('rowid').execute()).map((row) => row.rowid);

const keywordHits = async (query: string) =>
  (await api('POST', '/api/search', viewer, { query, mode: 'keyword', k: 10 })).json().results as Array<{ document_id: string; text: string }>;

describe('connector CRUD', () => {
  it('creates, lists, reads, updates and deletes with the spec roles', async () => {
    const dir = folder();
    const created = await createConnector({ name: 'Team docs', path: `${dir}/`, include: ['.PDF', 'md', '.md'] });
    expect(created).toMatchObject({ name: 'Team docs', path: dir, recursive: true, include: ['.pdf', '.md'], enabled: true, last_scan_at: null, document_count: 0 });

    const list = await api('GET', '/api/connectors', viewer);
    expect(list.statusCode).toBe(200);
    expect(list.json()).toEqual({ connectors: [created], total: 1 });
    expect((await api('GET', `/api/connectors/${created.id}`, viewer)).json()).toEqual(created);
    expect((await api('GET', '/api/connectors/nope', viewer)).statusCode).toBe(404);

    const updated = await api('PUT', `/api/connectors/${created.id}`, admin, { enabled: false, include: [], name: 'Team' });
    expect(updated.statusCode, updated.body).toBe(200);
    expect(updated.json()).toMatchObject({ name: 'Team', enabled: false, include: [], recursive: true, path: dir });

    for (const token of [viewer, editor]) {
      expect((await api('POST', '/api/connectors', token, { name: 'x', path: dir })).statusCode).toBe(403);
      expect((await api('PUT', `/api/connectors/${created.id}`, token, { enabled: true })).statusCode).toBe(403);
      expect((await api('DELETE', `/api/connectors/${created.id}`, token)).statusCode).toBe(403);
    }
    expect((await api('POST', `/api/connectors/${created.id}/scan`, viewer)).statusCode).toBe(403);
    expect((await api('POST', '/api/connectors/sync-all', viewer)).json().error.code).toBe('role_required');
    for (const [method, url] of [['GET', '/api/connectors'], ['GET', `/api/connectors/${created.id}`], ['POST', `/api/connectors/${created.id}/scan`], ['POST', '/api/connectors/sync-all']] as const) {
      expect((await api(method, url)).statusCode).toBe(401);
    }

    const disabledScan = await api('POST', `/api/connectors/${created.id}/scan`, editor);
    expect(disabledScan.statusCode).toBe(409);
    expect(disabledScan.json().error.code).toBe('connector_disabled');

    expect((await api('DELETE', `/api/connectors/${created.id}`, admin)).statusCode).toBe(204);
    expect((await api('GET', `/api/connectors/${created.id}`, viewer)).statusCode).toBe(404);
    expect((await api('DELETE', `/api/connectors/${created.id}`, admin)).statusCode).toBe(404);
  });

  it('refuses bad input with 400 or 409 and changes nothing', async () => {
    const dir = folder();
    const existing = await createConnector({ name: 'Existing', path: dir });
    const linkOut = path.join(root, `link-out-${folders}`);
    symlinkSync(outside, linkOut);
    const sibling = `${root}2`; // shares the root's prefix, but is not inside it
    mkdirSync(sibling, { recursive: true });
    const file = path.join(dir, 'plain.txt');
    writeFileSync(file, 'not a directory');
    const before = await snapshot(t.app, 'connectors');

    const cases: Array<[object, number, string, string?]> = [
      [{ path: dir }, 400, 'validation_failed', 'body.name'],
      [{ name: '   ', path: dir }, 400, 'validation_failed', 'body.name'],
      [{ name: 'x', path: dir, colour: 'red' }, 400, 'validation_failed', 'body.colour'],
      [{ name: 'x', path: dir, include: ['../x'] }, 400, 'validation_failed', 'body.include.0'],
      [{ name: 'x', path: 'docs' }, 400, 'path_not_allowed', 'body.path'],
      [{ name: 'x', path: `${dir}/../../${path.basename(outside)}` }, 400, 'path_not_allowed', 'body.path'],
      [{ name: 'x', path: linkOut }, 400, 'path_not_allowed', 'body.path'],
      [{ name: 'x', path: sibling }, 400, 'path_not_allowed', 'body.path'],
      [{ name: 'x', path: '/etc' }, 400, 'path_not_allowed', 'body.path'],
      [{ name: 'x', path: '/no/such/place' }, 400, 'path_not_allowed', 'body.path'],
      [{ name: 'x', path: path.join(dir, 'missing') }, 400, 'path_not_found', 'body.path'],
      [{ name: 'x', path: file }, 400, 'path_not_found', 'body.path'],
      [{ name: 'EXISTING', path: dir }, 409, 'connector_name_taken', 'body.name'],
    ];
    for (const [body, status, code, field] of cases) {
      const res = await api('POST', '/api/connectors', admin, body);
      expect(res.statusCode, JSON.stringify(body)).toBe(status);
      expect(res.json().error, JSON.stringify(body)).toMatchObject({ code, ...(field ? { field } : {}) });
    }
    for (const body of [{}, { path: linkOut }, { path: path.join(dir, 'missing') }]) {
      expect((await api('PUT', `/api/connectors/${existing.id}`, admin, body)).statusCode, JSON.stringify(body)).toBe(400);
    }
    const other = await createConnector({ name: 'Other', path: dir });
    const before2 = await snapshot(t.app, 'connectors');
    expect((await api('PUT', `/api/connectors/${other.id}`, admin, { name: 'existing' })).statusCode).toBe(409);
    expect(await snapshot(t.app, 'connectors')).toEqual(before2);
    expect(before2).toHaveLength(before.length + 1);
    rmSync(sibling, { recursive: true, force: true });
  });
});

describe('connector scans', () => {
  it('indexes the folder, never follows a link out of the allowed roots, and syncs incrementally', async () => {
    const dir = folder();
    await makeTxt(dir);
    await makeMarkdown(dir);
    mkdirSync(path.join(dir, 'sub', 'deeper'), { recursive: true });
    await makePdf(path.join(dir, 'sub', 'deeper'), 2);
    mkdirSync(path.join(dir, '.hidden'));
    writeFileSync(path.join(dir, '.hidden', 'hidden.txt'), `Hidden ${SECRET_WORD} notes. ${prose(5, 5)}`);
    writeFileSync(path.join(dir, '.dotfile.txt'), `Dot ${SECRET_WORD} file. ${prose(6, 5)}`);
    symlinkSync(path.join(outside, 'secret.txt'), path.join(dir, 'leak.txt'));
    symlinkSync(outside, path.join(dir, 'leakdir'));
    symlinkSync(path.join(dir, 'letter.txt'), path.join(dir, 'alias.txt')); // same real file: one document
    symlinkSync(dir, path.join(dir, 'sub', 'loop')); // a loop ends, it does not recurse forever

    const connector = await createConnector({ name: 'Archive', path: dir });
    const job = await scan(connector.id);
    expect(job.state, job.error).toBe('succeeded');
    expect(job.progress.done).toBe(job.progress.total);
    expect(job.progress.current).toMatch(/3 files, 3 new or changed, 0 unchanged, 0 removed, 2 links outside CONNECTOR_ALLOWED_PATHS skipped/);
    expect(t.logs()).toContain('outside CONNECTOR_ALLOWED_PATHS');

    const docs = await documentsOf(connector.id);
    expect(docs.map((d) => [d.filename, d.status])).toEqual([['letter.txt', 'indexed'], ['notes.md', 'indexed'], ['report-2p.pdf', 'indexed']]);
    expect(docs.every((d) => d.source_path.startsWith(`${dir}/`))).toBe(true);
    expect(await keywordHits(SECRET_WORD)).toEqual([]);
    expect((await api('GET', `/api/connectors/${connector.id}`, viewer)).json()).toMatchObject({ document_count: 3, last_scan_at: expect.any(String) });

    // Unchanged: nothing is re-indexed (same chunk rowids, same updated_at).
    const pdf = docs.find((d) => d.filename.endsWith('.pdf'))!;
    const letter = docs.find((d) => d.filename === 'letter.txt')!;
    const notes = docs.find((d) => d.filename === 'notes.md')!;
    const rowidsBefore = { pdf: await chunkRowids(pdf.id), letter: await chunkRowids(letter.id), notes: await chunkRowids(notes.id) };
    const vectorsBefore = t.app.activeEmbedding.vectors()!.size();
    const again = await scan(connector.id);
    expect(again.progress.current).toMatch(/3 files, 0 new or changed, 3 unchanged, 0 removed/);
    expect(await documentsOf(connector.id)).toEqual(docs);
    expect(await chunkRowids(pdf.id)).toEqual(rowidsBefore.pdf);
    expect(await chunkRowids(letter.id)).toEqual(rowidsBefore.letter);
    expect(t.app.activeEmbedding.vectors()!.size()).toBe(vectorsBefore);

    // Changed, new and deleted files.
    appendFileSync(path.join(dir, 'letter.txt'), `\nPostscript about the quokkachange harbour. ${prose(77, 4)}\n`);
    writeFileSync(path.join(dir, 'sub', 'fresh.md'), `# Fresh\n\nA brand new freshlyadded note. ${prose(78, 5)}\n`);
    rmSync(path.join(dir, 'notes.md'));
    const third = await scan(connector.id);
    expect(third.state).toBe('succeeded');
    expect(third.progress.current).toMatch(/3 files, 2 new or changed, 1 unchanged, 1 removed/);
    const after = await documentsOf(connector.id);
    expect(after.map((d) => [d.filename, d.status])).toEqual([['fresh.md', 'indexed'], ['letter.txt', 'indexed'], ['report-2p.pdf', 'indexed']]);
    expect(after.find((d) => d.id === letter.id)!.updated_at).not.toBe(letter.updated_at);
    expect(await chunkRowids(pdf.id)).toEqual(rowidsBefore.pdf);
    expect(await chunkRowids(notes.id)).toEqual([]);
    expect((await keywordHits('quokkachange')).map((hit) => hit.document_id)).toContain(letter.id);
    expect((await keywordHits('freshlyadded')).length).toBeGreaterThan(0);
    const chunks = await t.app.db.selectFrom('chunks').select('rowid').execute();
    expect(t.app.activeEmbedding.vectors()!.size()).toBe(chunks.length);
    expect(rowidsBefore.notes.some((rowid) => chunks.some((chunk) => chunk.rowid === rowid))).toBe(false);
    expect(await keywordHits(SECRET_WORD)).toEqual([]);

    // Control: the same text copied inside the folder is found, so the search above could have seen it.
    copyFileSync(path.join(outside, 'secret.txt'), path.join(dir, 'declassified.txt'));
    await scan(connector.id);
    expect((await keywordHits(SECRET_WORD)).length).toBeGreaterThan(0);
  });

  it('cancel stops between files; the next scan indexes what the cancelled one left', async () => {
    const dir = folder();
    for (let i = 0; i < 30; i++) writeFileSync(path.join(dir, `note-${String(i).padStart(2, '0')}.txt`), `Note ${i}. ${prose(200 + i, 4)}\n`);
    const connector = await createConnector({ name: 'Many', path: dir });
    const started = (await api('POST', `/api/connectors/${connector.id}/scan`, editor)).json();
    await untilProgress(started.id, 3);
    expect((await api('POST', `/api/jobs/${started.id}/cancel`, editor)).statusCode).toBe(202);
    await t.app.jobs.idle();
    expect((await api('GET', `/api/jobs/${started.id}`, viewer)).json().state).toBe('cancelled');
    const left = await documentsOf(connector.id);
    expect(left.length).toBeLessThan(30);
    expect(left.every((d) => d.status === 'failed' || d.status === 'indexed')).toBe(true);
    expect(left.some((d) => d.status === 'failed')).toBe(true);

    const job = await scan(connector.id);
    expect(job.state).toBe('succeeded');
    const docs = await documentsOf(connector.id);
    expect(docs).toHaveLength(30);
    expect(docs.every((d) => d.status === 'indexed')).toBe(true);
  });

  it('a file that failed on its own content is not extracted again until it changes', async () => {
    const dir = folder();
    await makeTxt(dir);
    writeFileSync(path.join(dir, 'broken.pdf'), '%PDF-1.7\n1 0 obj << /Type /Catalog >> garbage without xref or trailer\n');
    const connector = await createConnector({ name: 'Broken', path: dir });
    expect((await scan(connector.id)).state).toBe('succeeded');
    const [broken] = (await documentsOf(connector.id)).filter((d) => d.filename === 'broken.pdf');
    expect(broken.status).toBe('failed');
    const row = await t.app.db.selectFrom('documents').select(['error', 'updated_at']).where('id', '=', broken.id).executeTakeFirstOrThrow();

    const again = await scan(connector.id);
    expect(again.progress.current).toMatch(/2 files, 0 new or changed, 2 unchanged/);
    expect(again.progress.total).toBe(2); // two files walked, nothing handed to indexing
    expect(await t.app.db.selectFrom('documents').select(['error', 'updated_at']).where('id', '=', broken.id).executeTakeFirstOrThrow()).toEqual(row);

    const fixed = await makePdf(folder(), 1);
    copyFileSync(fixed, path.join(dir, 'broken.pdf'));
    expect((await scan(connector.id)).progress.current).toMatch(/2 files, 1 new or changed, 1 unchanged/);
    expect((await documentsOf(connector.id)).find((d) => d.id === broken.id)!.status).toBe('indexed');
  });

  it('deleting a connector mid-scan stops the scan and leaves none of its documents', async () => {
    const dir = folder();
    for (let i = 0; i < 30; i++) writeFileSync(path.join(dir, `memo-${String(i).padStart(2, '0')}.txt`), `Memo ${i}. ${prose(300 + i, 4)}\n`);
    const connector = await createConnector({ name: 'Doomed', path: dir });
    const started = (await api('POST', `/api/connectors/${connector.id}/scan`, editor)).json();
    await untilProgress(started.id, 3);
    expect((await api('DELETE', `/api/connectors/${connector.id}`, admin)).statusCode).toBe(204);
    await t.app.jobs.idle();
    expect((await api('GET', `/api/jobs/${started.id}`, viewer)).json().state).toBe('cancelled');
    expect(await documentsOf(connector.id)).toEqual([]);
    expect(await t.app.db.selectFrom('chunks').selectAll().execute()).toEqual([]);
    expect(t.app.activeEmbedding.vectors()!.size()).toBe(0);
  });

  it('honours include and recursive, and a later scan drops what is no longer selected', async () => {
    const dir = folder();
    await makeTxt(dir);
    await makeMarkdown(dir);
    mkdirSync(path.join(dir, 'sub'));
    await makePdf(path.join(dir, 'sub'), 1);
    const connector = await createConnector({ name: 'Filtered', path: dir, include: ['.md', '.pdf'], recursive: false });
    expect((await scan(connector.id)).state).toBe('succeeded');
    expect((await documentsOf(connector.id)).map((d) => d.filename)).toEqual(['notes.md']);

    await api('PUT', `/api/connectors/${connector.id}`, admin, { recursive: true });
    await scan(connector.id);
    expect((await documentsOf(connector.id)).map((d) => d.filename)).toEqual(['notes.md', 'report-1p.pdf']);

    await api('PUT', `/api/connectors/${connector.id}`, admin, { include: ['txt'] });
    const job = await scan(connector.id);
    expect(job.progress.current).toMatch(/1 files, 1 new or changed, 0 unchanged, 2 removed/);
    expect((await documentsOf(connector.id)).map((d) => d.filename)).toEqual(['letter.txt']);
    expect(existsSync(path.join(dir, 'notes.md'))).toBe(true); // removed from the index, not from the disk
  });

  it('sync-all starts one job per enabled connector; deleting a connector removes its documents, not its files', async () => {
    const [a, b, c] = [folder(), folder(), folder()];
    await makeTxt(a);
    await makeMarkdown(b);
    await makeTxt(c);
    const first = await createConnector({ name: 'A', path: a });
    const second = await createConnector({ name: 'B', path: b });
    const disabled = await createConnector({ name: 'C', path: c, enabled: false });

    const res = await api('POST', '/api/connectors/sync-all', editor);
    expect(res.statusCode).toBe(202);
    const jobs = res.json().jobs as Array<{ id: string; subject: { connector_id: string } }>;
    expect(jobs.map((job) => job.subject.connector_id).sort()).toEqual([first.id, second.id].sort());
    await t.app.jobs.idle();
    for (const job of jobs) expect((await api('GET', `/api/jobs/${job.id}`, viewer)).json().state).toBe('succeeded');
    expect(t.logs()).toContain('"event":"sync.all"');
    expect(await documentsOf(first.id)).toHaveLength(1);
    expect(await documentsOf(second.id)).toHaveLength(1);
    expect(await documentsOf(disabled.id)).toHaveLength(0);

    const chunksOfFirst = (await t.app.db.selectFrom('chunks').innerJoin('documents', 'documents.id', 'chunks.document_id').select('chunks.rowid').where('documents.source_id', '=', first.id).execute()).length;
    const vectors = t.app.activeEmbedding.vectors()!.size();
    expect((await api('DELETE', `/api/connectors/${first.id}`, admin)).statusCode).toBe(204);
    expect(await documentsOf(first.id)).toHaveLength(0);
    expect(t.app.activeEmbedding.vectors()!.size()).toBe(vectors - chunksOfFirst);
    expect(existsSync(path.join(a, 'letter.txt'))).toBe(true);
    expect(await documentsOf(second.id)).toHaveLength(1);

    // Deleting one connector document removes it from the index only: the original stays on disk.
    const [note] = await documentsOf(second.id);
    expect((await api('DELETE', `/api/docs/${note.id}`, editor)).statusCode).toBe(204);
    expect(existsSync(path.join(b, 'notes.md'))).toBe(true);
  });

  it('files with identical content (copies, a hard link, an upload of the same bytes) are each a document with chunks of their own', async () => {
    const dir = folder();
    const original = path.join(dir, 'handbook.txt');
    writeFileSync(original, `Staff handbook. The twinmarker policy applies to everyone. ${prose(410, 40)}\n`);
    copyFileSync(original, path.join(dir, 'handbook-copy.txt'));
    mkdirSync(path.join(dir, 'archive'));
    copyFileSync(original, path.join(dir, 'archive', 'handbook.txt'));
    linkSync(original, path.join(dir, 'handbook-link.txt'));
    // The same bytes uploaded too (a second upload of them is a documented 409, so one upload).
    const uploaded = await t.request({ method: 'POST', url: '/api/docs/upload', token: editor, ...multipartBody([{ name: 'file', content: readFileSync(original), filename: 'handbook-upload.txt' }]) });
    expect(uploaded.statusCode, uploaded.body).toBe(202);
    await t.app.jobs.idle();
    const connector = await createConnector({ name: 'Copies', path: dir });
    const job = await scan(connector.id);
    expect(job.state, job.error).toBe('succeeded');

    const docs = [...(await documentsOf(connector.id)), ...(await api('GET', '/api/docs?source_type=upload', viewer)).json().documents];
    expect(docs.map((d) => d.filename)).toEqual(['handbook-copy.txt', 'handbook-link.txt', 'handbook.txt', 'handbook.txt', 'handbook-upload.txt']);
    for (const doc of docs) expect({ file: doc.filename, status: doc.status, error: doc.error }).toEqual({ file: doc.filename, status: 'indexed', error: null });
    const chunks = await t.app.db.selectFrom('chunks').select(['id', 'rowid', 'document_id', 'text']).execute();
    const textsOf = (id: string) => chunks.filter((chunk) => chunk.document_id === id).map((chunk) => chunk.text);
    for (const doc of docs) expect(textsOf(doc.id)).toEqual(textsOf(docs[0].id));
    expect(textsOf(docs[0].id).length).toBeGreaterThan(1);
    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(chunks.length);
    // One vector per chunk, under its own label.
    expect(t.app.activeEmbedding.vectors()!.size()).toBe(chunks.length);
    expect(t.app.activeEmbedding.vectors()!.labels().sort((a, b) => a - b)).toEqual(chunks.map((chunk) => chunk.rowid).sort((a, b) => a - b));

    // Deleting copies one by one: a search still finds the text, citing a document that exists, under its own name.
    const remaining = new Map(docs.map((doc) => [doc.id, doc.filename]));
    for (const doc of docs.slice(0, -1)) {
      expect((await api('DELETE', `/api/docs/${doc.id}`, editor)).statusCode).toBe(204);
      remaining.delete(doc.id);
      for (const mode of ['keyword', 'vector', 'hybrid']) {
        const { results } = (await api('POST', '/api/search', viewer, { query: 'twinmarker policy', mode, k: 5 })).json() as { results: Array<{ document_id: string; filename: string; text: string }> };
        expect(results.length, mode).toBeGreaterThan(0);
        for (const result of results) expect(remaining.get(result.document_id), mode).toBe(result.filename);
      }
      const left = await t.app.db.selectFrom('chunks').select('rowid').execute();
      expect(t.app.activeEmbedding.vectors()!.size()).toBe(left.length);
    }
  });

  it('a folder that disappeared fails the scan and keeps its documents', async () => {
    const dir = folder();
    await makeTxt(dir);
    const connector = await createConnector({ name: 'Removable', path: dir });
    await scan(connector.id);
    rmSync(dir, { recursive: true });
    const job = await scan(connector.id);
    expect(job.state).toBe('failed');
    expect(job.error).toMatch(/missing or unreadable; its documents were kept/);
    expect(await documentsOf(connector.id)).toHaveLength(1);
  });
});

describe('plan limits and tier gates', () => {
  it('a FREE scan counts what it left out by reason, in its job and the connector (kept across a restart), and warns with the remedy', async () => {
    // FREE, and no embedding model: 500 documents are indexed by keywords alone.
    await t.close();
    const noModels = mkdtempSync(path.join(os.tmpdir(), 'hearth-connector-nomodels-'));
    t = await startApp({ MODEL_DIR: noModels, CONNECTOR_ALLOWED_PATHS: `/app/docs:${root}` });
    admin = (await t.login()).access;
    editor = (await t.userWithRole('editor')).access;
    viewer = (await t.userWithRole('viewer')).access;
    const dir = folder();
    for (let i = 0; i < 503; i++) writeFileSync(path.join(dir, `note-${String(i).padStart(3, '0')}.txt`), `Note ${i}. ${prose(600 + i, 3)}\n`);
    await makeCsv(dir); // CSV needs PRO
    writeFileSync(path.join(dir, 'archive.bin'), Buffer.from([0, 1, 2, 3, 0, 255, 254, 0, 7, 7]));
    writeFileSync(path.join(dir, 'huge.txt'), 'harbour '.repeat(26 * 1024 * 1024 / 8 + 1)); // over FREE's 25 MB per file

    const connector = await createConnector({ name: 'Big share', path: dir });
    const job = await scan(connector.id);
    expect(job.state, job.error).toBe('succeeded');
    expect(job.result).toMatchObject({
      state: 'succeeded',
      found: 506,
      changed: 500,
      unchanged: 0,
      skipped: { plan_document_limit: 3, plan_storage_limit: 0, tier_required: 1, unsupported_type: 1, too_large: 1 },
      skipped_total: 6,
    });
    expect(job.result.summary).toBe(
      "506 files, 500 new or changed, 0 unchanged, 0 removed; 6 not indexed: 3 over the plan's document limit, 1 of a type a higher plan indexes, " +
        '1 of an unsupported type, 1 too large. To index them: delete documents or apply a PRO licence',
    );
    expect(job.progress.current).toBe(job.result.summary);
    expect((await api('GET', `/api/docs?source_id=${connector.id}&status=indexed&limit=1`, viewer)).json().total).toBe(500);
    expect((await api('GET', `/api/docs?source_id=${connector.id}&limit=1`, viewer)).json().total).toBe(500);

    // The log warns, naming the remedy.
    const warnings = t.logs().split('\n').filter((line) => line.includes('"level":40') && line.includes(connector.id));
    expect(warnings.some((line) => line.includes('plan or tier') && line.includes('apply a PRO licence'))).toBe(true);

    // The connector shows its last scan, in the list too, and keeps it across a restart.
    const view = (await api('GET', `/api/connectors/${connector.id}`, viewer)).json();
    expect(view.last_scan).toEqual(job.result);
    expect((await api('GET', '/api/connectors', viewer)).json().connectors[0].last_scan).toEqual(job.result);
    t = await t.restart();
    expect((await api('GET', `/api/connectors/${connector.id}`, viewer)).json()).toMatchObject({ last_scan: job.result, last_scan_at: view.last_scan_at });
    rmSync(noModels, { recursive: true, force: true });
  });
});
