import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { prose } from '../fixtures/documents.js';
import { LICENSE_ENV, applyLicense } from '../fixtures/license.js';
import { multipartBody } from '../fixtures/multipart.js';
import { startApp, type TestApp } from '../helpers.js';

const ENDPOINTS = ['chunk-size-distribution', 'metadata-hit-rate', 'metadata-coverage', 'chunks-per-document', 'inheritance-ratio', 'empty-metadata', 'rule-priority-audit'];

let t: TestApp;
let viewer: string;
let editor: string;
const rules: Record<string, string> = {};
const documents: Record<string, string> = {};

const get = (path: string, token = viewer) => t.request({ method: 'GET', url: `/api/analytics/uploads/${path}`, token });

async function upload(filename: string, content: string): Promise<void> {
  const res = await t.request({ method: 'POST', url: '/api/docs/upload', token: editor, ...multipartBody([{ name: 'file', content, filename }]) });
  expect(res.statusCode, res.body).toBe(202);
  documents[filename] = res.json().document.id;
}

async function rule(name: string, body: object): Promise<void> {
  const res = await t.request({ method: 'POST', url: '/api/metadata/uploads/rules', token: editor, payload: body });
  expect(res.statusCode, res.body).toBe(201);
  rules[name] = res.json().id;
}

/** Three documents without an embedding model (keyword chunks): a.txt has two sections, b.txt one, c.txt none of the fields. */
beforeAll(async () => {
  t = await startApp(LICENSE_ENV);
  viewer = (await t.userWithRole('viewer')).access;
  editor = (await t.userWithRole('editor')).access;
  // Before the licence: every analytics endpoint is 403 tier_required.
  for (const endpoint of ENDPOINTS) expect((await get(endpoint)).json().error.code).toBe('tier_required');
  await applyLicense(t, 'PRO');
  await rule('section', { field_name: 'section', pattern: '(?m)^Section (\\d+)', scope: 'full', level: 'chunk', chunk_boundary: true });
  await rule('team', { field_name: 'team', pattern: '^(\\w+)-', scope: 'filename', level: 'document' });
  await rule('teamLow', { field_name: 'team', pattern: '^([ab])', scope: 'filename', level: 'document', priority: -1 });
  await upload('alpha-a.txt', `Opening words of the alpha file. ${prose(1, 3)}\n\nSection 1 first part. ${prose(2, 3)}\n\nSection 2 second part. ${prose(3, 3)}`);
  await upload('beta-b.txt', `Section 9 only. ${prose(4, 3)}`);
  await upload('c.txt', `Nothing to see here at all. ${prose(5, 3)}`);
  await t.app.jobs.idle();
});
afterAll(() => t.close());

async function chunkCount(documentId: string): Promise<number> {
  return (await t.app.db.selectFrom('chunks').select(['id']).where('document_id', '=', documentId).execute()).length;
}

describe('analytics', () => {
  it('every endpoint answers any signed-in role, and 404 for an unknown source', async () => {
    for (const endpoint of ENDPOINTS) {
      expect((await get(endpoint)).statusCode, endpoint).toBe(200);
      expect((await get(endpoint, editor)).statusCode, endpoint).toBe(200);
      expect((await t.request({ method: 'GET', url: `/api/analytics/uploads/${endpoint}` })).statusCode).toBe(401);
      const unknown = await t.request({ method: 'GET', url: `/api/analytics/nope/${endpoint}`, token: viewer });
      expect(unknown.statusCode, endpoint).toBe(404);
    }
  });

  it('chunk-size-distribution: histogram and summary of chunk lengths', async () => {
    const sizes = (await t.app.db.selectFrom('chunks').select('char_count').execute()).map((row) => row.char_count).sort((a, b) => a - b);
    const body = (await get('chunk-size-distribution')).json();
    expect(body).toMatchObject({ source_id: 'uploads', source_type: 'upload', unit: 'characters', count: sizes.length, min: sizes[0], max: sizes.at(-1) });
    expect(body.median).toBe(sizes[Math.ceil(sizes.length / 2) - 1]);
    expect(body.p90).toBe(sizes[Math.ceil(sizes.length * 0.9) - 1]);
    expect(body.mean).toBeCloseTo(sizes.reduce((a, b) => a + b, 0) / sizes.length, 1);
    expect(body.buckets.reduce((sum: number, b: { count: number }) => sum + b.count, 0)).toBe(sizes.length);
    expect(body.buckets[0].from).toBe(sizes[0]);
    expect(body.buckets.at(-1).to).toBe(sizes.at(-1)! + 1);
  });

  it('chunks-per-document: per document counts with summary', async () => {
    const counts = await Promise.all(Object.values(documents).map(chunkCount));
    const body = (await get('chunks-per-document')).json();
    expect(body).toMatchObject({ count: 3, min: Math.min(...counts), max: Math.max(...counts) });
    expect(body.buckets.reduce((sum: number, b: { count: number }) => sum + b.count, 0)).toBe(3);
  });

  it('metadata-hit-rate and metadata-coverage count matches per rule and values per field', async () => {
    const total = await t.app.db.selectFrom('chunks').select('id').execute();
    const alpha = await chunkCount(documents['alpha-a.txt']);
    const beta = await chunkCount(documents['beta-b.txt']);
    const hit = (await get('metadata-hit-rate')).json();
    expect(hit).toMatchObject({ documents_total: 3, chunks_total: total.length });
    const byRule = Object.fromEntries(hit.rules.map((r: { rule_id: string }) => [r.rule_id, r]));
    expect(byRule[rules.section]).toMatchObject({ documents_matched: 2, chunks_matched: 3, level: 'chunk' });
    // Document-level: every chunk of a matched document.
    expect(byRule[rules.team]).toMatchObject({ documents_matched: 2, chunks_matched: alpha + beta, document_rate: 0.6667 });
    expect(byRule[rules.teamLow]).toMatchObject({ documents_matched: 2, chunks_matched: alpha + beta });

    const coverage = (await get('metadata-coverage')).json();
    const fields = Object.fromEntries(coverage.fields.map((f: { field_name: string }) => [f.field_name, f]));
    expect(fields.team).toMatchObject({ chunks_with_value: alpha + beta, documents_with_value: 2, document_coverage: 0.6667, distinct_values: 2 });
    // alpha's opening chunk has no section (no earlier match, no document-level rule of the field).
    expect(fields.section).toMatchObject({ chunks_with_value: alpha - 1 + beta, documents_with_value: 2, distinct_values: 3 });
  });

  it('inheritance-ratio, empty-metadata and rule-priority-audit', async () => {
    const total = (await t.app.db.selectFrom('chunks').select('id').execute()).length;
    const alpha = await chunkCount(documents['alpha-a.txt']);
    const beta = await chunkCount(documents['beta-b.txt']);
    const ratio = (await get('inheritance-ratio')).json();
    expect(ratio.fields).toHaveLength(1);
    expect(ratio.fields[0]).toMatchObject({ field_name: 'section', self_matched: 3, inherited: alpha - 1 + beta - 3, document_level: 0, empty: total - (alpha - 1 + beta) });

    const empty = (await get('empty-metadata')).json();
    // c.txt matched no rule: its chunks are the empty ones.
    const c = await chunkCount(documents['c.txt']);
    expect(empty).toMatchObject({ chunks_total: total, empty_chunks: c, documents_with_empty_chunks: 1, sample_document_ids: [documents['c.txt']] });

    const audit = (await get('rule-priority-audit')).json();
    const team = audit.fields.find((f: { field_name: string }) => f.field_name === 'team');
    // alpha and beta: both team rules matched, the higher priority won on each of their chunks.
    expect(team).toMatchObject({ contested: alpha + beta, rules: [{ rule_id: rules.team, wins: alpha + beta, win_rate: 1 }, { rule_id: rules.teamLow, wins: 0 }] });
    expect(audit.fields.find((f: { field_name: string }) => f.field_name === 'section')).toMatchObject({ contested: 0 });
  });

  it('counts only the documents the caller\'s groups may read, and never names the others (issue 18)', async () => {
    // Last: it moves beta-b.txt and c.txt (the one with empty chunks) to a group the viewer is not in.
    await applyLicense(t, 'ENTERPRISE');
    const admin = (await t.login()).access;
    const legal = (await t.request({ method: 'POST', url: '/api/groups', token: admin, payload: { name: 'legal' } })).json().id;
    const member = await t.userWithRole('viewer', 'legal-reader');
    expect((await t.request({ method: 'PUT', url: `/api/groups/${legal}/members/${member.id}`, token: admin })).statusCode).toBe(204);
    const everything = Object.fromEntries(await Promise.all(ENDPOINTS.map(async (endpoint) => [endpoint, (await get(endpoint)).json()])));
    for (const name of ['beta-b.txt', 'c.txt']) {
      const res = await t.request({ method: 'PUT', url: `/api/documents/${documents[name]}/access`, token: admin, payload: { groups: ['legal'] } });
      expect(res.statusCode, res.body).toBe(200);
    }

    const alpha = await chunkCount(documents['alpha-a.txt']);
    const hidden = [documents['beta-b.txt'], documents['c.txt']];
    const seen: Record<string, any> = {};
    for (const endpoint of ENDPOINTS) {
      const res = await get(endpoint);
      expect(res.statusCode, endpoint).toBe(200);
      for (const id of hidden) expect(res.body, endpoint).not.toContain(id);
      seen[endpoint] = res.json();
      // A member of the group still counts every document: the same answers as before the change.
      expect((await get(endpoint, member.access)).json(), endpoint).toEqual(everything[endpoint]);
    }
    expect(seen['chunk-size-distribution']).toMatchObject({ count: alpha });
    expect(seen['chunks-per-document']).toMatchObject({ count: 1, min: alpha, max: alpha });
    const hit = seen['metadata-hit-rate'];
    expect(hit).toMatchObject({ documents_total: 1, chunks_total: alpha });
    const byRule = Object.fromEntries(hit.rules.map((r: { rule_id: string }) => [r.rule_id, r]));
    expect(byRule[rules.section]).toMatchObject({ documents_matched: 1, chunks_matched: 2 });
    expect(byRule[rules.team]).toMatchObject({ documents_matched: 1, chunks_matched: alpha, document_rate: 1 });
    const fields = Object.fromEntries(seen['metadata-coverage'].fields.map((f: { field_name: string }) => [f.field_name, f]));
    expect(fields.team).toMatchObject({ chunks_with_value: alpha, documents_with_value: 1, distinct_values: 1 });
    expect(fields.section).toMatchObject({ chunks_with_value: alpha - 1, documents_with_value: 1, distinct_values: 2 });
    expect(seen['inheritance-ratio'].fields[0]).toMatchObject({ self_matched: 2, inherited: alpha - 3, document_level: 0, empty: 1 });
    expect(seen['empty-metadata']).toMatchObject({ chunks_total: alpha, empty_chunks: 0, documents_with_empty_chunks: 0, sample_document_ids: [] });
    const team = seen['rule-priority-audit'].fields.find((f: { field_name: string }) => f.field_name === 'team');
    expect(team).toMatchObject({ contested: alpha, rules: [{ rule_id: rules.team, wins: alpha }, { rule_id: rules.teamLow, wins: 0 }] });
  });
});
