import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { VERSION } from '../../core/version.js';
import { addressRefusal, checkUrl, type Resolver, systemNetwork, UrlNotAllowed, UrlUnresolvable } from '../../core/net/ssrf-guard.js';
import { FetchError, type FetchOptions, guardedFetch } from '../../plugins/integrations/fetcher.js';
import { filenameOf, linksOf, parseSitemap } from '../../plugins/integrations/page-parsing.js';
import { makePdf, prose } from '../fixtures/documents.js';
import { applyLicense, LICENSE_ENV } from '../fixtures/license.js';
import { installTinyEmbeddingModel } from '../fixtures/tiny-embedding-model.js';
import { type LoopbackNetwork, loopbackNetwork } from '../fixtures/loopback-network.js';
import { startSite, type TestSite } from '../fixtures/web-site.js';
import { snapshot, startApp, type TestApp } from '../helpers.js';

/** The website crawler end to end: a real site on loopback, Hearth through app.inject, the tiny embedding model. */

let fixtures: string;
let pdf: Buffer;
let t: TestApp;
let site: TestSite;
let outside: TestSite;
let admin: string;
let editor: string;
let viewer: string;

const PASSWORD = 'pw-Site-Secret-4242';
const TOKEN = 'tok-Bearer-Secret-9191';

const html = (title: string, text: string, links: string[] = []) =>
  `<!DOCTYPE html><html><head><title>${title}</title></head><body><h1>${title}</h1><p>${text}</p>` +
  `${links.map((link) => `<a href="${link}">${link}</a>`).join('\n')}</body></html>`;

async function buildSite(): Promise<void> {
  site = await startSite();
  outside = await startSite();
  const o = site.origin;
  outside.set('/outside.html', { body: html('Outside', `outsideword ${prose(90, 6)}`) });
  site.set('/robots.txt', { type: 'text/plain', body: 'User-agent: *\nDisallow: /private/\n' });
  site.set('/sitemap.xml', {
    type: 'application/xml',
    body: `<?xml version="1.0" encoding="UTF-8"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><sitemap><loc>${o}/sitemap-pages.xml</loc></sitemap></sitemapindex>`,
  });
  site.set('/sitemap-pages.xml', {
    type: 'application/xml',
    body: `<?xml version="1.0" encoding="UTF-8"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc>${o}/</loc></url><url><loc>${o}/notes.txt</loc></url></urlset>`,
  });
  site.set('/', {
    body: html('Home', `homeword ${prose(80, 6)}`, [
      'alpha.html', '/beta.html', 'report.pdf', '/private/secret.html', `${outside.origin}/outside.html`, '/old-path', '/to-outside',
      'mailto:someone@example.test', 'javascript:void(0)', '#top', 'alpha.html#part',
    ]),
  });
  site.set('/alpha.html', { body: html('Alpha', `alphaword ${prose(81, 6)}`, ['deep/one.html']) });
  site.set('/beta.html', { validators: 'last-modified', body: html('Beta', `betaword ${prose(82, 6)}`) });
  site.set('/report.pdf', { type: 'application/pdf', body: pdf });
  site.set('/old-path', { status: 301, location: '/older' });
  site.set('/older', { status: 302, location: `${o}/gamma.html` });
  site.set('/to-outside', { status: 302, location: `${outside.origin}/outside.html` });
  site.set('/gamma.html', { body: html('Gamma', `gammaword ${prose(83, 6)}`) });
  site.set('/private/secret.html', { body: html('Secret', `secretword ${prose(84, 6)}`) });
  site.set('/deep/one.html', { body: html('Deep one', `deeponeword ${prose(85, 6)}`, ['two.html']) });
  site.set('/deep/two.html', { body: html('Deep two', `deeptwoword ${prose(86, 6)}`) });
  site.set('/notes.txt', { type: 'text/plain', validators: 'none', body: `notesword ${prose(88, 6)}` });
}

async function start(tier: 'PRO' | 'FREE' = 'PRO', network?: LoopbackNetwork): Promise<void> {
  const modelDir = mkdtempSync(path.join(os.tmpdir(), 'hearth-web-models-'));
  await installTinyEmbeddingModel(modelDir);
  t = await startApp({ ...LICENSE_ENV, MODEL_DIR: modelDir }, undefined, undefined, [], network);
  if (tier === 'PRO') await applyLicense(t, 'PRO');
  admin = (await t.login()).access;
  editor = (await t.userWithRole('editor')).access;
  viewer = (await t.userWithRole('viewer')).access;
}

beforeAll(async () => {
  fixtures = mkdtempSync(path.join(os.tmpdir(), 'hearth-web-fixtures-'));
  pdf = readFileSync(await makePdf(fixtures, 2));
});

const siteConfig = (extra: Record<string, unknown> = {}) => ({ start_url: `${site.origin}/`, allow_private_network: true, ...extra });

const create = (config: Record<string, unknown>, extra: Record<string, unknown> = {}, token = admin) =>
  t.request({ method: 'POST', url: '/api/integrations', token, payload: { name: `site-${Math.random().toString(36).slice(2)}`, kind: 'web', config, ...extra } });

async function created(config: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<string> {
  const res = await create(config, extra);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().id;
}

/** Starts a sync, waits for every job, and returns the finished job. */
async function sync(id: string, token = editor) {
  const res = await t.request({ method: 'POST', url: `/api/integrations/${id}/sync`, token });
  expect(res.statusCode, res.body).toBe(202);
  expect(res.json()).toMatchObject({ type: 'integration.sync', subject: { integration_id: id } });
  await t.app.jobs.idle();
  return (await t.request({ method: 'GET', url: `/api/jobs/${res.json().id}`, token: viewer })).json();
}

interface Doc { id: string; source_path: string; status: string; updated_at: string; indexed_at: string; sha256: string }
async function documents(id: string): Promise<Doc[]> {
  const res = await t.request({ method: 'GET', url: `/api/docs?source_id=${id}&limit=500&sort=filename&order=asc`, token: viewer });
  return res.json().documents;
}
const pathsOf = (docs: Doc[]) => docs.map((doc) => new URL(doc.source_path).pathname).sort();
const search = async (query: string) =>
  (await t.request({ method: 'POST', url: '/api/search', token: viewer, payload: { query, mode: 'keyword', k: 5 } })).json().results as { document_id: string }[];
/** The pages a sync skipped, with the reason it logged. */
const skippedPages = () =>
  t.logs().split('\n').filter((line) => line.includes('"integration page skipped"')).map((line) => JSON.parse(line) as { url: string; reason: string });
const conditional = (request: { headers: Record<string, unknown> }) => Boolean(request.headers['if-none-match'] || request.headers['if-modified-since']);

describe('the website crawler', () => {
  beforeEach(async () => {
    await buildSite();
    await start();
  });
  afterEach(async () => {
    await t.close();
    await site.close();
    await outside.close();
  });

  it('indexes exactly the allowed same-origin pages: robots.txt, sitemap index, redirects and depth honoured', async () => {
    const id = await created(siteConfig({ sitemap_url: `${site.origin}/sitemap.xml` }));
    const job = await sync(id);
    expect(job).toMatchObject({ state: 'succeeded' });

    const docs = await documents(id);
    expect(pathsOf(docs)).toEqual(['/', '/alpha.html', '/beta.html', '/deep/one.html', '/gamma.html', '/notes.txt', '/report.pdf']);
    expect(docs.every((doc) => doc.status === 'indexed')).toBe(true);
    expect(site.paths().some((p) => p.startsWith('/private/'))).toBe(false);
    expect(site.paths()).not.toContain('/deep/two.html');
    expect(site.paths().filter((p) => p === '/alpha.html')).toHaveLength(1);
    expect(site.paths()[0]).toBe('/robots.txt');
    expect(site.requests.every((r) => r.headers['user-agent'] === `HearthBot/${VERSION}`)).toBe(true);
    expect(outside.requests).toEqual([]);

    for (const word of ['homeword', 'alphaword', 'betaword', 'gammaword', 'deeponeword', 'notesword', 'page2']) {
      const results = await search(word);
      expect(results.length, word).toBeGreaterThan(0);
      expect(docs.map((doc) => doc.id)).toContain(results[0].document_id);
    }
    for (const word of ['secretword', 'deeptwoword', 'outsideword']) expect(await search(word), word).toEqual([]);

    const view = (await t.request({ method: 'GET', url: `/api/integrations/${id}`, token: viewer })).json();
    expect(view).toMatchObject({ document_count: 7, credentials_set: false, enabled: true });
    expect(view.last_sync_at).not.toBeNull();
  });

  it('syncs incrementally: unchanged pages re-index nothing, a changed page is re-indexed, a removed one deleted', async () => {
    const id = await created(siteConfig({ sitemap_url: `${site.origin}/sitemap.xml` }));
    await sync(id);
    const first = await documents(id);
    const chunks = await snapshot(t.app, 'chunks');

    site.requests.length = 0;
    expect((await sync(id)).state).toBe('succeeded');
    expect(await documents(id)).toEqual(first);
    expect(await snapshot(t.app, 'chunks')).toEqual(chunks);
    const seen = (p: string) => site.requests.find((r) => r.path === p)!;
    expect(seen('/').headers['if-none-match']).toMatch(/^"/);
    expect(seen('/beta.html').headers['if-modified-since']).toMatch(/GMT$/);
    expect(conditional(seen('/report.pdf'))).toBe(true);
    expect(conditional(seen('/notes.txt'))).toBe(false); // no validators: unchanged by content hash

    site.set('/beta.html', { validators: 'last-modified', body: html('Beta', `betanewword ${prose(87, 6)}`) });
    site.remove('/alpha.html');
    expect((await sync(id)).state).toBe('succeeded');
    const third = await documents(id);
    expect(pathsOf(third)).toEqual(['/', '/beta.html', '/gamma.html', '/notes.txt', '/report.pdf']);
    const byPath = (docs: Doc[], p: string) => docs.find((doc) => doc.source_path === `${site.origin}${p}`)!;
    expect(byPath(third, '/beta.html').updated_at > byPath(first, '/beta.html').updated_at).toBe(true);
    expect(byPath(third, '/beta.html').status).toBe('indexed');
    for (const p of ['/', '/gamma.html', '/notes.txt', '/report.pdf']) expect(byPath(third, p)).toEqual(byPath(first, p));
    expect((await search('betanewword')).map((r) => r.document_id)).toContain(byPath(third, '/beta.html').id);
    expect(await search('betaword')).toEqual([]);
    expect(await search('alphaword')).toEqual([]);
    expect(await search('deeponeword')).toEqual([]); // only alpha linked to it
    const pages = await t.app.db.selectFrom('integration_pages').select('url').where('integration_id', '=', id).execute();
    expect(pages.map((page) => new URL(page.url).pathname).sort()).toEqual(pathsOf(third));
  });

  it('respects max_depth and max_pages, and a sitemap alone can seed the crawl', async () => {
    const id = await created(siteConfig({ max_depth: 1 }));
    await sync(id);
    expect(pathsOf(await documents(id))).toEqual(['/', '/alpha.html', '/beta.html', '/gamma.html', '/report.pdf']);

    const put = (config: Record<string, unknown>) => t.request({ method: 'PUT', url: `/api/integrations/${id}`, token: admin, payload: { config } });
    expect((await put(siteConfig({ max_depth: 0 }))).statusCode).toBe(200);
    await sync(id);
    expect(pathsOf(await documents(id))).toEqual(['/']);

    expect((await put(siteConfig({ max_pages: 2 }))).json().config).toMatchObject({ max_pages: 2, max_depth: 2 });
    site.requests.length = 0;
    await sync(id);
    expect(pathsOf(await documents(id))).toEqual(['/', '/alpha.html']);
    expect(site.paths().filter((p) => p !== '/robots.txt')).toEqual(['/', '/alpha.html']);

    const sitemapOnly = await created({ sitemap_url: `${site.origin}/sitemap.xml`, max_depth: 0, allow_private_network: true });
    await sync(sitemapOnly);
    expect(pathsOf(await documents(sitemapOnly))).toEqual(['/', '/notes.txt']);
  });

  it('on FREE, HTML pages are not indexed but their links are still followed; the sync counts them, says why, and warns with the remedy', async () => {
    await t.close();
    await start('FREE');
    const id = await created(siteConfig({ sitemap_url: `${site.origin}/sitemap.xml` }));
    const job = await sync(id);
    expect(job.state).toBe('succeeded');
    expect(pathsOf(await documents(id))).toEqual(['/notes.txt', '/report.pdf']);
    // Five HTML pages (/, alpha, beta, gamma, deep/one) need PRO; /private/ (robots.txt) and /to-outside (off the site) are not crawled.
    expect(job.result).toMatchObject({
      state: 'succeeded',
      found: 7,
      changed: 2,
      unchanged: 0,
      removed: 0,
      excluded: 2,
      skipped: { plan_document_limit: 0, plan_storage_limit: 0, tier_required: 5, unsupported_type: 0, too_large: 0 },
      skipped_total: 5,
    });
    expect(job.result.summary).toBe(
      '7 pages, 2 new or changed, 0 unchanged, 0 removed, 2 not crawled (robots.txt, off the site, refused, or gone); ' +
        '5 not indexed: 5 of a type a higher plan indexes. To index them: apply a PRO licence',
    );
    const warnings = t.logs().split('\n').filter((line) => line.includes('"level":40') && line.includes(id));
    expect(warnings.some((line) => line.includes('plan or tier') && line.includes('apply a PRO licence'))).toBe(true);

    // The integration shows its last sync, in the list too, and keeps it across a restart.
    const view = (await t.request({ method: 'GET', url: `/api/integrations/${id}`, token: viewer })).json();
    expect(view.last_sync).toEqual(job.result);
    expect((await t.request({ method: 'GET', url: '/api/integrations', token: viewer })).json().integrations[0].last_sync).toEqual(job.result);
    t = await t.restart();
    expect((await t.request({ method: 'GET', url: `/api/integrations/${id}`, token: viewer })).json()).toMatchObject({ last_sync: job.result, last_sync_at: view.last_sync_at });
  });

  it('refuses non-public addresses at create time unless allowed, and metadata addresses always', async () => {
    const port = new URL(site.origin).port;
    const before = await snapshot(t.app, 'integrations');
    const refused = async (config: Record<string, unknown>, field = 'body.config.start_url') => {
      const res = await create(config);
      expect(res.statusCode, JSON.stringify(config)).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'url_not_allowed', field });
    };
    for (const host of ['127.0.0.1', 'localhost', '[::1]', '169.254.169.254', '[::ffff:127.0.0.1]', '0.0.0.0', '10.1.2.3', '192.168.1.20', '2130706433']) {
      await refused({ start_url: `http://${host}:${port}/` });
    }
    await refused({ sitemap_url: `http://127.0.0.1:${port}/sitemap.xml` }, 'body.config.sitemap_url');
    for (const url of ['http://169.254.169.254/latest/meta-data/', 'http://metadata.google.internal/', 'http://[fd00:ec2::254]/', `http://user:pw@127.0.0.1:${port}/`]) {
      await refused({ start_url: url, allow_private_network: true });
    }
    expect(await snapshot(t.app, 'integrations')).toEqual(before);
    expect(site.requests).toEqual([]);
    expect((await create({ start_url: `http://localhost:${port}/`, allow_private_network: true })).statusCode).toBe(201);
  });

  it('re-checks at sync time, and refuses every redirect to a forbidden target', async () => {
    const o = site.origin;
    const id = await created(siteConfig());
    // The admin turned LAN access off after creating it (or the name now resolves to a private address).
    const row = await t.app.db.selectFrom('integrations').select('config').where('id', '=', id).executeTakeFirstOrThrow();
    await t.app.db.updateTable('integrations').set({ config: JSON.stringify({ ...JSON.parse(row.config), allow_private_network: false }) }).where('id', '=', id).execute();
    const blocked = await sync(id);
    expect(blocked.state).toBe('failed');
    expect(blocked.error).toMatch(/not allowed.*loopback/);
    expect(site.requests).toEqual([]);

    site.set('/to-metadata', { location: 'http://169.254.169.254/latest/meta-data/' });
    site.set('/to-google', { location: 'http://metadata.google.internal/computeMetadata/v1/' });
    site.set('/to-v6-metadata', { location: 'http://[fd00:ec2::254]/' });
    site.set('/to-file', { location: 'file:///etc/passwd' });
    site.set('/to-creds', { location: `${o.replace('http://', 'http://user:pw@')}/beta.html` });
    site.set('/links.html', { body: html('Links', `linksword ${prose(89, 6)}`, ['/to-metadata', '/to-google', '/to-v6-metadata', '/to-file', '/to-creds', '/beta.html']) });

    const direct = await sync(await created({ start_url: `${o}/to-metadata`, allow_private_network: true }));
    expect(direct.state).toBe('failed');
    expect(direct.error).toMatch(/not allowed.*metadata/);

    const linked = await created({ start_url: `${o}/links.html`, allow_private_network: true });
    expect((await sync(linked)).state).toBe('succeeded');
    expect(pathsOf(await documents(linked))).toEqual(['/beta.html', '/links.html']);
    expect(site.paths().filter((p) => p === '/beta.html')).toHaveLength(1);
  });

  it('credentials are sealed, write-only, never logged, and sent to the site as Basic or Bearer auth', async () => {
    const basic = `Basic ${Buffer.from(`crawler:${PASSWORD}`).toString('base64')}`;
    site.requireAuthorization(basic);
    const res = await create(siteConfig(), { credentials: { username: 'crawler', password: PASSWORD } });
    expect(res.statusCode).toBe(201);
    expect(res.json().credentials_set).toBe(true);
    expect(res.body).not.toContain(PASSWORD);
    const id = res.json().id;

    const row = await t.app.db.selectFrom('integrations').selectAll().where('id', '=', id).executeTakeFirstOrThrow();
    expect(row.credentials_sealed).toMatch(/^v1\./);
    expect(JSON.stringify(row)).not.toContain(PASSWORD);
    expect(JSON.parse(t.app.secretBox.open(row.credentials_sealed!, `integration:${id}`))).toEqual({ username: 'crawler', password: PASSWORD });

    expect((await sync(id)).state).toBe('succeeded');
    expect((await documents(id)).length).toBe(6);
    expect(site.requests.every((r) => r.headers.authorization === basic)).toBe(true);
    expect(outside.requests).toEqual([]);

    const put = await t.request({ method: 'PUT', url: `/api/integrations/${id}`, token: admin, payload: { credentials: { bearer_token: TOKEN } } });
    expect(put.statusCode).toBe(200);
    expect(put.body).not.toContain(TOKEN);
    site.requireAuthorization(`Bearer ${TOKEN}`);
    site.requests.length = 0;
    expect((await sync(id)).state).toBe('succeeded');
    expect(site.requests.length).toBeGreaterThan(0);
    expect(site.requests.every((r) => r.headers.authorization === `Bearer ${TOKEN}`)).toBe(true);

    for (const url of [`/api/integrations/${id}`, '/api/integrations']) {
      const got = await t.request({ method: 'GET', url, token: admin });
      expect(got.body).not.toContain(TOKEN);
      expect(got.body).toContain('"credentials_set":true');
    }
    const cleared = await t.request({ method: 'PUT', url: `/api/integrations/${id}`, token: admin, payload: { credentials: null } });
    expect(cleared.json().credentials_set).toBe(false);
    expect((await t.app.db.selectFrom('integrations').select('credentials_sealed').where('id', '=', id).executeTakeFirstOrThrow()).credentials_sealed).toBeNull();
    for (const secret of [PASSWORD, TOKEN, basic.slice(6)]) expect(t.logs()).not.toContain(secret);
  });

  it('roles: viewers read, editors sync, admins manage; anonymous callers get 401', async () => {
    const id = await created(siteConfig({ max_depth: 0 }));
    const body = { name: 'another', kind: 'web', config: siteConfig() };
    const calls = [
      { method: 'GET', url: '/api/integrations' },
      { method: 'GET', url: `/api/integrations/${id}` },
      { method: 'POST', url: '/api/integrations', payload: body },
      { method: 'PUT', url: `/api/integrations/${id}`, payload: { name: 'renamed' } },
      { method: 'DELETE', url: `/api/integrations/${id}` },
      { method: 'POST', url: `/api/integrations/${id}/sync` },
    ] as const;
    const before = await snapshot(t.app, 'integrations');
    for (const call of calls) expect((await t.request({ ...call })).statusCode, `${call.method} ${call.url}`).toBe(401);
    const asViewer = await Promise.all(calls.map((call) => t.request({ ...call, token: viewer })));
    expect(asViewer.map((res) => res.statusCode)).toEqual([200, 200, 403, 403, 403, 403]);
    expect(asViewer[3].json().error.code).toBe('role_required');
    const asEditor = await Promise.all(calls.slice(2, 5).map((call) => t.request({ ...call, token: editor })));
    expect(asEditor.map((res) => res.statusCode)).toEqual([403, 403, 403]);
    expect(await snapshot(t.app, 'integrations')).toEqual(before);

    // A second request while the sync is queued or running joins it instead of crawling twice.
    const first = await t.request({ method: 'POST', url: `/api/integrations/${id}/sync`, token: editor });
    const second = await t.request({ method: 'POST', url: `/api/integrations/${id}/sync`, token: admin });
    expect([first.statusCode, second.statusCode]).toEqual([202, 202]);
    expect(second.json().id).toBe(first.json().id);
    await t.app.jobs.idle();
    expect(site.paths().filter((p) => p === '/')).toHaveLength(1);
    const list = (await t.request({ method: 'GET', url: '/api/integrations', token: viewer })).json();
    expect(list).toMatchObject({ total: 1, integrations: [{ id, document_count: 1, kind: 'web', config: { max_depth: 0, max_pages: 200, allow_private_network: true } }] });
  });

  it('refuses bad input with 400 (404, 409) and changes nothing', async () => {
    const taken = await created(siteConfig(), { name: 'taken' });
    const before = [await snapshot(t.app, 'integrations'), await snapshot(t.app, 'integration_pages')];
    const start_url = `${site.origin}/`;
    const cases: [Record<string, unknown>, string][] = [
      [{}, 'body.name'],
      [{ name: 'x', kind: 'ftp', config: siteConfig() }, 'body.kind'],
      [{ name: 'x', kind: 'web', config: { allow_private_network: true } }, 'body.config.start_url'],
      [{ name: 'x', kind: 'web', config: siteConfig({ max_depth: 11 }) }, 'body.config.max_depth'],
      [{ name: 'x', kind: 'web', config: siteConfig({ max_pages: 0 }) }, 'body.config.max_pages'],
      [{ name: 'x', kind: 'web', config: siteConfig({ max_pages: 10_001 }) }, 'body.config.max_pages'],
      [{ name: 'x', kind: 'web', config: { start_url: 'ftp://127.0.0.1/', allow_private_network: true } }, 'body.config.start_url'],
      [{ name: 'x', kind: 'web', config: { start_url: 'not a url' } }, 'body.config.start_url'],
      [{ name: 'x', kind: 'web', config: siteConfig({ depth: 3 }) }, 'body.config.depth'],
      [{ name: 'x', kind: 'web', config: siteConfig({ sitemap_url: start_url.replace('127.0.0.1', 'localhost') + 'sitemap.xml' }) }, 'body.config.sitemap_url'],
      [{ name: ' padded ', kind: 'web', config: siteConfig() }, 'body.name'],
      [{ name: 'x', kind: 'web', config: siteConfig(), extra: true }, 'body.extra'],
      [{ name: 'x', kind: 'web', config: siteConfig(), credentials: { username: 'a' } }, 'body.credentials'],
      [{ name: 'x', kind: 'web', config: siteConfig(), credentials: { username: 'a', password: 'b', bearer_token: 'c' } }, 'body.credentials'],
    ];
    for (const [payload, field] of cases) {
      const res = await t.request({ method: 'POST', url: '/api/integrations', token: admin, payload });
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().error.code, JSON.stringify(payload)).toBe('validation_failed');
      expect(res.json().error.field?.startsWith(field), `${JSON.stringify(payload)} -> ${res.json().error.field}`).toBe(true);
    }
    const malformed = await t.request({ method: 'POST', url: '/api/integrations', token: admin, headers: { 'content-type': 'application/json' }, payload: '{"name":' });
    expect(malformed.json().error.code).toBe('malformed_json');
    const duplicate = await create(siteConfig(), { name: 'TAKEN' });
    expect([duplicate.statusCode, duplicate.json().error.code]).toEqual([409, 'integration_name_taken']);

    const put = (id: string, payload: unknown) => t.request({ method: 'PUT', url: `/api/integrations/${id}`, token: admin, payload: payload as object });
    expect((await put(taken, {})).statusCode).toBe(400);
    expect((await put(taken, { config: { start_url } })).json().error.code).toBe('url_not_allowed');
    expect((await put(taken, { kind: 'web' })).json().error.field).toBe('body.kind');
    for (const [method, suffix] of [['GET', ''], ['PUT', ''], ['DELETE', ''], ['POST', '/sync']] as const) {
      const res = await t.request({ method, url: `/api/integrations/nope${suffix}`, token: admin, ...(method === 'PUT' ? { payload: { name: 'y' } } : {}) });
      expect(res.statusCode, `${method} ${suffix}`).toBe(404);
    }
    expect([await snapshot(t.app, 'integrations'), await snapshot(t.app, 'integration_pages')]).toEqual(before);
    expect(site.requests).toEqual([]);
  });

  it('a cancelled sync stops at once, mid-request, and removes nothing', async () => {
    const id = await created(siteConfig({ max_depth: 1 }));
    await sync(id);
    const before = await documents(id);
    site.set('/alpha.html', { hang: true });
    const started = await t.request({ method: 'POST', url: `/api/integrations/${id}/sync`, token: editor });
    await vi.waitFor(() => expect(site.paths().filter((p) => p === '/alpha.html')).toHaveLength(2));
    const cancelled = await t.request({ method: 'POST', url: `/api/jobs/${started.json().id}/cancel`, token: editor });
    expect(cancelled.statusCode).toBe(202);
    const waited = Date.now();
    await t.app.jobs.idle();
    expect(Date.now() - waited).toBeLessThan(5000);
    expect((await t.request({ method: 'GET', url: `/api/jobs/${started.json().id}`, token: viewer })).json().state).toBe('cancelled');
    expect(await documents(id)).toEqual(before);
  });

  it('a sync interrupted by a stop of the service runs again at the next start, and completes', async () => {
    const id = await created(siteConfig({ sitemap_url: `${site.origin}/sitemap.xml` }));
    const alpha = { body: html('Alpha', `alphaword ${prose(81, 6)}`, ['deep/one.html']) };
    site.set('/alpha.html', { hang: true });
    const started = await t.request({ method: 'POST', url: `/api/integrations/${id}/sync`, token: editor });
    expect(started.statusCode).toBe(202);
    await vi.waitFor(() => expect(site.paths()).toContain('/alpha.html'));
    site.set('/alpha.html', alpha);
    t = await t.restart();
    await t.app.jobs.idle();

    const jobs = (await t.request({ method: 'GET', url: '/api/jobs?type=integration.sync', token: viewer })).json().jobs;
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({ state: 'succeeded', subject: { integration_id: id }, result: { state: 'succeeded' } });
    const docs = await documents(id);
    expect(pathsOf(docs)).toEqual(['/', '/alpha.html', '/beta.html', '/deep/one.html', '/gamma.html', '/notes.txt', '/report.pdf']);
    expect(docs.every((doc) => doc.status === 'indexed')).toBe(true);
    const view = (await t.request({ method: 'GET', url: `/api/integrations/${id}`, token: viewer })).json();
    expect(view.last_sync_at).not.toBeNull();
    expect(view.last_sync).toEqual(jobs[0].result);
    expect(t.logs()).toContain('resuming integration syncs interrupted by a restart');
  });

  it('deleting an integration removes its documents, chunks and vectors; a disabled one does not sync', async () => {
    const id = await created(siteConfig({ max_depth: 1 }));
    await sync(id);
    const docs = await documents(id);
    expect(docs.length).toBe(5);
    const vectors = t.app.activeEmbedding.vectors()!.size();
    expect(vectors).toBeGreaterThan(0);

    const res = await t.request({ method: 'DELETE', url: `/api/integrations/${id}`, token: admin });
    expect(res.statusCode).toBe(204);
    expect(await documents(id)).toEqual([]);
    expect(await t.app.db.selectFrom('chunks').selectAll().where('document_id', 'in', docs.map((doc) => doc.id)).execute()).toEqual([]);
    expect(t.app.activeEmbedding.vectors()!.size()).toBe(0);
    expect(await t.app.db.selectFrom('integration_pages').selectAll().execute()).toEqual([]);
    expect(await search('alphaword')).toEqual([]);
    expect((await t.request({ method: 'GET', url: `/api/integrations/${id}`, token: viewer })).statusCode).toBe(404);

    const disabled = await created(siteConfig(), { enabled: false });
    const refused = await t.request({ method: 'POST', url: `/api/integrations/${disabled}/sync`, token: editor });
    expect(refused.statusCode).toBe(409);
    expect(refused.json().error.code).toBe('integration_disabled');
  });
});

describe('the SSRF guard on every request of a crawl', () => {
  let network: LoopbackNetwork;
  beforeEach(async () => buildSite());
  afterEach(async () => {
    await t.close();
    await site.close();
    await outside.close();
  });

  it('refuses loopback and metadata addresses in every embedded-IPv4 form at create time, DNS answers included', async () => {
    network = loopbackNetwork({ 'nat64-metadata.test': ['64:ff9b::a9fe:a9fe'], 'compat-loopback.test': ['::7f00:1'] });
    await start('PRO', network);
    const port = new URL(site.origin).port;
    const before = await snapshot(t.app, 'integrations');
    const refused = async (config: Record<string, unknown>, reason: RegExp) => {
      const res = await create(config);
      expect(res.statusCode, JSON.stringify(config)).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'url_not_allowed', field: 'body.config.start_url', message: expect.stringMatching(reason) });
    };
    for (const host of ['[::7f00:1]', '[::127.0.0.1]', '[::ffff:0:7f00:1]', '[64:ff9b::7f00:1]', '[2002:7f00:1::]', 'compat-loopback.test']) {
      await refused({ start_url: `http://${host}:${port}/` }, /loopback|6to4/);
    }
    for (const url of [
      'http://[::a9fe:a9fe]/latest/meta-data/', 'http://[64:ff9b::a9fe:a9fe]/latest/meta-data/', 'http://[64:ff9b:1::a9fe:a9fe]/',
      'http://[::ffff:0:a9fe:a9fe]/', 'http://[2002:a9fe:a9fe::]/', 'http://[fd20:ce::254]/', 'http://169.254.170.2/v2/credentials',
      'http://nat64-metadata.test/',
    ]) {
      await refused({ start_url: url, allow_private_network: true }, /metadata/);
    }
    expect(await snapshot(t.app, 'integrations')).toEqual(before);
    expect(site.requests).toEqual([]);
    expect(network.dialled).toEqual([]);
  });

  it('refuses a redirect to a NAT64, IPv4-compatible or other embedded form of metadata without connecting, even on an allowed LAN', async () => {
    network = loopbackNetwork();
    await start('PRO', network);
    const o = site.origin;
    const targets: Record<string, string> = {
      '/to-nat64': 'http://[64:ff9b::a9fe:a9fe]/latest/meta-data/',
      '/to-compat': 'http://[::a9fe:a9fe]/latest/meta-data/',
      '/to-translated': 'http://[::ffff:0:a9fe:a9fe]/latest/meta-data/',
      '/to-6to4': 'http://[2002:a9fe:a9fe::]/latest/meta-data/',
      '/to-ecs': 'http://169.254.170.2/v2/credentials',
    };
    for (const [from, location] of Object.entries(targets)) site.set(from, { location });
    site.set('/hops.html', { body: html('Hops', `hopsword ${prose(87, 6)}`, [...Object.keys(targets), '/beta.html']) });

    const direct = await sync(await created({ start_url: `${o}/to-nat64`, allow_private_network: true }));
    expect(direct.state).toBe('failed');
    expect(direct.error).toMatch(/not allowed.*metadata.*169\.254\.169\.254 in NAT64 form/);

    const linked = await created({ start_url: `${o}/hops.html`, allow_private_network: true });
    expect((await sync(linked)).state).toBe('succeeded');
    expect(pathsOf(await documents(linked))).toEqual(['/beta.html', '/hops.html']);
    const skipped = skippedPages().filter((page) => new URL(page.url).pathname in targets);
    expect(skipped.map((page) => new URL(page.url).pathname).sort()).toEqual(Object.keys(targets).sort());
    for (const page of skipped) expect(page.reason, page.url).toMatch(/not allowed.*metadata/);
    expect(new Set(network.dialled)).toEqual(new Set(['127.0.0.1']));
  });

  it('under the default allow_private_network: false, a public site that redirects to a loopback or private address is refused', async () => {
    // www.public.test has a public address; the test network serves it from the loopback site.
    network = loopbackNetwork({ 'www.public.test': ['93.184.216.34'], 'intranet.test': ['10.0.0.5'] }, ['93.184.216.34']);
    await start('PRO', network);
    const port = new URL(site.origin).port;
    const targets: Record<string, string> = {
      '/to-loopback': `http://127.0.0.1:${port}/secret.html`,
      '/to-lan': `http://intranet.test:${port}/secret.html`,
      '/to-mapped': `http://[::ffff:127.0.0.1]:${port}/secret.html`,
      '/to-compat': `http://[::7f00:1]:${port}/secret.html`,
      '/to-nat64': `http://[64:ff9b::7f00:1]:${port}/secret.html`,
    };
    for (const [from, location] of Object.entries(targets)) site.set(from, { location });
    site.set('/public.html', { body: html('Public', `publicword ${prose(87, 6)}`, [...Object.keys(targets), '/beta.html']) });
    site.set('/secret.html', { body: html('Secret', `secretword ${prose(84, 6)}`) });
    const publicSite = `http://www.public.test:${port}`;

    const res = await create({ start_url: `${publicSite}/public.html` });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().config.allow_private_network).toBe(false);
    expect((await sync(res.json().id)).state).toBe('succeeded');
    expect(pathsOf(await documents(res.json().id))).toEqual(['/beta.html', '/public.html']);
    const skipped = skippedPages().filter((page) => new URL(page.url).pathname in targets);
    expect(skipped.map((page) => new URL(page.url).pathname).sort()).toEqual(Object.keys(targets).sort());
    for (const page of skipped) expect(page.reason, page.url).toMatch(/not allowed.*allow_private_network is off/);

    const redirected = await sync(await created({ start_url: `${publicSite}/to-loopback` }));
    expect(redirected.state).toBe('failed');
    expect(redirected.error).toMatch(/not allowed: 127\.0\.0\.1 resolves to a loopback address \(allow_private_network is off\)/);
    expect(site.paths()).not.toContain('/secret.html');
    expect(new Set(network.dialled)).toEqual(new Set(['93.184.216.34']));
  });
});

describe('the SSRF guard and the fetcher', () => {
  beforeEach(async () => {
    site = await startSite();
    site.set('/page.html', { body: html('Page', 'pageword') });
  });
  afterEach(async () => site.close());

  const fixed = (table: Record<string, string[]>): Resolver => async (host) => {
    if (!table[host]) throw new Error('ENOTFOUND');
    return table[host].map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
  const closed = { allowPrivateNetwork: false };
  const lan = { allowPrivateNetwork: true };
  const refusal = (url: string, policy = closed, resolve?: Resolver) => checkUrl(new URL(url), policy, resolve).then(() => null, (error: Error) => error);

  it('refuses every non-public answer, mixed answers, metadata names, other schemes and embedded credentials', async () => {
    const dns = fixed({ 'public.test': ['93.184.216.34'], 'mixed.test': ['93.184.216.34', '10.0.0.7'], 'v6.test': ['fe80::1'], 'mapped.test': ['::ffff:127.0.0.1'], 'cgnat.test': ['100.64.0.1'], 'meta.test': ['169.254.169.254'] });
    expect(await checkUrl(new URL('http://public.test/'), closed, dns)).toEqual({ address: '93.184.216.34', family: 4 });
    for (const host of ['mixed.test', 'v6.test', 'mapped.test', 'cgnat.test', 'meta.test']) expect(await refusal(`http://${host}/`, closed, dns), host).toBeInstanceOf(UrlNotAllowed);
    expect(await refusal('http://mixed.test/', lan, dns)).toBeNull();
    expect(await refusal('http://meta.test/', lan, dns)).toBeInstanceOf(UrlNotAllowed);
    let asked = 0;
    const counting: Resolver = async () => (asked++, [{ address: '93.184.216.34', family: 4 }]);
    for (const url of ['http://metadata.google.internal/', 'http://METADATA.google.internal./x', 'http://[fd00:ec2::254]/', 'http://169.254.169.254/']) {
      expect(await refusal(url, lan, counting), url).toBeInstanceOf(UrlNotAllowed);
    }
    expect(asked).toBe(0);
    for (const url of ['file:///etc/passwd', 'ftp://public.test/', 'gopher://public.test/', 'http://user:pw@public.test/', 'http://user@public.test/']) {
      expect(await refusal(url, lan, dns), url).toBeInstanceOf(UrlNotAllowed);
    }
    expect(await refusal('http://nowhere.test/', lan, dns)).toBeInstanceOf(UrlUnresolvable);
    // The real resolver: localhost is loopback whichever address family answers.
    expect(await refusal('http://localhost/')).toBeInstanceOf(UrlNotAllowed);
    expect(addressRefusal('8.8.8.8', closed)).toBeNull();
    expect(addressRefusal('2001:4860:4860::8888', closed)).toBeNull();
    for (const address of ['127.0.0.1', '::1', '10.1.1.1', '172.16.0.1', '192.168.0.1', '169.254.1.1', 'fe80::1', 'fc00::1', '0.0.0.0', '::', '224.0.0.1', 'ff02::1']) {
      expect(addressRefusal(address, closed), address).not.toBeNull();
    }
  });

  it('connects to the address it checked (no second DNS answer) and checks every redirect hop again', async () => {
    const port = new URL(site.origin).port;
    // A rebinding name: the first answer is allowed, every later one is the metadata address.
    const rebinding = () => {
      let calls = 0;
      const resolve: Resolver = async () => [{ address: calls++ === 0 ? '127.0.0.1' : '169.254.169.254', family: 4 }];
      return { resolve, calls: () => calls };
    };
    const dir = mkdtempSync(path.join(os.tmpdir(), 'hearth-fetch-'));
    const first = rebinding();
    const ok = await guardedFetch(new URL(`http://rebind.test:${port}/page.html`), { policy: lan, headers: {}, saveTo: path.join(dir, 'a'), network: { ...systemNetwork, resolve: first.resolve } });
    expect(ok.kind).toBe('ok');
    expect(first.calls()).toBe(1);
    expect(site.requests[0].headers.host).toBe(`rebind.test:${port}`);

    site.set('/hop', { location: `http://rebind.test:${port}/page.html` });
    const second = rebinding();
    const hop = guardedFetch(new URL(`http://rebind.test:${port}/hop`), { policy: lan, headers: {}, saveTo: path.join(dir, 'b'), network: { ...systemNetwork, resolve: second.resolve } });
    await expect(hop).rejects.toThrow(/metadata/);
    expect(second.calls()).toBe(2);
    expect(site.paths()).toEqual(['/page.html', '/hop']);

    // Credentials go only to the first origin, and a sameOriginOnly fetch never leaves it.
    site.set('/away', { location: `http://localhost:${port}/page.html` });
    const credentials = { origin: site.origin, headers: { authorization: 'Bearer x' } };
    const away = await guardedFetch(new URL(`${site.origin}/away`), { policy: lan, headers: {}, credentials, saveTo: path.join(dir, 'c'), sameOriginOnly: true });
    expect(away).toMatchObject({ kind: 'off_origin' });
    const followed = await guardedFetch(new URL(`${site.origin}/away`), { policy: lan, headers: {}, credentials, saveTo: path.join(dir, 'd') });
    expect(followed.kind).toBe('ok');
    expect(site.requests.slice(-3).map((r) => [r.path, r.headers.authorization])).toEqual([['/away', 'Bearer x'], ['/away', 'Bearer x'], ['/page.html', undefined]]);
  });

  it('caps the response size, times out, and gives up after 5 redirects', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'hearth-fetch-'));
    const fetchFrom = (p: string, extra: Partial<FetchOptions> = {}) =>
      guardedFetch(new URL(`${site.origin}${p}`), { policy: lan, headers: {}, saveTo: path.join(dir, p.replace(/\W/g, '_')), ...extra });
    site.set('/big.txt', { type: 'text/plain', body: 'x'.repeat(5000) });
    expect(await fetchFrom('/big.txt', { maxBytes: 1000 })).toMatchObject({ kind: 'too_large' });
    expect(existsSync(path.join(dir, '_big_txt'))).toBe(false);
    expect(await fetchFrom('/big.txt', { maxBytes: 5000 })).toMatchObject({ kind: 'ok', size: 5000 });

    site.set('/slow', { hang: true });
    const started = Date.now();
    await expect(fetchFrom('/slow', { timeoutMs: 300 })).rejects.toBeInstanceOf(FetchError);
    expect(Date.now() - started).toBeLessThan(5000);

    for (let i = 0; i < 7; i++) site.set(`/r${i}`, { location: `/r${i + 1}` });
    site.set('/r7', { body: 'end' });
    await expect(fetchFrom('/r0')).rejects.toThrow(/more than 5 redirects/);
    expect(await fetchFrom('/r2')).toMatchObject({ kind: 'ok' });
    expect(await fetchFrom('/missing')).toMatchObject({ kind: 'status', status: 404 });
  });

  it('reads links only from <a href> (against <base>), and sitemaps and their indexes', () => {
    const page = '<html><head><base href="/docs/"></head><body><a href="a.html#x">a</a><a href="https://other.test/b">b</a>' +
      '<script>var s = \'<a href="/script.html">\';</script><!-- <a href="/comment.html"> --><link href="/style.css"><img src="/i.png">' +
      '<a href="mailto:x@y.z">m</a><a>no href</a><a href="http://[bad">bad</a></body></html>';
    expect(linksOf(page, new URL('http://site.test/index.html')).map((url) => url.href)).toEqual(['http://site.test/docs/a.html', 'https://other.test/b']);
    const urlset = Buffer.from('<?xml version="1.0"?><urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9"><url><loc> http://s.test/a </loc></url></urlset>');
    expect(parseSitemap(urlset)).toEqual({ pages: ['http://s.test/a'], sitemaps: [] });
    const index = Buffer.from('<sm:sitemapindex xmlns:sm="http://www.sitemaps.org/schemas/sitemap/0.9"><sm:sitemap><sm:loc>http://s.test/1.xml</sm:loc></sm:sitemap><sm:sitemap><sm:loc>http://s.test/2.xml</sm:loc></sm:sitemap></sm:sitemapindex>');
    expect(parseSitemap(gzipSync(index))).toEqual({ pages: [], sitemaps: ['http://s.test/1.xml', 'http://s.test/2.xml'] });
    expect(parseSitemap(Buffer.from('not xml <<<'))).toEqual({ pages: [], sitemaps: [] });
    expect(filenameOf(new URL('http://s.test/'), 'text/html')).toBe('index.html');
    expect(filenameOf(new URL('http://s.test/page.php?x=1'), 'text/html; charset=utf-8')).toBe('page.php.html');
    expect(filenameOf(new URL('http://s.test/readme.md'), 'text/plain')).toBe('readme.md');
    expect(filenameOf(new URL('http://s.test/files/report'), 'application/pdf')).toBe('report.pdf');
  });
});
