import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { makeCorruptPdf, makeCsv, makeDocx, makeMarkdown, makePdf, makePngNamedPdf, makeTxt, prose } from '../fixtures/documents.js';
import { applyLicense, LICENSE_ENV } from '../fixtures/license.js';
import { multipartBody } from '../fixtures/multipart.js';
import { installTinyEmbeddingModel } from '../fixtures/tiny-embedding-model.js';
import { snapshot, startApp, type TestApp } from '../helpers.js';

let fixtures: string;
let t: TestApp;
let editor: string;
let viewer: string;

beforeAll(() => {
  fixtures = mkdtempSync(path.join(os.tmpdir(), 'hearth-docs-fixtures-'));
});

async function start(env: Record<string, string> = {}, withModel = true): Promise<void> {
  const modelDir = mkdtempSync(path.join(os.tmpdir(), 'hearth-docs-models-'));
  if (withModel) await installTinyEmbeddingModel(modelDir);
  t = await startApp({ ...LICENSE_ENV, MODEL_DIR: modelDir, INDEX_UPSERT_BATCH_SIZE: '8', ...env });
  editor = (await t.userWithRole('editor')).access;
  viewer = (await t.userWithRole('viewer')).access;
}

const upload = (file: string, token = editor, filename = path.basename(file)) =>
  t.request({ method: 'POST', url: '/api/docs/upload', token, ...multipartBody([{ name: 'file', content: readFileSync(file), filename }]) });

/** Uploads and waits for the indexing job to finish; returns the document as listed afterwards. */
async function ingest(file: string, filename?: string) {
  const res = await upload(file, editor, filename);
  expect(res.statusCode, res.body).toBe(202);
  await t.app.jobs.idle();
  const doc = (await t.request({ method: 'GET', url: `/api/docs?limit=500`, token: viewer })).json().documents.find((d: { id: string }) => d.id === res.json().document.id);
  return { upload: res.json(), doc };
}

const search = (query: string, mode = 'hybrid', k = 5) => t.request({ method: 'POST', url: '/api/search', token: viewer, payload: { query, mode, k } });

describe('with the embedding model installed', () => {
  beforeEach(async () => start());
  afterEach(async () => t.close());

  it('indexes each free-tier type with page or heading metadata and finds it', async () => {
    const pdf = await ingest(await makePdf(fixtures, 3));
    expect(pdf.upload.document).toMatchObject({ status: 'queued', file_type: 'pdf', source_type: 'upload' });
    expect(pdf.upload.job).toMatchObject({ type: 'ingest', state: 'queued' });
    expect(pdf.doc).toMatchObject({ status: 'indexed', page_count: 3, error: null });
    expect(pdf.doc.chunk_count).toBeGreaterThan(0);

    for (const make of [makeDocx, makeMarkdown, makeTxt]) {
      const { doc } = await ingest(await make(fixtures));
      expect(doc.status, doc.filename).toBe('indexed');
    }
    const chunks = await t.app.db.selectFrom('chunks').select(['page', 'heading', 'embedded_with']).execute();
    expect(chunks.some((chunk) => chunk.page === 2)).toBe(true);
    expect(chunks.some((chunk) => chunk.heading)).toBe(true);
    expect(chunks.every((chunk) => chunk.embedded_with?.startsWith('tiny-test-minilm-shape'))).toBe(true);

    const stats = (await t.request({ method: 'GET', url: '/api/index/stats', token: viewer })).json();
    expect(stats).toMatchObject({ chunks: chunks.length, vectors: chunks.length, stale_chunks: 0, dimension: 32 });

    const text = readFileSync(await makeTxt(fixtures), 'utf8');
    const words = text.split(/\s+/).filter((w) => w.length > 6).slice(0, 3).join(' ');
    const found = await search(words, 'keyword');
    expect(found.statusCode).toBe(200);
    expect(found.json().results.length).toBeGreaterThan(0);
  });

  it('refuses duplicates, unsupported and mislabelled files, and non-editors; each changes nothing', async () => {
    const txt = await makeTxt(fixtures);
    await ingest(txt);
    const before = await snapshot(t.app, 'documents');

    const duplicate = await upload(txt, editor, 'renamed.txt');
    expect(duplicate.statusCode).toBe(409);
    expect(duplicate.json().error.code).toBe('duplicate_document');

    const png = await upload(await makePngNamedPdf(fixtures));
    expect(png.statusCode).toBe(415);
    const binary = await t.request({ method: 'POST', url: '/api/docs/upload', token: editor, ...multipartBody([{ name: 'file', content: Buffer.from([0, 1, 2, 3, 0, 255, 254, 0]), filename: 'x.bin' }]) });
    expect(binary.statusCode).toBe(415);

    const csv = await upload(await makeCsv(fixtures));
    expect(csv.statusCode).toBe(403);
    expect(csv.json().error.code).toBe('tier_required');

    expect((await upload(txt, viewer)).statusCode).toBe(403);
    expect((await t.request({ method: 'POST', url: '/api/docs/upload', ...multipartBody([{ name: 'file', content: 'x', filename: 'a.txt' }]) })).statusCode).toBe(401);
    const wrongField = await t.request({ method: 'POST', url: '/api/docs/upload', token: editor, ...multipartBody([{ name: 'document', content: 'hello', filename: 'a.txt' }]) });
    expect(wrongField.statusCode).toBe(400);
    expect(wrongField.json().error.field).toBe('body.file');
    // A body that is not multipart is a content type the upload does not take, as for the branding logo.
    const json = await t.request({ method: 'POST', url: '/api/docs/upload', token: editor, payload: { file: 'x' } });
    expect(json.statusCode).toBe(415);
    expect(json.json().error.code).toBe('unsupported_media_type');

    expect(await snapshot(t.app, 'documents')).toEqual(before);
    expect(readdirCount(path.join(t.dataDir, 'documents'))).toBe(1);
  });

  it('a corrupt file fails that document with a reason and leaves no chunks', async () => {
    const { doc } = await ingest(await makeCorruptPdf(fixtures));
    expect(doc.status).toBe('failed');
    expect(doc.error).toMatch(/damaged|truncated|valid/i);
    expect(await t.app.db.selectFrom('chunks').selectAll().where('document_id', '=', doc.id).execute()).toEqual([]);
    // The pool still works afterwards.
    expect((await ingest(await makeMarkdown(fixtures))).doc.status).toBe('indexed');
  });

  it('PRO unlocks CSV; plan limits refuse oversize files and too many documents', async () => {
    await applyLicense(t, 'PRO');
    expect((await ingest(await makeCsv(fixtures))).doc.status).toBe('indexed');

    await applyLicense(t, 'ENTERPRISE', { documents: 2, file_size_bytes: 2000, storage_bytes: 10_000_000 });
    const big = path.join(fixtures, 'big.txt');
    await import('node:fs/promises').then((fs) => fs.writeFile(big, prose(7, 200)));
    const before = await snapshot(t.app, 'documents');
    const tooBig = await upload(big);
    expect(tooBig.statusCode).toBe(413);
    expect(await snapshot(t.app, 'documents')).toEqual(before);

    expect((await ingest(await makeMarkdown(fixtures))).doc.status).toBe('indexed');
    const third = await upload(await makeTxt(fixtures));
    expect(third.statusCode).toBe(403);
    expect(third.json().error.code).toBe('plan_limit_exceeded');
    const license = (await t.request({ method: 'GET', url: '/api/license', token: viewer })).json();
    expect(license.usage.documents).toBe(2);
  });

  it('lists with filters, sort and pagination', async () => {
    await ingest(await makeTxt(fixtures));
    await ingest(await makeCorruptPdf(fixtures));
    await ingest(await makeMarkdown(fixtures));
    const all = (await t.request({ method: 'GET', url: '/api/docs?sort=filename&order=asc', token: viewer })).json();
    expect(all.total).toBe(3);
    expect(all.documents.map((d: { filename: string }) => d.filename)).toEqual([...all.documents.map((d: { filename: string }) => d.filename)].sort());
    expect((await t.request({ method: 'GET', url: '/api/docs?status=failed', token: viewer })).json().total).toBe(1);
    expect((await t.request({ method: 'GET', url: '/api/docs?file_type=md', token: viewer })).json().total).toBe(1);
    expect((await t.request({ method: 'GET', url: '/api/docs?limit=1&offset=1', token: viewer })).json().documents).toHaveLength(1);
    expect((await t.request({ method: 'GET', url: '/api/docs?status=bogus', token: viewer })).statusCode).toBe(400);
    expect((await t.request({ method: 'GET', url: '/api/docs?sort=sha256', token: viewer })).statusCode).toBe(400);
    expect((await t.request({ method: 'GET', url: '/api/docs' })).statusCode).toBe(401);
  });

  it('delete and bulk delete remove chunks, vectors and the stored file', async () => {
    const a = (await ingest(await makeTxt(fixtures))).doc;
    const b = (await ingest(await makeMarkdown(fixtures))).doc;
    const c = (await ingest(await makeDocx(fixtures))).doc;
    const vectorsBefore = t.app.activeEmbedding.vectors()!.size();
    const storedA = path.join(t.dataDir, 'documents', `${a.id}.txt`);
    expect(existsSync(storedA)).toBe(true);

    expect((await t.request({ method: 'DELETE', url: `/api/docs/${a.id}`, token: viewer })).statusCode).toBe(403);
    expect((await t.request({ method: 'DELETE', url: `/api/docs/${a.id}`, token: editor })).statusCode).toBe(204);
    expect(existsSync(storedA)).toBe(false);
    expect(t.app.activeEmbedding.vectors()!.size()).toBe(vectorsBefore - a.chunk_count);
    expect((await t.request({ method: 'DELETE', url: `/api/docs/${a.id}`, token: editor })).statusCode).toBe(404);

    const bulk = await t.request({ method: 'DELETE', url: '/api/docs/bulk', token: editor, payload: { ids: [b.id, c.id, 'missing'] } });
    expect(bulk.statusCode).toBe(200);
    expect(bulk.json()).toEqual({ deleted: expect.arrayContaining([b.id, c.id]), not_found: ['missing'] });
    expect(t.app.activeEmbedding.vectors()!.size()).toBe(0);
    expect(await t.app.db.selectFrom('chunks').selectAll().execute()).toEqual([]);
    expect((await t.request({ method: 'DELETE', url: '/api/docs/bulk', token: editor, payload: { ids: [] } })).statusCode).toBe(400);
  });

  it('after a restart the vector index matches the database', async () => {
    const { doc } = await ingest(await makePdf(fixtures, 2));
    t = await t.restart();
    const stats = (await t.request({ method: 'GET', url: '/api/index/stats', token: (await t.login()).access })).json();
    expect(stats.vectors).toBe(doc.chunk_count);
    expect(stats.stale_chunks).toBe(0);
  });
});

describe('with no embedding model', () => {
  afterEach(async () => t.close());

  it('still indexes by keywords, and says so', async () => {
    await start({}, false);
    const { doc } = await ingest(await makeTxt(fixtures));
    expect(doc.status).toBe('indexed');
    const stats = (await t.request({ method: 'GET', url: '/api/index/stats', token: viewer })).json();
    expect(stats).toMatchObject({ vectors: 0, model_id: null, stale_chunks: doc.chunk_count });
    const health = (await t.request({ method: 'GET', url: '/api/health' })).json();
    expect(health.components.embedder.status).toBe('not_installed');
    expect(health.capabilities.search).toBe('keyword');
    expect((await t.request({ method: 'POST', url: '/api/index/rebuild', token: editor })).statusCode).toBe(409);
  });
});

function readdirCount(dir: string): number {
  return readdirSync(dir).filter((name) => !name.startsWith('.')).length;
}

describe('malformed uploads', () => {
  beforeEach(async () => start({}, false));
  afterEach(async () => t.close());

  const send = (payload: Buffer | string, contentType: string) =>
    t.request({ method: 'POST', url: '/api/docs/upload', token: editor, payload, headers: { 'content-type': contentType } });

  it('no boundary, a truncated body, a part without a filename and an empty file: each a 400 of its own that stores nothing', async () => {
    const before = await snapshot(t.app, 'documents');
    const whole = multipartBody([{ name: 'file', content: prose(3, 40), filename: 'notes.txt' }]);

    const noBoundary = await send(whole.payload, 'multipart/form-data');
    expect(noBoundary.statusCode, noBoundary.body).toBe(400);
    expect(noBoundary.json().error).toMatchObject({ code: 'multipart_malformed', field: 'body' });

    const truncated = await send(whole.payload.subarray(0, whole.payload.length - 200), whole.headers['content-type']);
    expect(truncated.statusCode, truncated.body).toBe(400);
    expect(truncated.json().error.code).toBe('multipart_malformed');

    const noFilename = multipartBody([{ name: 'file', content: prose(4, 5) }]);
    const unnamed = await send(noFilename.payload, noFilename.headers['content-type']);
    expect(unnamed.statusCode, unnamed.body).toBe(400);
    expect(unnamed.json().error).toMatchObject({ code: 'filename_required', field: 'body.file' });

    const empty = multipartBody([{ name: 'file', content: '', filename: 'empty.txt' }]);
    const nothing = await send(empty.payload, empty.headers['content-type']);
    expect(nothing.statusCode, nothing.body).toBe(400);
    expect(nothing.json().error).toMatchObject({ code: 'empty_file', field: 'body.file' });

    for (const res of [noBoundary, truncated, unnamed, nothing]) expect(res.json().error.message).toMatch(/^[A-Z]/);
    expect(await snapshot(t.app, 'documents')).toEqual(before);
    const incoming = path.join(t.dataDir, 'documents', '.incoming');
    expect(existsSync(incoming) ? readdirSync(incoming) : []).toEqual([]);
  });

  it('a second part after the file (another file, or a field): 400 one_file_only, nothing stored, no temp file left', async () => {
    const before = await snapshot(t.app, 'documents');
    const bodies = [
      multipartBody([{ name: 'file', content: prose(6, 30), filename: 'first.txt' }, { name: 'file', content: prose(7, 30), filename: 'second.txt' }]),
      multipartBody([{ name: 'file', content: prose(8, 30), filename: 'notes.txt' }, { name: 'comment', content: 'please index' }]),
    ];
    for (const { payload, headers } of bodies) {
      const res = await send(payload, headers['content-type']);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'one_file_only', field: 'body' });
    }
    expect(await snapshot(t.app, 'documents')).toEqual(before);
    expect(readdirSync(path.join(t.dataDir, 'documents', '.incoming'))).toEqual([]);
    // The same file alone is taken: the refusal was about the rest of the body.
    const alone = multipartBody([{ name: 'file', content: prose(6, 30), filename: 'first.txt' }]);
    expect((await send(alone.payload, alone.headers['content-type'])).statusCode).toBe(202);
  });

  it('control and bidirectional-override characters are stripped from the stored filename', async () => {
    // U+202E would show "report<U+202E>fdp.exe" as "reportexe.pdf"; the others are the rest of the bidi controls and C0/C1 controls.
    const filename = 'rep\u202Eort\u2066\u2069\u200E\u200F\u061C\u202A\u202B\u202C\u202D\u0007\u0085\u009B.txt';
    const { payload, headers } = multipartBody([{ name: 'file', content: prose(5, 20), filename }]);
    const res = await t.request({ method: 'POST', url: '/api/docs/upload', token: editor, payload, headers });
    expect(res.statusCode, res.body).toBe(202);
    const listed = (await t.request({ method: 'GET', url: '/api/docs', token: viewer })).json();
    expect(listed.documents.map((d: { filename: string }) => d.filename)).toEqual(['report.txt']);
  });

  it('a search or chat query made only of control characters is a 400', async () => {
    for (const query of ['\u0007\u0008', '\u202E\u2066 \u200F', '\u0000']) {
      for (const url of ['/api/search', '/api/chat']) {
        const res = await t.request({ method: 'POST', url, token: viewer, payload: { query } });
        expect(res.statusCode, `${url} ${JSON.stringify(query)}: ${res.body}`).toBe(400);
        expect(res.json().error).toMatchObject({ code: 'validation_failed', field: 'body.query' });
        expect(res.json().error.message).toMatch(/visible/);
      }
    }
    // A query with text around the controls is still a query.
    expect((await t.request({ method: 'POST', url: '/api/search', token: viewer, payload: { query: '\u202Ereport' } })).statusCode).toBe(200);
  });
});
