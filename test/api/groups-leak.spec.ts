/**
 * Canary leak suite (issue 18): documents holding unique canary strings, each readable by one group.
 * Users outside that group (viewers, editors, admins, members of another group) probe every read of
 * document content; no canary may ever come back: with caches warm, after access is revoked, after
 * the document is deleted, and when the extraction of another upload fails. Counts (analytics, index
 * stats) must be those of the documents the prober may list: a hidden document adds nothing to them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type TestApp, startApp } from '../helpers.js';
import { makeCorruptPdf } from '../fixtures/documents.js';
import { LICENSE_ENV, applyLicense } from '../fixtures/license.js';
import { multipartBody } from '../fixtures/multipart.js';
import { installTinyEmbeddingModel } from '../fixtures/tiny-embedding-model.js';

const CANARY = { alpha: 'zqxalphacanary7', beta: 'zqxbetacanary9' } as const;
const MODES = ['hybrid', 'vector', 'keyword'] as const;
const ANALYTICS = ['chunk-size-distribution', 'metadata-hit-rate', 'metadata-coverage', 'chunks-per-document', 'inheritance-ratio', 'empty-metadata', 'rule-priority-audit'];

let t: TestApp;
let modelDir: string;
let admin: string;
const docs: Record<'alpha' | 'beta' | 'public', string> = { alpha: '', beta: '', public: '' };
const groupIds: Record<'alpha' | 'beta', string> = { alpha: '', beta: '' };
type Probe = { name: string; id: string; access: string };
const users: Record<string, Probe> = {};

const text = (canary: string, topic: string) =>
  `Quarterly ${topic} handbook.\n\nThe secret project code is ${canary}. The ${topic} team reviews the ${canary} budget every quarter.\n\nShared wording about budgets, reviews and projects.`;

async function upload(token: string, filename: string, content: Buffer | string) {
  const res = await t.request({ method: 'POST', url: '/api/docs/upload', token, ...multipartBody([{ name: 'file', content, filename }]) });
  expect(res.statusCode, res.body).toBe(202);
  return res.json().document.id as string;
}

async function member(name: string, role: 'viewer' | 'editor' | 'admin', group?: 'alpha' | 'beta'): Promise<Probe> {
  const user = await t.userWithRole(role, name);
  if (group) expect((await t.request({ method: 'PUT', url: `/api/groups/${groupIds[group]}/members/${user.id}`, token: admin })).statusCode).toBe(204);
  return (users[name] = { name, id: user.id, access: user.access });
}

/** A question every handbook answers: the chat asks it (a chat stores and echoes its question, so it never names the canary). */
const QUESTION = 'What is the secret project code of the handbook?';

/** Every read of content a user can make, as raw response bodies (JSON and SSE), for the canary scan; search also asks for the canary by name. */
async function probe(user: Probe, canary: string): Promise<string[]> {
  const bodies: string[] = [];
  const get = async (url: string) => {
    const res = await t.request({ method: 'GET', url, token: user.access });
    bodies.push(res.body);
    return res;
  };
  for (const query of [canary, QUESTION]) {
    for (const mode of MODES) {
      const res = await t.request({ method: 'POST', url: '/api/search', token: user.access, payload: { query, mode, k: 10 } });
      expect(res.statusCode, res.body).toBe(200);
      bodies.push(res.body);
    }
  }
  const json = await t.request({ method: 'POST', url: '/api/chat', token: user.access, payload: { query: QUESTION } });
  expect(json.statusCode, json.body).toBe(200);
  bodies.push(json.body);
  const sse = await t.request({ method: 'POST', url: '/api/chat', token: user.access, headers: { accept: 'text/event-stream' }, payload: { query: QUESTION, conversation_id: json.json().conversation_id } });
  bodies.push(sse.body);
  await get('/api/docs?limit=500');
  for (const id of Object.values(docs)) await get(`/api/docs/${id}/file`);
  const conversations = await get('/api/conversations');
  for (const conversation of conversations.json().conversations) await get(`/api/conversations/${conversation.id}`);
  const jobs = await get('/api/jobs?limit=500');
  for (const job of jobs.json().jobs) await get(`/api/jobs/${job.id}`);
  const analytics: Record<string, any> = {};
  for (const endpoint of ANALYTICS) {
    const res = await get(`/api/analytics/uploads/${endpoint}`);
    expect(res.statusCode, res.body).toBe(200);
    analytics[endpoint] = res.json();
  }
  const stats = (await get('/api/index/stats')).json();
  await expectOwnCounts(user, analytics, stats);
  return bodies;
}

/** Analytics and index stats count exactly the documents the user may list: nothing of a hidden one shows in a number. */
async function expectOwnCounts(user: Probe, analytics: Record<string, any>, stats: { chunks: number; vectors: number }): Promise<void> {
  const list = async (query: string) => (await t.request({ method: 'GET', url: `/api/docs?limit=500${query}`, token: user.access })).json().documents as Array<{ id: string; chunk_count: number }>;
  const chunksOf = (documents: Array<{ chunk_count: number }>) => documents.reduce((sum, document) => sum + document.chunk_count, 0);
  const uploads = await list('&source_type=upload&status=indexed');
  const totals = { documents_total: uploads.length, chunks_total: chunksOf(uploads) };
  expect(analytics['metadata-hit-rate'], user.name).toMatchObject(totals);
  expect(analytics['metadata-coverage'], user.name).toMatchObject(totals);
  expect(analytics['chunks-per-document'].count, user.name).toBe(uploads.length);
  expect(analytics['chunk-size-distribution'].count, user.name).toBe(totals.chunks_total);
  expect(analytics['inheritance-ratio'].chunks_total, user.name).toBe(totals.chunks_total);
  // The rule's values are the handbooks' codes (the canaries among them): one per readable handbook.
  const code = analytics['metadata-coverage'].fields.find((field: { field_name: string }) => field.field_name === 'code');
  expect(code, user.name).toMatchObject({ documents_with_value: uploads.length, distinct_values: uploads.length });
  const hits = analytics['metadata-hit-rate'].rules[0];
  expect(hits, user.name).toMatchObject({ documents_matched: uploads.length, chunks_matched: totals.chunks_total });
  const readable = chunksOf(await list(''));
  expect(stats.chunks, user.name).toBe(readable);
  // Everything is embedded by now (the probes run after the jobs are idle): the vectors are the reader's chunks too.
  expect(stats.vectors, user.name).toBe(readable);
}

function expectNoCanary(bodies: string[], canary: string, documentId?: string): void {
  for (const body of bodies) {
    expect(body).not.toContain(canary);
    if (documentId) expect(body).not.toContain(documentId);
  }
}

beforeAll(async () => {
  modelDir = mkdtempSync(path.join(os.tmpdir(), 'hearth-leak-models-'));
  await installTinyEmbeddingModel(modelDir);
  t = await startApp({ MODEL_DIR: modelDir, ...LICENSE_ENV });
  await applyLicense(t, 'ENTERPRISE');
  admin = (await t.login()).access;
  for (const name of ['alpha', 'beta'] as const) {
    const res = await t.request({ method: 'POST', url: '/api/groups', token: admin, payload: { name } });
    expect(res.statusCode, res.body).toBe(201);
    groupIds[name] = res.json().id;
  }
  // A metadata rule whose values are the canaries themselves: analytics count them, never show them.
  const rule = await t.request({ method: 'POST', url: '/api/metadata/uploads/rules', token: admin, payload: { field_name: 'code', pattern: 'secret project code is (\\w+)', scope: 'full', level: 'document' } });
  expect(rule.statusCode, rule.body).toBe(201);
  docs.alpha = await upload(admin, 'alpha-handbook.txt', text(CANARY.alpha, 'alpha'));
  docs.beta = await upload(admin, 'beta-handbook.txt', text(CANARY.beta, 'beta'));
  docs.public = await upload(admin, 'public-handbook.txt', text('nothingsecret', 'public'));
  await t.app.jobs.idle();
  for (const name of ['alpha', 'beta'] as const) {
    const res = await t.request({ method: 'PUT', url: `/api/documents/${docs[name]}/access`, token: admin, payload: { groups: [name] } });
    expect(res.statusCode, res.body).toBe(200);
  }
  await member('alpha-viewer', 'viewer', 'alpha');
  await member('alpha-editor', 'editor', 'alpha');
  await member('beta-viewer', 'viewer', 'beta');
  await member('beta-admin', 'admin', 'beta');
  await member('plain-viewer', 'viewer');
  await member('plain-editor', 'editor');
  await member('plain-admin', 'admin');
}, 120_000);

afterAll(async () => {
  await t?.close();
  rmSync(modelDir, { recursive: true, force: true });
});

const outsiders = () => ['beta-viewer', 'beta-admin', 'plain-viewer', 'plain-editor', 'plain-admin'].map((name) => users[name]);

describe('canary leak suite', () => {
  it('an allowed user finds the canary (the probes can see one when it is there)', async () => {
    const bodies = await probe(users['alpha-viewer'], CANARY.alpha);
    expect(bodies.some((body) => body.includes(CANARY.alpha))).toBe(true);
    const search = await t.request({ method: 'POST', url: '/api/search', token: users['alpha-viewer'].access, payload: { query: CANARY.alpha, mode: 'keyword' } });
    expect(search.json().results[0].document_id).toBe(docs.alpha);
  });

  it('users outside the group never see it, with caches warm from the allowed user (viewers, editors, admins, other groups)', async () => {
    for (const user of outsiders()) expectNoCanary(await probe(user, CANARY.alpha), CANARY.alpha, docs.alpha);
    // The default admin is in no group either: admins read by their groups like everyone else.
    expectNoCanary(await probe({ name: 'admin', id: '', access: admin }, CANARY.alpha), CANARY.alpha, docs.alpha);
    // And the alpha members do not see beta's.
    expectNoCanary(await probe(users['alpha-editor'], CANARY.beta), CANARY.beta, docs.beta);
  });

  it('an editor outside the group cannot open up its access', async () => {
    const res = await t.request({ method: 'PUT', url: `/api/documents/${docs.alpha}/access`, token: users['plain-editor'].access, payload: { groups: ['everyone'] } });
    expect(res.statusCode).toBe(404);
    expectNoCanary(await probe(users['plain-editor'], CANARY.alpha), CANARY.alpha, docs.alpha);
  });

  it('extraction of another upload failing shows no canary to its uploader', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'hearth-leak-corrupt-'));
    const { readFileSync } = await import('node:fs');
    const editor = users['plain-editor'];
    const failed = await upload(editor.access, 'broken.pdf', readFileSync(await makeCorruptPdf(dir)));
    await t.app.jobs.idle();
    rmSync(dir, { recursive: true, force: true });
    const list = await t.request({ method: 'GET', url: '/api/docs?limit=500', token: editor.access });
    expect(list.json().documents.find((d: { id: string }) => d.id === failed)).toMatchObject({ status: 'failed' });
    expectNoCanary(await probe(editor, CANARY.alpha), CANARY.alpha, docs.alpha);
  });

  it('after access is revoked the former member sees it no more, in search, chat or their stored conversation', async () => {
    const former = users['alpha-viewer'];
    expect((await t.request({ method: 'DELETE', url: `/api/groups/${groupIds.alpha}/members/${former.id}`, token: admin })).statusCode).toBe(204);
    expectNoCanary(await probe(former, CANARY.alpha), CANARY.alpha, docs.alpha);
  });

  it('after the document is deleted nobody sees it, its last reader included', async () => {
    const editor = users['alpha-editor'];
    expect((await t.request({ method: 'DELETE', url: `/api/docs/${docs.alpha}`, token: editor.access })).statusCode).toBe(204);
    for (const user of [editor, ...outsiders()]) expectNoCanary(await probe(user, CANARY.alpha), CANARY.alpha);
  });

  it('a duplicate of a document the uploader may not read is taken as a document of its own: nothing names the hidden one', async () => {
    const content = text('zqxgammacanary3', 'gamma');
    const hidden = await upload(admin, 'gamma-handbook.txt', content);
    await t.app.jobs.idle();
    expect((await t.request({ method: 'PUT', url: `/api/documents/${hidden}/access`, token: admin, payload: { groups: ['alpha'] } })).statusCode).toBe(200);

    const outsider = users['plain-editor'];
    const res = await t.request({ method: 'POST', url: '/api/docs/upload', token: outsider.access, ...multipartBody([{ name: 'file', content, filename: 'my-notes.txt' }]) });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.body).not.toContain(hidden);
    expect(res.body).not.toContain('gamma-handbook');
    const copy = res.json().document.id as string;
    expect(copy).not.toBe(hidden);
    await t.app.jobs.idle();
    const listed = (await t.request({ method: 'GET', url: '/api/docs?limit=500', token: outsider.access })).json().documents as Array<{ id: string; status: string; chunk_count: number }>;
    expect(listed.find((d) => d.id === copy)).toMatchObject({ status: 'indexed' });
    expect(listed.some((d) => d.id === hidden)).toBe(false);
    // Each copy has chunks of its own (chunk ids carry the document id), and the hidden one stays hidden.
    const chunks = await t.app.db.selectFrom('chunks').select(['id', 'document_id']).where('document_id', 'in', [hidden, copy]).execute();
    expect(new Set(chunks.map((chunk) => chunk.document_id))).toEqual(new Set([hidden, copy]));
    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(chunks.length);
    expect((await t.request({ method: 'GET', url: `/api/docs/${hidden}/file`, token: outsider.access })).statusCode).toBe(404);
    expectNoCanary(await probe(outsider, CANARY.beta), CANARY.beta, hidden);

    // A duplicate of a document the uploader may read is still refused, and named.
    const again = await t.request({ method: 'POST', url: '/api/docs/upload', token: outsider.access, ...multipartBody([{ name: 'file', content, filename: 'again.txt' }]) });
    expect(again.statusCode).toBe(409);
    expect(again.json().error).toMatchObject({ code: 'duplicate_document' });
    expect(again.json().error.message).toContain(copy);
    expect(again.body).not.toContain(hidden);
  });
});
