/**
 * Soft term matching (SEARCH_SOFT_MATCH_CHUNKS, off by default): with the embedder shipped with Hearth (a token table)
 * hybrid search and the chat rank their first candidate documents by how closely each one's best chunk matches the
 * question word by word; keyword and vector modes, an ONNX embedder and a value of 0 leave it out, and
 * retrieval_settings.weights.soft says whether it ran. The real model, the real service, over HTTP.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.js';
import { installTinyEmbeddingModel } from '../fixtures/tiny-embedding-model.js';
import { multipartBody } from '../fixtures/multipart.js';
import { scratchFolders } from '../fixtures/scratch-folders.js';
import { startApp, type TestApp } from '../helpers.js';

const tmp = scratchFolders('hearth-soft-match-');

/** Paragraphs of one topic that say little: they dilute a long document's vectors as real manuals' sections do. */
const filler = (topic: string, sections: number) =>
  Array.from({ length: sections }, (_, i) => `Section ${i + 1} about ${topic}. ` + `This part covers ${topic} settings, defaults, history and examples of ${topic} use in daily operation. `.repeat(12)).join('\n\n');

/** apt-guide.txt answers the question in one line of a long document, in other words than the question's. */
const DOCS: Record<string, string> = {
  'apt-guide.txt': [filler('installing programs', 2), 'Updating the index. Run apt update to download the newest lists of packages from every configured mirror; nothing is upgraded by it.', filler('removing programs', 2)].join('\n\n'),
  'sources.txt': 'Software sources. A software source is a line in sources.list naming a mirror, a release and its components. Add a software source with add-apt-repository.',
  'catalogue.txt': 'The catalogue of a library lists every book on its shelves. Librarians refresh the catalogue each week from the new arrivals.',
  'mirror.txt': 'Mirror setup. A mirror copies another server. Configure the mirror to sync nightly and to keep two releases.',
  'upgrade.txt': 'Upgrading. Run apt upgrade to install newer versions of the packages already installed; it never removes anything.',
};
const QUESTION = 'fetch the latest package lists from all mirrors';

async function upload(t: TestApp, token: string): Promise<void> {
  for (const [filename, text] of Object.entries(DOCS)) {
    const res = await t.request({ method: 'POST', url: '/api/docs/upload', token, ...multipartBody([{ name: 'file', content: Buffer.from(text), filename }]) });
    expect(res.statusCode, res.body).toBe(202);
  }
  await t.app.jobs.idle();
}

const search = async (t: TestApp, token: string, payload: object) => {
  const res = await t.request({ method: 'POST', url: '/api/search', token, payload: { query: QUESTION, ...payload } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { results: Array<{ filename: string }>; retrieval_settings: { mode_used: string; weights: Record<string, number> } };
};

describe('soft term matching', () => {
  let t: TestApp | undefined;
  afterAll(() => t?.close());

  it('lifts the document whose line answers in other words, and says it ran; off again, the same data ranks it lower', async () => {
    t = await startApp({ HEARTH_DEFAULT_EMBEDDER: 'shipped', SEARCH_SOFT_MATCH_CHUNKS: '500' }, await tmp(), false);
    const editor = (await t.userWithRole('editor')).access;
    await upload(t, editor);
    const on = await search(t, editor, { k: 5 });
    expect(on.retrieval_settings).toMatchObject({ mode_used: 'hybrid', weights: { vector: 3, keyword: 1, document: 3, soft: 7 } });
    const placeOn = on.results.findIndex((result) => result.filename === 'apt-guide.txt');
    expect(placeOn, JSON.stringify(on.results.map((r) => r.filename))).toBeGreaterThanOrEqual(0);
    expect(placeOn).toBeLessThanOrEqual(1);
    // Keyword and vector modes rank one list each: no soft match.
    for (const mode of ['keyword', 'vector']) expect((await search(t, editor, { mode })).retrieval_settings.weights.soft).toBe(0);
    // The chat's retrieval runs it too, at its own weights.
    const chat = await t.request({ method: 'POST', url: '/api/chat', token: editor, payload: { query: QUESTION } });
    expect(chat.statusCode, chat.body).toBe(200);
    expect(chat.json().retrieval_settings.weights).toEqual({ vector: 1, keyword: 1, document: 4, soft: 7 });

    // The same data directory with soft matching off (the default).
    const dataDir = t.dataDir;
    await t.close();
    t = await startApp({ HEARTH_DEFAULT_EMBEDDER: 'shipped' }, dataDir, true);
    const off = await search(t, (await t.login()).access, { k: 5 });
    expect(off.retrieval_settings.weights.soft).toBe(0);
    expect(off.results.findIndex((result) => result.filename === 'apt-guide.txt')).toBeGreaterThan(placeOn + 1);
  });

  it('does not run with an embedder whose words take their sense from their neighbours (an ONNX model)', async () => {
    const modelDir = await tmp();
    await installTinyEmbeddingModel(modelDir);
    const onnx = await startApp({ HEARTH_DEFAULT_EMBEDDER: 'off', MODEL_DIR: modelDir, SEARCH_SOFT_MATCH_CHUNKS: '500' });
    try {
      const editor = (await onnx.userWithRole('editor')).access;
      await upload(onnx, editor);
      const res = await search(onnx, editor, {});
      expect(res.retrieval_settings).toMatchObject({ mode_used: 'hybrid', weights: { soft: 0 } });
      expect(res.results.length).toBeGreaterThan(0);
    } finally {
      await onnx.close();
    }
  });

  it('SEARCH_SOFT_MATCH_CHUNKS is 0 to 20000; anything else stops the start with the variable named', async () => {
    const base = { JWT_SECRET_KEY: 'x'.repeat(40), MFA_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'), DATA_DIR: await tmp() };
    expect(loadConfig(base).softMatch).toEqual({ chunks: 0 });
    expect(loadConfig({ ...base, SEARCH_SOFT_MATCH_CHUNKS: '1500' }).softMatch).toEqual({ chunks: 1500 });
    for (const bad of ['-1', '20001', 'lots', '1.5']) expect(() => loadConfig({ ...base, SEARCH_SOFT_MATCH_CHUNKS: bad }), bad).toThrow(/SEARCH_SOFT_MATCH_CHUNKS/);
  });
});
