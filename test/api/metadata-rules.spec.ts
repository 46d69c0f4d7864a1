import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { prose } from '../fixtures/documents.js';
import { LICENSE_ENV, applyLicense } from '../fixtures/license.js';
import { asBeforeMigration } from '../fixtures/older-schema.js';
import { multipartBody } from '../fixtures/multipart.js';
import { installTinyEmbeddingModel } from '../fixtures/tiny-embedding-model.js';
import { snapshot, startApp, type TestApp } from '../helpers.js';

let modelDir: string;
let root: string;

beforeAll(async () => {
  modelDir = mkdtempSync(path.join(os.tmpdir(), 'hearth-meta-models-'));
  root = realpathSync(mkdtempSync(path.join(os.tmpdir(), 'hearth-meta-root-')));
  await installTinyEmbeddingModel(modelDir);
});
afterAll(() => {
  for (const dir of [modelDir, root]) rmSync(dir, { recursive: true, force: true });
});

interface Tokens {
  admin: string;
  editor: string;
  viewer: string;
}

async function start(tier?: 'PRO'): Promise<{ t: TestApp; tokens: Tokens }> {
  const t = await startApp({ ...LICENSE_ENV, MODEL_DIR: modelDir, CONNECTOR_ALLOWED_PATHS: `/app/docs:${root}` });
  if (tier) await applyLicense(t, tier);
  const tokens = { admin: (await t.login()).access, editor: (await t.userWithRole('editor')).access, viewer: (await t.userWithRole('viewer')).access };
  return { t, tokens };
}

const api = (t: TestApp, method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, token: string, payload?: object) =>
  t.request({ method, url, token, ...(payload ? { payload } : {}) });

async function upload(t: TestApp, token: string, filename: string, content: string): Promise<string> {
  const res = await t.request({ method: 'POST', url: '/api/docs/upload', token, ...multipartBody([{ name: 'file', content, filename }]) });
  expect(res.statusCode, res.body).toBe(202);
  await t.app.jobs.idle();
  return res.json().document.id;
}

async function createRule(t: TestApp, token: string, rule: object, source = 'uploads') {
  const res = await api(t, 'POST', `/api/metadata/${source}/rules`, token, rule);
  expect(res.statusCode, res.body).toBe(201);
  return res.json() as { id: string };
}

/** Per chunk in order: its text and its metadata values by field. */
async function chunkValues(t: TestApp, documentId: string) {
  const chunks = await t.app.db.selectFrom('chunks').select(['rowid', 'text', 'embedded_with']).where('document_id', '=', documentId).orderBy('ordinal').execute();
  const values = await t.app.db.selectFrom('chunk_metadata').selectAll().where('chunk_rowid', 'in', chunks.map((chunk) => chunk.rowid)).execute();
  return chunks.map((chunk) => ({
    rowid: chunk.rowid,
    text: chunk.text,
    embedded_with: chunk.embedded_with,
    values: Object.fromEntries(values.filter((row) => row.chunk_rowid === chunk.rowid).map((row) => [row.field_name, { value: row.value, origin: row.origin, rule_id: row.rule_id, contenders: row.contenders }])),
  }));
}

/** A handbook whose sections start with "Section N"; section 1 is long enough to take several chunks. */
function handbook(): string {
  return [
    'Department: Finance. This handbook belongs to the finance team of the company.',
    `Introduction to the handbook. ${prose(1, 4)}`,
    `Section 1 covers the zeppelin hangar policy. ${prose(2, 40)}`,
    `Section 2 describes the quarterly rule review and its policy on travel. ${prose(3, 4)}`,
  ].join('\n\n');
}

const RULES = {
  department: { field_name: 'department', pattern: '(?i)department:\\s*(?P<dept>\\w+)', scope: 'header', level: 'document' },
  section: { field_name: 'section', pattern: '(?m)^Section (\\d+)\\b', query_pattern: '(?i)\\bsection (\\d+)', scope: 'full', level: 'chunk', chunk_boundary: true },
  sectionFallback: { field_name: 'section', pattern: '^(\\w+)-handbook', scope: 'filename', level: 'document' },
};

describe('metadata rules on PRO', () => {
  let t: TestApp;
  let tokens: Tokens;
  beforeAll(async () => {
    ({ t, tokens } = await start('PRO'));
  });
  afterAll(() => t.close());

  it('CRUD per role, with source_id and source_type in every answer', async () => {
    const { admin, editor, viewer } = tokens;
    expect((await api(t, 'POST', '/api/metadata/uploads/rules', viewer, RULES.department)).json().error.code).toBe('role_required');
    const rule = await createRule(t, editor, { ...RULES.department, field_name: 'crud' });
    expect(rule).toMatchObject({ source_id: 'uploads', source_type: 'upload', field_name: 'crud', chunk_boundary: false, priority: 0, query_pattern: null, active: true });

    const list = await api(t, 'GET', '/api/metadata/uploads/rules', viewer);
    expect(list.statusCode).toBe(200);
    expect(list.json()).toMatchObject({ active: true, total: 1, rules: [{ id: rule.id }] });
    expect(list.json()).not.toHaveProperty('inactive_reason');

    expect((await api(t, 'PUT', `/api/metadata/uploads/rules/${rule.id}`, viewer, { priority: 3 })).statusCode).toBe(403);
    const updated = await api(t, 'PUT', `/api/metadata/uploads/rules/${rule.id}`, admin, { priority: 3, chunk_boundary: true });
    expect(updated.statusCode, updated.body).toBe(200);
    expect(updated.json()).toMatchObject({ priority: 3, chunk_boundary: true, field_name: 'crud' });

    expect((await api(t, 'DELETE', `/api/metadata/uploads/rules/${rule.id}`, viewer)).statusCode).toBe(403);
    expect((await api(t, 'DELETE', `/api/metadata/uploads/rules/${rule.id}`, editor)).statusCode).toBe(204);
    expect((await api(t, 'DELETE', `/api/metadata/uploads/rules/${rule.id}`, editor)).statusCode).toBe(404);
    expect((await api(t, 'GET', '/api/metadata/uploads/rules', viewer)).json().total).toBe(0);
  });

  it('takes a connector id as source, and answers 404 for an unknown source or a rule of another source', async () => {
    const dir = path.join(root, 'connector-a');
    mkdirSync(dir, { recursive: true });
    const connector = (await api(t, 'POST', '/api/connectors', tokens.admin, { name: 'meta-a', path: dir })).json();
    const rule = await createRule(t, tokens.editor, RULES.department, connector.id);
    expect(rule).toMatchObject({ source_id: connector.id, source_type: 'connector' });
    const before = await snapshot(t.app, 'metadata_rules');
    for (const [method, url] of [
      ['GET', '/api/metadata/nope/rules'],
      ['POST', '/api/metadata/nope/rules'],
      ['POST', '/api/metadata/nope/test-rule'],
      ['POST', '/api/metadata/nope/refresh'],
      ['PUT', `/api/metadata/uploads/rules/${rule.id}`],
      ['DELETE', `/api/metadata/uploads/rules/${rule.id}`],
    ] as const) {
      const payload = url.endsWith('test-rule') ? { pattern: '(a)', text: 'a' } : method === 'GET' || method === 'DELETE' ? undefined : RULES.department;
      const res = await api(t, method, url, tokens.editor, payload);
      expect(res.statusCode, `${method} ${url}`).toBe(404);
      expect(res.json().error.code).toBe('not_found');
    }
    expect(await snapshot(t.app, 'metadata_rules')).toEqual(before);
    await api(t, 'DELETE', `/api/metadata/${connector.id}/rules/${rule.id}`, tokens.editor);
  });

  it('refuses bad patterns with the reason and position, and wrong types, changing nothing', async () => {
    const before = await snapshot(t.app, 'metadata_rules');
    const refused = async (body: object, field: string, message?: RegExp) => {
      const res = await api(t, 'POST', '/api/metadata/uploads/rules', tokens.editor, { ...RULES.department, ...body });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().error.field).toBe(field);
      if (message) expect(res.json().error.message).toMatch(message);
      return res.json().error;
    };
    expect((await refused({ pattern: 'no groups' }, 'body.pattern', /exactly one capture group.*has 0/)).code).toBe('invalid_pattern');
    await refused({ pattern: '(a)(b)' }, 'body.pattern', /has 2/);
    await refused({ pattern: '(a)\\1' }, 'body.pattern', /backreferences.*position 3/);
    await refused({ pattern: '(?P<x>a)(?P=x)' }, 'body.pattern', /backreferences.*position 8/);
    await refused({ pattern: 'x(?=y)(z)' }, 'body.pattern', /lookahead.*position 1/);
    await refused({ pattern: '(?<!y)(z)' }, 'body.pattern', /lookbehind.*position 0/);
    await refused({ pattern: '(a*+)' }, 'body.pattern', /possessive.*position 3/);
    await refused({ pattern: 'a(?i)(b)' }, 'body.pattern', /must be at the start.*position 1/);
    await refused({ pattern: '(?a)(b)' }, 'body.pattern', /ASCII/);
    await refused({ pattern: '(unclosed' }, 'body.pattern', /not a valid pattern/);
    await refused({ query_pattern: '(a)(b)' }, 'body.query_pattern', /has 2/);
    expect((await refused({ priority: 'high' }, 'body.priority')).code).toBe('validation_failed');
    await refused({ scope: 'page' }, 'body.scope');
    await refused({ level: 'sentence' }, 'body.level');
    await refused({ chunk_boundary: 'yes' }, 'body.chunk_boundary');
    await refused({ field_name: 'has space' }, 'body.field_name');
    await refused({ colour: 'red' }, 'body.colour');
    expect(await snapshot(t.app, 'metadata_rules')).toEqual(before);
    // An update with a bad pattern changes nothing either.
    const rule = await createRule(t, tokens.editor, { ...RULES.department, field_name: 'kept' });
    const res = await api(t, 'PUT', `/api/metadata/uploads/rules/${rule.id}`, tokens.editor, { pattern: '(a)(b)', priority: 9 });
    expect(res.statusCode).toBe(400);
    expect((await api(t, 'GET', '/api/metadata/uploads/rules', tokens.viewer)).json().rules.find((r: { id: string }) => r.id === rule.id)).toMatchObject({ priority: 0, pattern: RULES.department.pattern });
    await api(t, 'DELETE', `/api/metadata/uploads/rules/${rule.id}`, tokens.editor);
  });

  it('test-rule translates Python syntax and shows every match with its spans, saving nothing', async () => {
    const before = await snapshot(t.app, 'metadata_rules');
    const text = 'DEPT: Sales\nnothing\ndept:  Ops';
    const res = await api(t, 'POST', '/api/metadata/uploads/test-rule', tokens.editor, { pattern: '(?i)(?x) dept: \\s* (?P<name>\\w+)  # the department', text });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ matched: true, value: 'Sales', truncated: false });
    expect(body.matches).toEqual([
      { text: 'DEPT: Sales', value: 'Sales', span: { start: 0, end: 11 }, value_span: { start: 6, end: 11 } },
      { text: 'dept:  Ops', value: 'Ops', span: { start: 20, end: 30 }, value_span: { start: 27, end: 30 } },
    ]);
    // \A and \Z are the ends of the whole text, as in Python.
    const anchored = await api(t, 'POST', '/api/metadata/uploads/test-rule', tokens.editor, { pattern: '\\A(\\w+)|(?:x)\\Z', text: 'first\nsecond' });
    expect(anchored.json().matches.map((m: { value: string }) => m.value)).toEqual(['first']);
    const none = await api(t, 'POST', '/api/metadata/uploads/test-rule', tokens.editor, { pattern: 'zz(z)', text });
    expect(none.json()).toMatchObject({ matched: false, value: null, matches: [] });
    expect((await api(t, 'POST', '/api/metadata/uploads/test-rule', tokens.viewer, { pattern: '(a)', text: 'a' })).statusCode).toBe(403);
    const bad = await api(t, 'POST', '/api/metadata/uploads/test-rule', tokens.editor, { pattern: '(a)(?=b)', text: 'ab' });
    expect(bad.json().error).toMatchObject({ code: 'invalid_pattern', field: 'body.pattern' });
    expect(await snapshot(t.app, 'metadata_rules')).toEqual(before);
  });

  it('a catastrophic-backtracking pattern over a long text answers, and the service answers others meanwhile', async () => {
    const text = `${'a'.repeat(99_990)}!`;
    const hostile = api(t, 'POST', '/api/metadata/uploads/test-rule', tokens.editor, { pattern: '^((?:a+)+)$', text });
    const health = t.request({ method: 'GET', url: '/api/health' });
    const [res, other] = await Promise.all([hostile, health]);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().matched).toBe(false);
    expect(other.statusCode).toBe(200);
  });

  describe('at ingestion, in search and chat, and by refresh', () => {
    let documentId: string;
    const ids: Record<string, string> = {};
    beforeAll(async () => {
      ids.department = (await createRule(t, tokens.editor, RULES.department)).id;
      ids.section = (await createRule(t, tokens.editor, RULES.section)).id;
      ids.sectionFallback = (await createRule(t, tokens.editor, RULES.sectionFallback)).id;
      ids.kindOld = (await createRule(t, tokens.editor, { field_name: 'kind', pattern: '(policy)', scope: 'full', level: 'chunk' })).id;
      ids.kindNew = (await createRule(t, tokens.editor, { field_name: 'kind', pattern: '(policy|rule)', scope: 'full', level: 'chunk' })).id;
      ids.kindHigh = (await createRule(t, tokens.editor, { field_name: 'kind', pattern: '(rule)', scope: 'full', level: 'chunk', priority: 5 })).id;
      documentId = await upload(t, tokens.editor, 'finance-handbook.txt', handbook());
    });

    it('splits at chunk boundaries and gives each chunk its values: own match, inherited, document level', async () => {
      const chunks = await chunkValues(t, documentId);
      const starts = chunks.map((chunk) => chunk.text.slice(0, 9));
      expect(starts[0]).toBe('Departmen');
      const first = starts.indexOf('Section 1');
      const second = starts.indexOf('Section 2');
      expect(first).toBeGreaterThan(0);
      expect(second).toBeGreaterThan(first + 1); // section 1 took more than one chunk
      // Before any section: the document-level value (from the filename); a section's own chunk: its match; the chunks after it: inherited.
      expect(chunks[0].values.section).toMatchObject({ value: 'finance', origin: 'document', rule_id: ids.sectionFallback });
      expect(chunks[first].values.section).toMatchObject({ value: '1', origin: 'self', rule_id: ids.section });
      for (const chunk of chunks.slice(first + 1, second)) {
        expect(chunk.text).not.toMatch(/^Section/m);
        expect(chunk.values.section).toMatchObject({ value: '1', origin: 'inherited', rule_id: ids.section });
      }
      expect(chunks[second].values.section).toMatchObject({ value: '2', origin: 'self' });
      for (const chunk of chunks) expect(chunk.values.department).toMatchObject({ value: 'Finance', origin: 'document', rule_id: ids.department });
    });

    it('for one field the highest priority wins, and of equal priorities the oldest rule', async () => {
      const chunks = await chunkValues(t, documentId);
      const policyOnly = chunks.find((chunk) => chunk.text.startsWith('Section 1'))!;
      expect(policyOnly.values.kind).toMatchObject({ value: 'policy', origin: 'self', rule_id: ids.kindOld, contenders: 2 });
      const both = chunks.find((chunk) => chunk.text.startsWith('Section 2'))!;
      expect(both.values.kind).toMatchObject({ value: 'rule', origin: 'self', rule_id: ids.kindHigh, contenders: 3 });
    });

    it('a question a rule matches filters chat and its retrieval by that value, and says so', async () => {
      const res = await api(t, 'POST', '/api/chat', tokens.viewer, { query: 'What does section 2 say about zeppelin travel?' });
      expect(res.statusCode, res.body).toBe(200);
      const body = res.json();
      expect(body.retrieval_settings).toMatchObject({ classification: 'metadata', filters: { metadata: [{ field: 'section', value: '2' }] } });
      expect(body.sources.length).toBeGreaterThan(0);
      const chunks = await chunkValues(t, documentId);
      for (const source of body.sources) expect(chunks.find((chunk) => chunk.text === source.text)!.values.section.value).toBe('2');
      // Without the section in the question, the zeppelin passage of section 1 is found.
      const open = (await api(t, 'POST', '/api/chat', tokens.viewer, { query: 'Where is the zeppelin hangar?' })).json();
      expect(open.retrieval_settings.classification).toBe('document');
      expect(open.sources.some((source: { text: string }) => source.text.includes('zeppelin'))).toBe(true);
      // The filter runs inside each side: in keyword or vector mode alone, nothing of section 1 comes back either.
      for (const mode of ['keyword', 'vector']) {
        const one = (await api(t, 'POST', '/api/chat', tokens.viewer, { query: 'What is in section 2 about the zeppelin hangar?', mode })).json();
        expect(one.retrieval_settings.filters.metadata).toEqual([{ field: 'section', value: '2' }]);
        for (const source of one.sources) expect(source.text).not.toContain('zeppelin');
      }
    });

    it('refresh re-applies the rules as a job without re-embedding, and re-chunks only when boundaries change', async () => {
      const before = await chunkValues(t, documentId);
      const year = await createRule(t, tokens.editor, { field_name: 'topic', pattern: '(zeppelin)', scope: 'full', level: 'chunk' });
      expect((await api(t, 'POST', '/api/metadata/uploads/refresh', tokens.viewer)).statusCode).toBe(403);
      const started = await api(t, 'POST', '/api/metadata/uploads/refresh', tokens.editor);
      expect(started.statusCode, started.body).toBe(202);
      expect(started.json()).toMatchObject({ type: 'metadata.refresh', subject: { source_id: 'uploads' } });
      await t.app.jobs.idle();
      const job = (await api(t, 'GET', `/api/jobs/${started.json().id}`, tokens.viewer)).json();
      expect(job).toMatchObject({ state: 'succeeded', progress: { done: 1, total: 1 }, result: { documents: 1, relabelled: 1, rechunked: 0, chunks: before.length, active: true } });
      const after = await chunkValues(t, documentId);
      expect(after.map((chunk) => [chunk.rowid, chunk.embedded_with])).toEqual(before.map((chunk) => [chunk.rowid, chunk.embedded_with]));
      expect(after.find((chunk) => chunk.text.startsWith('Section 1'))!.values.topic).toMatchObject({ value: 'zeppelin', rule_id: year.id });

      // A new boundary: the document is chunked again (the job says so).
      await createRule(t, tokens.editor, { field_name: 'hangar', pattern: '(Introduction)', scope: 'full', level: 'chunk', chunk_boundary: true });
      const rechunk = await api(t, 'POST', '/api/metadata/uploads/refresh', tokens.editor);
      await t.app.jobs.idle();
      const done = (await api(t, 'GET', `/api/jobs/${rechunk.json().id}`, tokens.viewer)).json();
      expect(done).toMatchObject({ state: 'succeeded', result: { relabelled: 0, rechunked: 1 } });
      const rechunked = await chunkValues(t, documentId);
      expect(rechunked[1].text.startsWith('Introduction')).toBe(true);
      expect(rechunked[1].values.hangar).toMatchObject({ value: 'Introduction', origin: 'self' });
    });

    it('a refresh can be cancelled', async () => {
      // Queued behind the indexing of an upload, so that it is still to run when the cancel comes.
      await t.request({ method: 'POST', url: '/api/docs/upload', token: tokens.editor, ...multipartBody([{ name: 'file', content: prose(40, 30), filename: 'later.txt' }]) });
      const started = await api(t, 'POST', '/api/metadata/uploads/refresh', tokens.editor);
      const cancel = await api(t, 'POST', `/api/jobs/${started.json().id}/cancel`, tokens.editor);
      expect(cancel.statusCode).toBe(202);
      await t.app.jobs.idle();
      expect((await api(t, 'GET', `/api/jobs/${started.json().id}`, tokens.viewer)).json().state).toBe('cancelled');
    });
  });
});

describe('a source\'s rules go with it (issue 17)', () => {
  let t: TestApp;
  let tokens: Tokens;
  beforeAll(async () => {
    ({ t, tokens } = await start('PRO'));
  });
  afterAll(() => t.close());

  const rulesOf = (sourceId: string) => t.app.db.selectFrom('metadata_rules').select('id').where('source_id', '=', sourceId).execute();

  it('deleting a connector deletes its rules, their values, and their hold on questions', async () => {
    const dir = path.join(root, 'connector-deleted');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'manual.txt'), `Chapter 3 of the manual. ${prose(21, 6)}\n\nChapter 4 of the manual. ${prose(22, 6)}`);
    const connector = (await api(t, 'POST', '/api/connectors', tokens.admin, { name: 'meta-deleted', path: dir })).json();
    const rule = await createRule(t, tokens.editor, { field_name: 'chapter', pattern: '(?m)^Chapter (\\d+)', query_pattern: '(?i)\\bchapter (\\d+)', scope: 'full', level: 'chunk' }, connector.id);
    expect((await api(t, 'POST', `/api/connectors/${connector.id}/scan`, tokens.editor)).statusCode).toBe(202);
    await t.app.jobs.idle();
    expect((await t.app.db.selectFrom('chunk_metadata').select('value').where('rule_id', '=', rule.id).execute()).length).toBeGreaterThan(0);
    const question = { query: 'What does chapter 3 say about the manual?' };
    expect((await api(t, 'POST', '/api/chat', tokens.viewer, question)).json().retrieval_settings.classification).toBe('metadata');

    // A refresh of the source queued behind an upload's indexing when the delete comes: it stops, cancelled.
    await t.request({ method: 'POST', url: '/api/docs/upload', token: tokens.editor, ...multipartBody([{ name: 'file', content: prose(23, 30), filename: 'queued.txt' }]) });
    const refresh = await api(t, 'POST', `/api/metadata/${connector.id}/refresh`, tokens.editor);
    expect(refresh.statusCode, refresh.body).toBe(202);
    expect((await api(t, 'DELETE', `/api/connectors/${connector.id}`, tokens.admin)).statusCode).toBe(204);
    await t.app.jobs.idle();
    expect((await api(t, 'GET', `/api/jobs/${refresh.json().id}`, tokens.viewer)).json().state).toBe('cancelled');
    expect(await rulesOf(connector.id)).toEqual([]);
    expect(await t.app.db.selectFrom('chunk_metadata').select('value').where('rule_id', '=', rule.id).execute()).toEqual([]);
    expect(await t.app.db.selectFrom('chunk_rule_hits').select('chunk_rowid').where('rule_id', '=', rule.id).execute()).toEqual([]);
    expect((await api(t, 'GET', `/api/metadata/${connector.id}/rules`, tokens.viewer)).statusCode).toBe(404);
    // The deleted source's query pattern no longer turns a question into a filter (that would find nothing).
    const chat = (await api(t, 'POST', '/api/chat', tokens.viewer, question)).json();
    expect(chat.retrieval_settings).toMatchObject({ classification: 'document', filters: {} });
  });

  it('deleting an integration deletes its rules; other sources keep theirs', async () => {
    const created = await api(t, 'POST', '/api/integrations', tokens.admin, { name: 'meta-site', kind: 'web', config: { start_url: 'http://127.0.0.1:9/', allow_private_network: true } });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().id as string;
    await createRule(t, tokens.editor, RULES.department, id);
    const kept = await createRule(t, tokens.editor, { ...RULES.department, field_name: 'kept' });
    expect(await rulesOf(id)).toHaveLength(1);
    expect((await api(t, 'DELETE', `/api/integrations/${id}`, tokens.admin)).statusCode).toBe(204);
    expect(await rulesOf(id)).toEqual([]);
    expect((await api(t, 'GET', `/api/metadata/${id}/rules`, tokens.viewer)).statusCode).toBe(404);
    expect((await api(t, 'GET', '/api/metadata/uploads/rules', tokens.viewer)).json().rules.map((r: { id: string }) => r.id)).toEqual([kept.id]);
  });

  it('rules left by sources deleted before this release are deleted at the upgrade (migration 0015)', async () => {
    const dir = path.join(root, 'connector-kept');
    mkdirSync(dir, { recursive: true });
    const connector = (await api(t, 'POST', '/api/connectors', tokens.admin, { name: 'meta-kept', path: dir })).json();
    const live = await createRule(t, tokens.editor, RULES.department, connector.id);
    const now = Date.now();
    const orphan = (id: string, type: 'connector' | 'integration') => ({
      id, source_type: type, source_id: `${id}-source`, field_name: 'orphan', pattern: '(x)', query_pattern: '(?i)orphan (\\w+)', scope: 'full' as const,
      level: 'chunk' as const, chunk_boundary: 0, priority: 0, created_at: now, updated_at: now,
    });
    await t.app.db.insertInto('metadata_rules').values([orphan('orphan-c', 'connector'), orphan('orphan-i', 'integration')]).execute();
    // As if upgrading from 0014: the migrations after it are undone and forgotten.
    await asBeforeMigration(t.app.db, '0015');
    const before = (await t.app.db.selectFrom('metadata_rules').select('id').execute()).map((row) => row.id);
    t = await t.restart();
    const after = (await t.app.db.selectFrom('metadata_rules').select('id').execute()).map((row) => row.id);
    expect(after.sort()).toEqual(before.filter((id) => !id.startsWith('orphan-')).sort());
    expect(after).toContain(live.id);
  });
});

describe('metadata rules below PRO and after a downgrade', () => {
  let t: TestApp;
  let tokens: Tokens;
  beforeAll(async () => {
    ({ t, tokens } = await start());
  });
  afterAll(() => t.close());
  afterEach(() => vi.useRealTimers());

  it('on FREE: every write, test-rule and refresh is 403 tier_required; the list reads as inactive', async () => {
    for (const [method, url, payload] of [
      ['POST', '/api/metadata/uploads/rules', RULES.department],
      ['PUT', '/api/metadata/uploads/rules/x', { priority: 1 }],
      ['DELETE', '/api/metadata/uploads/rules/x', undefined],
      ['POST', '/api/metadata/uploads/test-rule', { pattern: '(a)', text: 'a' }],
      ['POST', '/api/metadata/uploads/refresh', undefined],
    ] as const) {
      for (const token of [tokens.editor, tokens.admin]) {
        const res = await api(t, method, url, token, payload);
        expect(res.statusCode, `${method} ${url}`).toBe(403);
        expect(res.json().error.code).toBe('tier_required');
      }
    }
    expect(await snapshot(t.app, 'metadata_rules')).toEqual([]);
    const list = (await api(t, 'GET', '/api/metadata/uploads/rules', tokens.viewer)).json();
    expect(list).toMatchObject({ rules: [], active: false, inactive_reason: expect.stringContaining('PRO') });
  });

  it('after the licence lapses the rules are kept, shown inactive, and not applied to new documents or questions', async () => {
    await applyLicense(t, 'PRO', undefined, 60_000);
    const rule = await createRule(t, tokens.editor, { ...RULES.section, chunk_boundary: false });
    const during = await upload(t, tokens.editor, 'during.txt', `Section 7 of the manual. ${prose(11, 6)}`);
    expect((await chunkValues(t, during))[0].values.section).toMatchObject({ value: '7' });

    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(Date.now() + 120_000);
    const list = (await api(t, 'GET', '/api/metadata/uploads/rules', tokens.viewer)).json();
    expect(list).toMatchObject({ active: false, total: 1, rules: [{ id: rule.id, active: false }], inactive_reason: expect.stringContaining('kept') });
    expect((await api(t, 'PUT', `/api/metadata/uploads/rules/${rule.id}`, tokens.editor, { priority: 2 })).json().error.code).toBe('tier_required');

    const after = await upload(t, tokens.editor, 'after.txt', `Section 8 of the manual. ${prose(12, 6)}`);
    expect((await chunkValues(t, after)).every((chunk) => Object.keys(chunk.values).length === 0)).toBe(true);
    const chat = (await api(t, 'POST', '/api/chat', tokens.viewer, { query: 'What does section 7 say?' })).json();
    expect(chat.retrieval_settings.classification).toBe('document');
    expect(chat.retrieval_settings.filters).toEqual({});
    expect(await snapshot(t.app, 'metadata_rules')).toHaveLength(1);
  });
});
