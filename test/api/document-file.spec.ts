import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makePdf } from '../fixtures/documents.js';
import { applyLicense, LICENSE_ENV } from '../fixtures/license.js';
import { multipartBody } from '../fixtures/multipart.js';
import { startApp, type TestApp } from '../helpers.js';

/** GET /api/docs/{id}/file: a document's stored bytes for a signed-in reader, sent so that no browser runs them. */
let t: TestApp;
let editor: string;
let viewer: string;
let fixtures: string;

const upload = async (content: Buffer | string, filename: string) => {
  const res = await t.request({ method: 'POST', url: '/api/docs/upload', token: editor, ...multipartBody([{ name: 'file', content, filename }]) });
  expect(res.statusCode, res.body).toBe(202);
  return res.json().document as { id: string; storage_path?: string };
};
const file = (id: string, token?: string) => t.request({ method: 'GET', url: `/api/docs/${id}/file`, token });

beforeAll(async () => {
  t = await startApp(LICENSE_ENV);
  await applyLicense(t, 'PRO');
  editor = (await t.userWithRole('editor')).access;
  viewer = (await t.userWithRole('viewer')).access;
  fixtures = mkdtempSync(path.join(os.tmpdir(), 'hearth-file-'));
});
afterAll(async () => {
  await t.close();
  rmSync(fixtures, { recursive: true, force: true });
});

describe('GET /api/docs/{id}/file', () => {
  it('streams the stored bytes to a viewer, with the stored type, an attachment disposition, nosniff and a sandbox', async () => {
    const text = 'Harbour notes\n\nThe lantern was replaced in 1987.\n';
    const document = await upload(text, 'harbour notes.txt');
    const res = await file(document.id, viewer);
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe(text);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.headers['content-length']).toBe(String(Buffer.byteLength(text)));
    expect(res.headers['content-disposition']).toBe(`attachment; filename="harbour notes.txt"; filename*=UTF-8''harbour%20notes.txt`);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['content-security-policy']).toContain('sandbox');
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('sends a PDF as application/pdf, byte for byte', async () => {
    const pdf = await makePdf(fixtures, 2);
    const document = await upload(readFileSync(pdf), 'report.pdf');
    const res = await file(document.id, viewer);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.rawPayload.equals(readFileSync(pdf))).toBe(true);
  });

  it('sandboxes an HTML document and never lets it render as a page of this origin', async () => {
    const html = '<!doctype html><html><body><h1>Menu</h1><p>Soup of the day, bread and a long enough paragraph.</p><script>parent.stolen = 1</script></body></html>';
    const document = await upload(html, 'menu.html');
    const res = await file(document.id, viewer);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.headers['content-disposition']).toMatch(/^attachment;/);
    expect(res.headers['content-security-policy']).toMatch(/(^|; )sandbox(;|$)/);
    expect(res.headers['content-security-policy']).toContain("default-src 'none'");
  });

  it('keeps a hostile filename out of the header: quotes, semicolons and non-ASCII only in the encoded form', async () => {
    const document = await upload('Plain text that is long enough to be a document of its own.', 'notes.txt');
    // A connector's file may be named anything a file system allows.
    await t.app.db.updateTable('documents').set({ filename: 'Résumé "final"; x=1 \\ 100%.txt' }).where('id', '=', document.id).execute();
    const disposition = (await file(document.id, viewer)).headers['content-disposition'] as string;
    expect(disposition).toBe(`attachment; filename="R_sum_ _final__ x=1 _ 100_.txt"; filename*=UTF-8''R%C3%A9sum%C3%A9%20%22final%22%3B%20x%3D1%20%5C%20100%25.txt`);
  });

  it('answers 401 without a token, 404 for an unknown document, and 404 once the stored file is gone', async () => {
    const document = await upload('A document whose file is about to disappear from the disk.', 'gone.txt');
    expect((await file(document.id)).statusCode).toBe(401);
    expect((await file(document.id)).json().error.code).toBe('unauthorized');
    const unknown = await file('00000000-0000-0000-0000-000000000000', viewer);
    expect(unknown.statusCode).toBe(404);
    expect(unknown.json().error).toEqual({ code: 'not_found', message: 'Document not found' });

    const row = await t.app.documents.find(document.id);
    rmSync(t.app.documents.storagePathOf(row!)!);
    const gone = await file(document.id, viewer);
    expect(gone.statusCode).toBe(404);
    expect(gone.json().error).toEqual({ code: 'not_found', message: 'Document file not found' });
  });

  it('is gone with the document once it is deleted', async () => {
    const document = await upload('A document that an editor deletes right after the upload.', 'deleted.txt');
    expect((await t.request({ method: 'DELETE', url: `/api/docs/${document.id}`, token: editor })).statusCode).toBe(204);
    expect((await file(document.id, viewer)).statusCode).toBe(404);
  });
});
