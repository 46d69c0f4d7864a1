import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXTRACTIVE_PREFIX } from '../../plugins/chat/prompt.js';
import { multipartBody } from '../fixtures/multipart.js';
import { installTinyEmbeddingModel } from '../fixtures/tiny-embedding-model.js';
import { type TestApp, startApp } from '../helpers.js';

/** A handbook whose sections do not repeat its title: only the heading path ties them to it. */
const HANDBOOK =
  '# Zephyrine harbour handbook\n\nThis handbook describes the harbour of the village and the services it offers to visiting crews.\n\n' +
  '## Berths\n\n### Mooring fees\n\nFees are paid at the office on arrival, in cash or by card, before the boat is tied up for the night.\n\n' +
  '## Tools\n\nThe archive tool has these options:\n' +
  '-x, --extract    extract files from an archive\n' +
  '-v, --verbose    list every file as it is processed\n' +
  '-C, --directory=DIR    change to directory DIR before extracting\n' +
  '-f, --file=ARCHIVE    use the archive file ARCHIVE\n';

const ORCHARD = '# Orchard notes\n\nThe orchard has forty apple trees and twelve pear trees; pruning happens in late winter before the buds open.\n';

describe('retrieval quality: contextual chunks and extractive answers', () => {
  let t: TestApp;
  let viewer: string;

  beforeAll(async () => {
    const modelDir = mkdtempSync(path.join(os.tmpdir(), 'hearth-quality-models-'));
    await installTinyEmbeddingModel(modelDir);
    t = await startApp({ MODEL_DIR: modelDir });
    const editor = (await t.userWithRole('editor')).access;
    viewer = (await t.userWithRole('viewer')).access;
    for (const [filename, content] of Object.entries({ 'handbook.md': HANDBOOK, 'orchard.md': ORCHARD })) {
      const res = await t.request({ method: 'POST', url: '/api/docs/upload', token: editor, ...multipartBody([{ name: 'file', content, filename }]) });
      expect(res.statusCode, res.body).toBe(202);
    }
    await t.app.jobs.idle();
  });
  afterAll(() => t.close());

  const search = async (payload: object) => {
    const res = await t.request({ method: 'POST', url: '/api/search', token: viewer, payload });
    expect(res.statusCode, res.body).toBe(200);
    return res.json() as { results: Array<{ chunk_id: string; heading?: string; text: string }> };
  };

  it('finds a section by its document title and heading path; the result quotes the section alone', async () => {
    const { results } = await search({ query: 'zephyrine', mode: 'keyword', k: 10 });
    const fees = results.find((result) => result.text.includes('Fees are paid'));
    expect(fees, JSON.stringify(results)).toBeDefined();
    expect(fees!.heading).toBe('Zephyrine harbour handbook › Berths › Mooring fees');
    expect(fees!.text).not.toContain('Zephyrine');
  });

  it('embeds each chunk with its heading path above its text', async () => {
    const chunk = await t.app.db.selectFrom('chunks').select(['rowid', 'heading', 'text']).where('text', 'like', '%Fees are paid%').executeTakeFirstOrThrow();
    const embedder = t.app.searchIndex.embedder()!;
    const [contextual] = await embedder.embed([`${chunk.heading}\n\n${chunk.text}`]);
    const [nearest] = t.app.searchIndex.vectors()!.search(contextual, 1);
    expect(nearest.label).toBe(chunk.rowid);
    expect(nearest.score).toBeGreaterThan(0.999);
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
});
