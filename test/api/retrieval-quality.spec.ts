import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXTRACTIVE_PREFIX } from '../../plugins/chat/prompt.js';
import { multipartBody } from '../fixtures/multipart.js';
import { installTinyEmbeddingModel } from '../fixtures/tiny-embedding-model.js';
import { type TestApp, startApp } from '../helpers.js';

/** A handbook with a prose section and an option table. */
const HANDBOOK =
  '# Zephyrine harbour handbook\n\nThis handbook describes the harbour of the village and the services it offers to visiting crews.\n\n' +
  '## Berths\n\n### Mooring fees\n\nFees are paid at the office on arrival, in cash or by card, before the boat is tied up for the night.\n\n' +
  '## Tools\n\nThe archive tool has these options:\n' +
  '-x, --extract    extract files from an archive\n' +
  '-v, --verbose    list every file as it is processed\n' +
  '-C, --directory=DIR    change to directory DIR before extracting\n' +
  '-f, --file=ARCHIVE    use the archive file ARCHIVE\n';

/** A sentence that introduces, past a blank line, the command it speaks of (which shares no word with a question about it). */
const VAULT =
  '# Vault client notes\n\n## Credentials\n\nThe client caches each user\'s credentials for eight hours after a sign-in. To remove the cached credentials of every user:\n\n' +
  '    vaultctl purge --all-principals\n\nThe state folder of the service holds one entry per sign-in. Each entry records when it was created and which realm issued it. The realm list is read once at start.\n';

/** A passage whose only words in common with a question about it are single Han characters. */
const NUMERALS = '# Numerals\n\nKanji numerals such as 三 and 百 are left as written.\n';

const ORCHARD = '# Orchard notes\n\nThe orchard has forty apple trees and twelve pear trees; pruning happens in late winter before the buds open.\n';

/** A long log whose many chunks all mention the lighthouse lamp, and a short note that mentions it once. */
const LAMP_LOG = Array.from({ length: 12 }, (_, day) => `## Day ${day + 1}\n\n${`The lighthouse lamp was trimmed and its brass polished on day ${day + 1}. `.repeat(12)}\n`).join('\n');
const LAMP_NOTE = '# Keeper note\n\nThe spare lighthouse lamp is kept in the stone shed.\n';

describe('retrieval quality: fusion weights and extractive answers', () => {
  let t: TestApp;
  let viewer: string;
  let modelDir: string;

  beforeAll(async () => {
    modelDir = mkdtempSync(path.join(os.tmpdir(), 'hearth-quality-models-'));
    await installTinyEmbeddingModel(modelDir);
    t = await startApp({ MODEL_DIR: modelDir });
    const editor = (await t.userWithRole('editor')).access;
    viewer = (await t.userWithRole('viewer')).access;
    for (const [filename, content] of Object.entries({ 'handbook.md': HANDBOOK, 'vault.md': VAULT, 'numerals.md': NUMERALS, 'orchard.md': ORCHARD, 'lamp-log.md': LAMP_LOG, 'keeper-note.md': LAMP_NOTE })) {
      const res = await t.request({ method: 'POST', url: '/api/docs/upload', token: editor, ...multipartBody([{ name: 'file', content, filename }]) });
      expect(res.statusCode, res.body).toBe(202);
    }
    await t.app.jobs.idle();
  });
  afterAll(async () => {
    await t.close();
    rmSync(modelDir, { recursive: true, force: true });
  });

  it('fuses with the weights chosen on the evaluation (vector 2.5, keyword 2, whole documents 3; keyword 16 for a question in a passage\'s own words); reports them', async () => {
    const search = async (query: string) => {
      const res = await t.request({ method: 'POST', url: '/api/search', token: viewer, payload: { query } });
      expect(res.statusCode, res.body).toBe(200);
      return res.json();
    };
    const own = await search('mooring fees at the office');
    expect(own.retrieval_settings).toMatchObject({ mode_used: 'hybrid', fusion: 'rrf', rrf_k: 30, weights: { vector: 2.5, keyword: 16, document: 3 }, keyword_coverage: 1, per_document: 1 });
    expect(own.results[0].text).toContain('Fees are paid at the office');
    // Other words for the same thing: the first keyword chunk holds few of them, and the search's own weights stand.
    const paraphrase = await search('where do visiting crews pay to moor a boat overnight');
    expect(paraphrase.retrieval_settings.keyword_coverage).toBeGreaterThan(0);
    expect(paraphrase.retrieval_settings.keyword_coverage).toBeLessThan(0.6);
    expect(paraphrase.retrieval_settings.weights).toMatchObject({ vector: 2.5, keyword: 2, document: 3 });
    // Keyword-only and vector-only searches do not measure it.
    for (const mode of ['keyword', 'vector']) {
      const res = await t.request({ method: 'POST', url: '/api/search', token: viewer, payload: { query: 'mooring fees at the office', mode } });
      expect(res.json().retrieval_settings.keyword_coverage).toBeNull();
    }
  });

  it('finds documents: each document\'s best chunk comes before any second chunk (per_document 1); per_document 0 ranks passages alone', async () => {
    const search = async (payload: Record<string, unknown>) => {
      const res = await t.request({ method: 'POST', url: '/api/search', token: viewer, payload: { query: 'lighthouse lamp', k: 10, mode: 'keyword', ...payload } });
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as { results: Array<{ filename: string; chunk_id: string }>; retrieval_settings: { per_document: number } };
    };
    const diverse = await search({});
    expect(diverse.retrieval_settings.per_document).toBe(1);
    expect(new Set(diverse.results.slice(0, 2).map((r) => r.filename))).toEqual(new Set(['lamp-log.md', 'keeper-note.md']));
    // Nothing is dropped: the log's further chunks follow.
    expect(diverse.results.filter((r) => r.filename === 'lamp-log.md').length).toBeGreaterThan(1);

    const passages = await search({ per_document: 0 });
    expect(passages.retrieval_settings.per_document).toBe(0);
    const logChunks = passages.results.filter((r) => r.filename === 'lamp-log.md').length;
    expect(logChunks).toBeGreaterThan(2);
    // Uncapped, the log's many matching chunks lead: the note is not among the first two.
    expect(passages.results.slice(0, 2).map((r) => r.filename)).toEqual(['lamp-log.md', 'lamp-log.md']);

    const two = await search({ per_document: 2 });
    expect(two.results.slice(0, 3).filter((r) => r.filename === 'lamp-log.md').length).toBe(2);
  });

  it('refuses a per_document outside 0-50 or not an integer, with the one error shape', async () => {
    for (const per_document of [-1, 51, 1.5, 'one']) {
      const res = await t.request({ method: 'POST', url: '/api/search', token: viewer, payload: { query: 'lighthouse lamp', per_document } });
      expect(res.statusCode, String(per_document)).toBe(400);
      expect(res.json()).toMatchObject({ error: { code: expect.any(String), message: expect.stringContaining('per_document') } });
    }
  });

  it('keeps the chat\'s passages uncapped: a document\'s second chunk often holds the answer', async () => {
    const res = await t.request({ method: 'POST', url: '/api/chat', token: viewer, payload: { query: 'When was the lighthouse lamp trimmed?' } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().retrieval_settings.per_document).toBe(0);
  });

  it('answers without a chat model by quoting the line that answers, with its marker and place; the whole passage stays in sources', async () => {
    const res = await t.request({ method: 'POST', url: '/api/chat', token: viewer, payload: { query: 'Which archive tool option changes to another directory before extracting?' } });
    expect(res.statusCode, res.body).toBe(200);
    const { answer, sources, mode } = res.json() as { answer: string; mode: string; sources: Array<{ marker: number; text: string; heading?: string; filename: string }> };
    expect(mode).toBe('extractive');
    expect(answer.startsWith(EXTRACTIVE_PREFIX)).toBe(true);
    const tools = sources.find((source) => source.text.includes('--directory=DIR'))!;
    expect(tools.text).toContain('--verbose');
    expect(answer).toContain(`[${tools.marker}] handbook.md, ${tools.heading}:`);
    expect(answer).toContain('-C, --directory=DIR    change to directory DIR before extracting');
    expect(answer).not.toContain('--verbose');
    expect(answer).not.toContain('apple trees');
  });

  it('quotes what a quoted sentence introduces (a colon, "e.g.,"), past the blank line before it', async () => {
    const res = await t.request({ method: 'POST', url: '/api/chat', token: viewer, payload: { query: 'How do I remove the cached credentials of every user?' } });
    expect(res.statusCode, res.body).toBe(200);
    const { answer, sources } = res.json() as { answer: string; sources: Array<{ marker: number; filename: string; text: string }> };
    const vault = sources.find((source) => source.filename === 'vault.md')!;
    // One quote, sliced from the passage as written: the introducing sentence, the blank line, the command it introduces.
    const intro = 'To remove the cached credentials of every user:';
    const command = 'vaultctl purge --all-principals';
    const introduced = vault.text.slice(vault.text.indexOf(intro), vault.text.indexOf(command) + command.length);
    expect(introduced).toMatch(/^To remove .*:\n\n\s*vaultctl purge --all-principals$/);
    expect(answer).toContain(`${introduced}"`);
  });

  it('counts a lone character of another script (三, 百) as a word the question and a passage share', async () => {
    const res = await t.request({ method: 'POST', url: '/api/chat', token: viewer, payload: { query: 'Will the tool turn 三 or 百 into digits?' } });
    expect(res.statusCode, res.body).toBe(200);
    const { answer, sources } = res.json() as { answer: string; sources: Array<{ marker: number; filename: string }> };
    const numerals = sources.find((source) => source.filename === 'numerals.md');
    expect(numerals, 'the passage is a source').toBeDefined();
    expect(answer).toContain(`[${numerals!.marker}] numerals.md`);
    expect(answer).toContain('Kanji numerals such as 三 and 百 are left as written.');
  });
});
