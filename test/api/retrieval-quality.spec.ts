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

const ORCHARD = '# Orchard notes\n\nThe orchard has forty apple trees and twelve pear trees; pruning happens in late winter before the buds open.\n';

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
    for (const [filename, content] of Object.entries({ 'handbook.md': HANDBOOK, 'orchard.md': ORCHARD })) {
      const res = await t.request({ method: 'POST', url: '/api/docs/upload', token: editor, ...multipartBody([{ name: 'file', content, filename }]) });
      expect(res.statusCode, res.body).toBe(202);
    }
    await t.app.jobs.idle();
  });
  afterAll(async () => {
    await t.close();
    rmSync(modelDir, { recursive: true, force: true });
  });

  it('fuses with the keyword list weighing twice the vector list, as chosen on the evaluation; reports it', async () => {
    const res = await t.request({ method: 'POST', url: '/api/search', token: viewer, payload: { query: 'mooring fees at the office' } });
    expect(res.statusCode, res.body).toBe(200);
    const { results, retrieval_settings } = res.json();
    expect(retrieval_settings).toMatchObject({ mode_used: 'hybrid', fusion: 'rrf', rrf_k: 60, weights: { vector: 1, keyword: 2 }, per_document: 0 });
    expect(results[0].text).toContain('Fees are paid at the office');
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
