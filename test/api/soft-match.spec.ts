/**
 * Soft term matching (SEARCH_SOFT_MATCH_CHUNKS for search, off by default; CHAT_SOFT_MATCH_CHUNKS for the chat's
 * retrieval, extractive or generated answers, on):
 * with the embedder shipped with Hearth (a token table) hybrid retrieval ranks its first candidate documents by how
 * closely each one's best chunk matches the question word by word; keyword and vector modes, an ONNX embedder and a
 * value of 0 leave it out, and retrieval_settings.weights.soft says whether it ran. The real model and service, over HTTP.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.js';
import { decodeWordIds } from '../../core/db/chunk-words.js';
import { contentWords } from '../../core/text/words.js';
import { importLlm } from '../../native/llm/index.js';
import { RetrievalRepository } from '../../plugins/retrieval/repository.sqlite.js';
import { STORIES_GGUF } from '../fixtures/models.js';
import { insertDocuments } from '../fixtures/search-data.js';
import { installTinyEmbeddingModel } from '../fixtures/tiny-embedding-model.js';
import { asBeforeMigration } from '../fixtures/older-schema.js';
import { scratchFolders } from '../fixtures/scratch-folders.js';
import { uploadTexts } from '../fixtures/upload-texts.js';
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

const upload = (t: TestApp, token: string) => uploadTexts(t, token, DOCS);

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
    expect(on.retrieval_settings).toMatchObject({ mode_used: 'hybrid', weights: { vector: 2.5, keyword: 2, document: 3, soft: 7 } });
    const placeOn = on.results.findIndex((result) => result.filename === 'apt-guide.txt');
    expect(placeOn, JSON.stringify(on.results.map((r) => r.filename))).toBeGreaterThanOrEqual(0);
    expect(placeOn).toBeLessThanOrEqual(1);
    // Keyword and vector modes rank one list each: no soft match.
    for (const mode of ['keyword', 'vector']) expect((await search(t, editor, { mode })).retrieval_settings.weights.soft).toBe(0);
    // The chat's retrieval runs it too (its extractive answers: no chat model here), at its own weights.
    const chat = await t.request({ method: 'POST', url: '/api/chat', token: editor, payload: { query: QUESTION } });
    expect(chat.statusCode, chat.body).toBe(200);
    expect(chat.json().retrieval_settings.weights).toEqual({ vector: 1, keyword: 1, document: 4, soft: 7 });

    // The same data directory with the defaults: off for search, on for extractive answers.
    const dataDir = t.dataDir;
    await t.close();
    t = await startApp({ HEARTH_DEFAULT_EMBEDDER: 'shipped' }, dataDir, false);
    const viewer = (await t.login()).access;
    const off = await search(t, viewer, { k: 5 });
    expect(off.retrieval_settings.weights.soft).toBe(0);
    expect(off.results.findIndex((result) => result.filename === 'apt-guide.txt')).toBeGreaterThan(placeOn);
    const chatByDefault = await t.request({ method: 'POST', url: '/api/chat', token: viewer, payload: { query: QUESTION } });
    expect(chatByDefault.json().retrieval_settings.weights.soft).toBe(7);
    // CHAT_SOFT_MATCH_CHUNKS=0 turns it off for the chat too, as its session-21 name EXTRACTIVE_SOFT_MATCH_CHUNKS still does.
    for (const name of ['CHAT_SOFT_MATCH_CHUNKS', 'EXTRACTIVE_SOFT_MATCH_CHUNKS']) {
      await t.close();
      t = await startApp({ HEARTH_DEFAULT_EMBEDDER: 'shipped', [name]: '0' }, dataDir, true);
      const chatOff = await t.request({ method: 'POST', url: '/api/chat', token: (await t.login()).access, payload: { query: QUESTION } });
      expect(chatOff.statusCode, chatOff.body).toBe(200);
      expect(chatOff.json().retrieval_settings.weights.soft, name).toBe(0);
    }
  });

  it('before a chat model answers too, the chat follows CHAT_SOFT_MATCH_CHUNKS (on by default), not the search setting', async () => {
    const modelDir = await tmp();
    await importLlm(STORIES_GGUF, { modelDir });
    const env = { HEARTH_DEFAULT_EMBEDDER: 'shipped', MODEL_DIR: modelDir, N_CTX: '768', N_THREADS: '1' };
    for (const [extra, soft] of [[{}, 7], [{ SEARCH_SOFT_MATCH_CHUNKS: '500', CHAT_SOFT_MATCH_CHUNKS: '0' }, 0]] as const) {
      const app = await startApp({ ...env, ...extra });
      try {
        const editor = (await app.userWithRole('editor')).access;
        await upload(app, editor);
        const res = await app.request({ method: 'POST', url: '/api/chat', token: editor, payload: { query: QUESTION } });
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json()).toMatchObject({ mode: 'generative', retrieval_settings: { weights: { soft } } });
      } finally {
        await app.close();
      }
    }
  });

  it("an extractive answer quotes the line that answers a paraphrase word by word ('speed up' meets 'faster'), among passages that share the question's words", async () => {
    const box = await startApp({ HEARTH_DEFAULT_EMBEDDER: 'shipped' }, await tmp(), false);
    try {
      const editor = (await box.userWithRole('editor')).access;
      const documents = {
        'build-settings.txt': 'The build reads its settings from a file named build.conf in the root of the project. Each setting is one line. Comments start with a hash sign. The build stops at the first error and prints the failing command. Its log is kept under the log folder for a week. Old logs are removed on the next start. The build prints a summary of warnings at the end. Warnings can be made errors in the settings. The summary lists each file once.',
        'build-output.txt': 'Clean builds remove the output folder first. The output folder is named out by default. The build checks the version of the compiler before it starts. An older compiler stops the build with a message. The message names the version needed. Builds of the documentation are separate and use their own settings file. The build of the tests runs after the main build.',
        'build-targets.txt': 'Each target is a line in the targets file. Targets may depend on each other. Parallel jobs can be run with -j to finish faster. The targets file is read once. Unknown targets are reported by name. A target with no rule is skipped with a warning.',
      };
      await uploadTexts(box, editor, documents);
      const res = await box.request({ method: 'POST', url: '/api/chat', token: editor, payload: { query: 'How do I speed up the build?' } });
      expect(res.statusCode, res.body).toBe(200);
      const { mode, answer, sources } = res.json() as { mode: string; answer: string; sources: Array<{ filename: string }> };
      expect(mode).toBe('extractive');
      expect(sources.map((source) => source.filename).sort()).toEqual(Object.keys(documents).sort());
      expect(answer).toContain('Parallel jobs can be run with -j to finish faster.');
    } finally {
      await box.close();
    }
  });

  it("shows a document through its chunk that answers word by word where both chunk lists put another of its chunks first (soft matching's best chunks order a document's passages)", async () => {
    const box = await startApp({ HEARTH_DEFAULT_EMBEDDER: 'shipped', SEARCH_SOFT_MATCH_CHUNKS: '500' }, await tmp(), false);
    try {
      const editor = (await box.userWithRole('editor')).access;
      // The guide's sections on the build's settings and logs hold the question's words; the one that answers holds none.
      const guide = [filler('the build settings', 2), 'Parallel jobs. Run make with -j to finish faster; the number after it says how many jobs run at once.', filler('the build logs', 2)].join('\n\n');
      await uploadTexts(box, editor, { 'build-guide.txt': guide, 'release-notes.txt': 'Release notes. Version two adds a dark theme and fixes the printing of long tables.' });
      const res = await box.request({ method: 'POST', url: '/api/search', token: editor, payload: { query: 'How do I speed up the build?', k: 3 } });
      expect(res.statusCode, res.body).toBe(200);
      const { results, retrieval_settings } = res.json() as { results: Array<{ filename: string; text: string }>; retrieval_settings: { weights: { soft: number } } };
      expect(retrieval_settings.weights.soft).toBe(7);
      expect(results[0].filename).toBe('build-guide.txt');
      expect(results[0].text).toContain('-j to finish faster');
    } finally {
      await box.close();
    }
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

  it("cuts each chunk's words once, when its document is written; a box that upgrades has its chunks cut at the start and ranks the same; deleting a document drops its words", async () => {
    const app = await startApp({ HEARTH_DEFAULT_EMBEDDER: 'shipped', SEARCH_SOFT_MATCH_CHUNKS: '500' }, await tmp(), false);
    let box = app;
    try {
      const editor = (await box.userWithRole('editor')).access;
      await upload(box, editor);
      /** Each document's stored words spelled out chunk by chunk, beside its chunks' texts in reading order. */
      const stored = async () => {
        const vocabulary = new Map((await box.app.db.selectFrom('vocabulary').select(['id', 'word']).execute()).map((row) => [row.id, row.word]));
        const rows = await box.app.db.selectFrom('document_words').selectAll().orderBy('document_id').orderBy('piece').execute();
        expect(rows.every((row) => row.piece === 0)).toBe(true); // these documents are shorter than a row's 128 chunks
        return Promise.all(
          rows.map(async (row) => {
            const ids = [...decodeWordIds(row.words)].map((id) => vocabulary.get(id));
            let at = 0;
            const words = [...decodeWordIds(row.counts)].map((count) => ids.slice(at, (at += count)));
            const texts = await box.app.db.selectFrom('chunks').select('text').where('document_id', '=', row.document_id).orderBy('ordinal').execute();
            return { document: row.document_id, words, texts: texts.map((chunk) => chunk.text) };
          }),
        );
      };
      const written = await stored();
      expect(written).toHaveLength(Object.keys(DOCS).length);
      expect(written.reduce((sum, { words }) => sum + words.length, 0)).toBeGreaterThan(Object.keys(DOCS).length);
      for (const { words, texts } of written) expect(words).toEqual(texts.map(contentWords));
      const before = await search(box, editor, { k: 5 });
      expect(before.retrieval_settings.weights.soft).toBe(7);

      // The schema before migration 0019, as a box that indexed these documents with an older Hearth has it.
      await asBeforeMigration(box.app.db, '0019');
      box = await box.restart();
      expect(await stored()).toEqual(written);
      expect((await search(box, editor, { k: 5 })).results.map((r) => r.filename)).toEqual(before.results.map((r) => r.filename));

      const list = await box.request({ method: 'GET', url: '/api/docs', token: editor });
      const guide = (list.json().documents as Array<{ id: string; filename: string }>).find((doc) => doc.filename === 'apt-guide.txt')!;
      expect((await box.request({ method: 'DELETE', url: `/api/docs/${guide.id}`, token: editor })).statusCode).toBe(204);
      await box.app.jobs.idle();
      expect((await stored()).map((row) => row.document)).toEqual(written.map((row) => row.document).filter((id) => id !== guide.id));
    } finally {
      await box.close();
    }
  });

  it("stores a long document's words 128 chunks a row, and a search reads its rows only as far as its chunk budget goes", async () => {
    const box = await startApp({ HEARTH_DEFAULT_EMBEDDER: 'shipped' }, await tmp(), false);
    try {
      const chunk = (i: number) => ({ text: `Section ${i} of the long manual: word${i} and shared words.` });
      const [long, short] = [randomUUID(), randomUUID()];
      await insertDocuments(box.app.db, [
        { id: long, filename: 'long.txt', chunks: Array.from({ length: 300 }, (_, i) => chunk(i)) },
        { id: short, filename: 'short.txt', chunks: [chunk(1000)] },
      ]);
      const pieces = await box.app.db.selectFrom('document_words').select(['document_id', 'piece', 'counts']).where('document_id', '=', long).orderBy('piece').execute();
      expect(pieces.map((row) => [row.piece, decodeWordIds(row.counts).length])).toEqual([
        [0, 128],
        [1, 128],
        [2, 44],
      ]);
      const repository = new RetrievalRepository(box.app.db);
      const chunksOf = (rows: Array<{ document_id: string; counts: Buffer }>) => rows.map((row) => [row.document_id, decodeWordIds(row.counts).length]);
      expect(chunksOf(await repository.documentWordsOf([long, short], 100))).toEqual([[long, 128]]);
      expect(chunksOf(await repository.documentWordsOf([long, short], 200))).toEqual([
        [long, 128],
        [long, 128],
      ]);
      // A chunk named by its place in its document's reading order, as the stored words number them; a place it lacks is left out.
      const inOrder = await box.app.db.selectFrom('chunks').select(['rowid', 'text']).where('document_id', '=', long).orderBy('ordinal').execute();
      const at = await repository.chunksAt([{ document_id: long, position: 0 }, { document_id: long, position: 299 }, { document_id: long, position: 300 }, { document_id: short, position: 0 }, { document_id: 'no-such-document', position: 0 }]);
      expect(at.map((place) => [place.document_id, place.position])).toEqual([[long, 0], [long, 299], [short, 0]]);
      expect(at[0].rowid).toBe(inOrder[0].rowid);
      expect(at[1].rowid).toBe(inOrder[299].rowid);
      expect(inOrder[299].text).toContain('word299');
      expect(chunksOf(await repository.documentWordsOf([short, 'no-such-document', long], 2000))).toEqual([
        [short, 1],
        [long, 128],
        [long, 128],
        [long, 44],
      ]);
    } finally {
      await box.close();
    }
  });

  it('SEARCH_SOFT_MATCH_CHUNKS (0 by default) and CHAT_SOFT_MATCH_CHUNKS (1500; EXTRACTIVE_SOFT_MATCH_CHUNKS when it is not set) are 0 to 20000; anything else stops the start with the variable named', async () => {
    const base = { JWT_SECRET_KEY: 'x'.repeat(40), MFA_ENCRYPTION_KEY: Buffer.alloc(32, 7).toString('base64'), DATA_DIR: await tmp() };
    expect(loadConfig(base).softMatch).toEqual({ search: 0, chat: 1500 });
    expect(loadConfig({ ...base, SEARCH_SOFT_MATCH_CHUNKS: '1500', CHAT_SOFT_MATCH_CHUNKS: '0' }).softMatch).toEqual({ search: 1500, chat: 0 });
    expect(loadConfig({ ...base, EXTRACTIVE_SOFT_MATCH_CHUNKS: '300' }).softMatch).toEqual({ search: 0, chat: 300 });
    expect(loadConfig({ ...base, EXTRACTIVE_SOFT_MATCH_CHUNKS: '300', CHAT_SOFT_MATCH_CHUNKS: '900' }).softMatch).toEqual({ search: 0, chat: 900 });
    for (const name of ['SEARCH_SOFT_MATCH_CHUNKS', 'CHAT_SOFT_MATCH_CHUNKS', 'EXTRACTIVE_SOFT_MATCH_CHUNKS']) {
      for (const bad of ['-1', '20001', 'lots', '1.5']) expect(() => loadConfig({ ...base, [name]: bad }), `${name}=${bad}`).toThrow(new RegExp(name));
    }
  });
});
