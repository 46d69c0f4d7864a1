import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SMALL_TALK_ANSWERS } from '../../plugins/chat/classifier.js';
import { EXTRACTIVE_PREFIX, NOTHING_FOUND } from '../../plugins/chat/prompt.js';
import { startWithCorpus } from '../fixtures/chat-corpus.js';
import { parseEventStream } from '../fixtures/sse.js';
import type { TestApp } from '../helpers.js';

const SSE = { accept: 'text/event-stream' };

describe('chat without a chat model (extractive answers)', () => {
  let t: TestApp;
  let viewer: string;
  let documents: Record<string, string>;
  const chat = (payload: object, headers: Record<string, string> = {}, token: string | null = viewer) =>
    t.request({ method: 'POST', url: '/api/chat', token: token ?? undefined, headers, payload });

  beforeAll(async () => {
    ({ t, viewer, documents } = await startWithCorpus());
  });
  afterAll(() => t.close());

  it('answers in JSON by quoting the sentences of the best passages that answer, each with its marker', async () => {
    const query = 'When was the copper lantern replaced?';
    const res = await chat({ query });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ mode: 'extractive', token_budget: null, conversation_id: expect.stringMatching(/^[0-9a-f-]{36}$/) });
    expect(body.retrieval_settings).toMatchObject({ classification: 'document', retrieved: true, rewritten_query: null, k: 5, mode: 'hybrid', mode_used: 'hybrid' });
    // The chat fuses at its own weights (a passage holding the question's words quotes the answer), not the search's;
    // the question is in the log's own words, so in both the keyword list weighs 16 (keyword_coverage ≥ 0.6).
    expect(body.retrieval_settings.weights).toEqual({ vector: 1, keyword: 16, document: 4, soft: 0 });
    expect(body.retrieval_settings.keyword_coverage).toBeGreaterThanOrEqual(0.6);
    const searched = await t.request({ method: 'POST', url: '/api/search', token: viewer, payload: { query } });
    expect(searched.json().retrieval_settings.weights).toEqual({ vector: 2.5, keyword: 16, document: 3, soft: 0 });
    const paraphrase = await t.request({ method: 'POST', url: '/api/search', token: viewer, payload: { query: 'Which year did the keepers get a new copper lamp?' } });
    expect(paraphrase.json().retrieval_settings.keyword_coverage).toBeLessThan(0.6);
    expect(paraphrase.json().retrieval_settings.weights).toEqual({ vector: 2.5, keyword: 2, document: 3, soft: 0 });
    expect(Object.keys(body.timing).sort()).toEqual(['classify', 'generate', 'retrieve']);
    expect(body.answer.startsWith(EXTRACTIVE_PREFIX)).toBe(true);

    expect(body.sources.length).toBeGreaterThan(0);
    const rows = await t.app.db.selectFrom('chunks').select(['id', 'document_id', 'text']).execute();
    for (const [index, source] of body.sources.entries()) {
      expect(source.marker).toBe(index + 1);
      const row = rows.find((chunk) => chunk.id === source.chunk_id)!;
      expect(source.text).toBe(row.text);
      expect(source.document_id).toBe(row.document_id);
    }
    // Each quote is verbatim text of the source its marker points at; the sentence that answers is quoted, not whole passages.
    const quotes = [...body.answer.matchAll(/\n\n\[(\d+)\] ([^\n]*):\n"([^]*?)"(?=\n\n\[|$)/g)];
    expect(quotes.length).toBeGreaterThan(0);
    for (const [, marker, place, quote] of quotes) {
      expect(place.startsWith(body.sources[Number(marker) - 1].filename)).toBe(true);
      expect(body.sources[Number(marker) - 1].text).toContain(quote);
    }
    expect(body.answer).toContain('The lighthouse keeper replaced the copper lantern of the north pier in March 1987 after a winter storm cracked its glass.');
    expect(body.sources[0]).toMatchObject({ filename: 'harbour-log.md', document_id: documents['harbour-log.md'] });
    expect(body.sources[0].text).toContain('copper lantern');
    // Only passages that share a word with the question are sources: the orchard is not.
    expect(body.sources.every((source: { filename: string }) => source.filename === 'harbour-log.md')).toBe(true);

    // The sources are the retrieved chunks, in the retrieval's order.
    const search = (await t.request({ method: 'POST', url: '/api/search', token: viewer, payload: { query, k: 5 } })).json();
    const retrieved = search.results.map((result: { chunk_id: string }) => result.chunk_id);
    expect(retrieved.slice(0, body.sources.length)).toEqual(body.sources.map((source: { chunk_id: string }) => source.chunk_id));
  });

  it('streams the same answer as delta events, then one done event with the metadata', async () => {
    const query = 'What does the dredger remove from the basin?';
    const res = await chat({ query }, SSE);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/event-stream/);
    const events = parseEventStream(res.body);
    const deltas = events.filter((event) => event.event === 'delta');
    expect(deltas.length).toBeGreaterThan(1);
    expect(events.at(-1)!.event).toBe('done');
    expect(events.filter((event) => event.event === 'done')).toHaveLength(1);
    expect(events.slice(0, -1).every((event) => event.event === 'delta')).toBe(true);

    const done = events.at(-1)!.data;
    expect(done).not.toHaveProperty('answer');
    expect(done).toMatchObject({ mode: 'extractive', token_budget: null, retrieval_settings: { retrieved: true } });
    const answer = deltas.map((event) => event.data.text).join('');
    expect(answer.startsWith(EXTRACTIVE_PREFIX)).toBe(true);
    expect(done.sources[0].text).toContain('silt');

    const json = (await chat({ query })).json();
    expect(json.answer).toBe(answer);
    expect(json.sources).toEqual(done.sources);

    // Stored once the stream completed, under the id the done event carries.
    const stored = (await t.request({ method: 'GET', url: `/api/conversations/${done.conversation_id}`, token: viewer })).json();
    expect(stored.turns).toEqual([{ query, answer, sources: done.sources, mode: 'extractive', created_at: expect.any(String) }]);
  });

  it('says so when nothing relevant is found, in JSON and in a stream', async () => {
    const query = 'What is the capital of Mongolia?';
    const json = (await chat({ query })).json();
    expect(json).toMatchObject({ answer: NOTHING_FOUND, sources: [], mode: 'extractive' });
    const events = parseEventStream((await chat({ query }, SSE)).body);
    expect(events.map((event) => event.event)).toEqual(['delta', 'done']);
    expect(events[0].data.text).toBe(NOTHING_FOUND);
    expect(events[1].data.sources).toEqual([]);
  });

  it('answers small talk without retrieval', async () => {
    const search = vi.spyOn(t.app.retrieval, 'search');
    try {
      const res = await chat({ query: 'Thanks a lot!' });
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ answer: SMALL_TALK_ANSWERS.thanks, sources: [], retrieval_settings: { classification: 'small_talk', retrieved: false } });
      expect((await chat({ query: 'hello there' })).json().answer).toBe(SMALL_TALK_ANSWERS.greeting);
      expect(search).not.toHaveBeenCalled();
      // A greeting with a question in it is a question.
      expect((await chat({ query: 'Hi, when was the copper lantern replaced?' })).json().retrieval_settings.retrieved).toBe(true);
      expect(search).toHaveBeenCalledTimes(1);
    } finally {
      search.mockRestore();
    }
  });

  it('searches only the file a question names', async () => {
    const res = await chat({ query: 'What does orchard-notes.txt say about pruning and the lantern?' });
    const body = res.json();
    expect(body.retrieval_settings).toMatchObject({ classification: 'metadata', filters: { document_ids: [documents['orchard-notes.txt']] } });
    expect(body.sources.length).toBeGreaterThan(0);
    expect(body.sources.every((source: { filename: string }) => source.filename === 'orchard-notes.txt')).toBe(true);
    // A name that matches no file does not restrict the search.
    const unknown = (await chat({ query: 'What does missing.pdf say about the copper lantern?' })).json();
    expect(unknown.retrieval_settings.classification).toBe('metadata');
    expect(unknown.retrieval_settings.filters).toEqual({});
    expect(unknown.sources[0].filename).toBe('harbour-log.md');
  });

  it('rewrites a follow-up with the previous questions\' key terms (RAG_QUERY_REWRITE_ENABLED), no model needed', async () => {
    await t.app.settings.set({ RAG_QUERY_REWRITE_ENABLED: true });
    try {
      const first = (await chat({ query: 'When was the copper lantern replaced?' })).json();
      const followUp = (await chat({ query: 'and who paid for it?', conversation_id: first.conversation_id })).json();
      expect(followUp).toMatchObject({ mode: 'extractive', retrieval_settings: { rewritten_query: 'and who paid for it? replaced lantern copper' } });
      expect(followUp.sources[0].text).toContain('maintenance fund');
      // A standalone question is searched as asked.
      expect((await chat({ query: 'How many apple trees grow in the orchard?', conversation_id: first.conversation_id })).json().retrieval_settings.rewritten_query).toBeNull();
    } finally {
      await t.app.settings.set({ RAG_QUERY_REWRITE_ENABLED: false });
    }
  });

  it('continues a conversation; another user\'s or an unknown id is a 404, before anything streams', async () => {
    const first = (await chat({ query: 'How many apple trees are in the orchard?' })).json();
    const second = await chat({ query: 'When does pruning happen?', conversation_id: first.conversation_id });
    expect(second.statusCode).toBe(200);
    expect(second.json().conversation_id).toBe(first.conversation_id);
    const stored = (await t.request({ method: 'GET', url: `/api/conversations/${first.conversation_id}`, token: viewer })).json();
    expect(stored.turns.map((turn: { query: string }) => turn.query)).toEqual(['How many apple trees are in the orchard?', 'When does pruning happen?']);

    const other = (await t.userWithRole('viewer')).access;
    const admin = (await t.login()).access;
    for (const token of [other, admin]) {
      const res = await chat({ query: 'And the pear trees?', conversation_id: first.conversation_id }, {}, token);
      expect(res.statusCode).toBe(404);
      expect(res.json().error.code).toBe('not_found');
      const streamed = await chat({ query: 'And the pear trees?', conversation_id: first.conversation_id }, SSE, token);
      expect(streamed.statusCode).toBe(404);
      expect(streamed.headers['content-type']).toMatch(/^application\/json/);
    }
    expect((await chat({ query: 'Anything?', conversation_id: 'no-such-conversation' })).statusCode).toBe(404);
    // Nothing was added to the conversation by the refused requests.
    const after = (await t.request({ method: 'GET', url: `/api/conversations/${first.conversation_id}`, token: viewer })).json();
    expect(after.turns).toHaveLength(2);
  });

  it('refuses bad input (400) and anonymous callers (401)', async () => {
    const bad: object[] = [
      {},
      { query: '' },
      { query: '   ' },
      { query: 'x'.repeat(4001) },
      { query: 'ok?', k: 0 },
      { query: 'ok?', k: 21 },
      { query: 'ok?', mode: 'fuzzy' },
      { query: 'ok?', conversation_id: '' },
      { query: 'ok?', extra: true },
      { query: 42 },
    ];
    for (const payload of bad) {
      const res = await chat(payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.json().error.code).toBe('validation_failed');
    }
    expect((await chat({ query: 'x'.repeat(4000) })).statusCode).toBe(200);
    const before = await t.app.db.selectFrom('conversation_turns').selectAll().execute();
    expect((await chat({ query: 'hello' }, {}, null)).statusCode).toBe(401);
    expect((await chat({ query: 'hello' }, SSE, null)).statusCode).toBe(401);
    expect((await chat({ query: '' }, SSE)).statusCode).toBe(400);
    expect(await t.app.db.selectFrom('conversation_turns').selectAll().execute()).toEqual(before);
  });
});
