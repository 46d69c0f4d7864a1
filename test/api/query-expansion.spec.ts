import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importLlm } from '../../native/llm/index.js';
import { queryWords } from '../../plugins/retrieval/index.js';
import { startWithCorpus } from '../fixtures/chat-corpus.js';
import { STORIES_GGUF } from '../fixtures/models.js';
import type { TestApp } from '../helpers.js';

/**
 * RAG_QUERY_EXPANSION_ENABLED with a real local model. stories260K writes children's stories, not
 * synonyms: this proves the path runs end to end (the model is asked, its words are added to what is
 * searched and reported), not that expansion helps retrieval, which a story model cannot judge.
 */
const LANTERN = 'When was the copper lantern replaced?';
let t: TestApp;
let viewer: string;
const chat = async (query: string) => {
  const res = await t.request({ method: 'POST', url: '/api/chat', token: viewer, payload: { query } });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
};

describe('query expansion by the chat model (stories260K)', () => {
  beforeAll(async () => {
    ({ t, viewer } = await startWithCorpus({ N_CTX: '768', N_THREADS: '1' }, (modelDir) => importLlm(STORIES_GGUF, { modelDir })));
  });
  afterAll(() => t.close());

  it('is off by default: the question is searched as asked', async () => {
    const body = await chat(LANTERN);
    expect(body.mode).toBe('generative');
    expect(body.retrieval_settings.expanded_query).toBeNull();
  });

  it('when enabled, searches the question plus the new words the model offered, and reports it', async () => {
    await t.app.settings.set({ RAG_QUERY_EXPANSION_ENABLED: true });
    try {
      const body = await chat(LANTERN);
      const expanded: string = body.retrieval_settings.expanded_query;
      expect(expanded.startsWith(`${LANTERN} `)).toBe(true);
      const added = queryWords(expanded.slice(LANTERN.length));
      expect(added.length).toBeGreaterThan(0);
      expect(added.length).toBeLessThanOrEqual(8);
      expect(added.some((word) => queryWords(LANTERN).includes(word))).toBe(false);
      expect(body.sources.length).toBeGreaterThan(0);
    } finally {
      await t.app.settings.set({ RAG_QUERY_EXPANSION_ENABLED: false });
    }
  });
});
