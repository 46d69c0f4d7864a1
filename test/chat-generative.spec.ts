import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { GenerationTimeoutError, GeneratorBusyError, UpstreamError, type ChatMessage } from '../native/llm/generator.js';
import { SMALL_TALK_ANSWERS } from '../plugins/chat/classifier.js';
import { buildMessages } from '../plugins/chat/prompt.js';
import { reservedCompletion } from '../plugins/chat/token-budget.js';
import { startWithCorpus } from './fixtures/chat-corpus.js';
import { ScriptedGenerator, useGenerator, type Script } from './fixtures/scripted-generator.js';
import { chatThenDisconnect, parseEventStream } from './fixtures/sse.js';
import type { TestApp } from './helpers.js';

/**
 * The generative path through HTTP with a scripted Generator in app.generator: what the chat does
 * with a model's output (markers, budget, errors, cancellation, history), whatever the backend.
 */
const SSE = { accept: 'text/event-stream' };
const LANTERN = 'When was the copper lantern replaced?';
const lastUser = (messages: ChatMessage[]) => messages.filter((message) => message.role === 'user').at(-1)!.content;
const isPrompt = (messages: ChatMessage[]) => messages[0].content.startsWith('You are Hearth');

let t: TestApp;
let viewer: string;
let generator: ScriptedGenerator;
const chat = (payload: object, headers: Record<string, string> = {}) => t.request({ method: 'POST', url: '/api/chat', token: viewer, headers, payload });
const install = (script: Script) => useGenerator(t.app, (generator = new ScriptedGenerator(script)));
const turnCount = async () => (await t.app.db.selectFrom('conversation_turns').selectAll().execute()).length;

beforeAll(async () => {
  ({ t, viewer } = await startWithCorpus({ RAG_CLASSIFIER_LLM_ENABLED: 'true', RAG_CLASSIFIER_LLM_MAX_TOKENS: '8' }));
});
afterAll(() => t.close());
beforeEach(() => install({}));

describe('generative answers', () => {
  it('numbers the sources in the prompt and keeps only the markers that point at one, across streamed pieces', async () => {
    install({ pieces: ['The lantern was replaced in March 1987 [', '1', ']', ' after a storm [', '7', '].', ' Paid from the fund [1, 3', '] [2', '0]', ' — see [appendix]'] });
    const res = await chat({ query: LANTERN }, SSE);
    const events = parseEventStream(res.body);
    const done = events.at(-1)!;
    expect(done.event).toBe('done');
    expect(done.data).toMatchObject({ mode: 'generative', token_budget: null });
    expect(done.data.sources).toHaveLength(1);
    const deltas = events.filter((event) => event.event === 'delta').map((event) => event.data.text);
    expect(deltas.join('')).toBe('The lantern was replaced in March 1987 [1] after a storm. Paid from the fund [1] — see [appendix]');
    expect(deltas.some((text) => /\[7|\[20|3\]/.test(text))).toBe(false);

    const prompt = generator.calls[0].messages;
    expect(prompt[0].content).toMatch(/square brackets/);
    expect(lastUser(prompt)).toContain(`[1] harbour-log.md, Harbour lantern\n${done.data.sources[0].text}`);
    expect(lastUser(prompt).endsWith(`Question: ${LANTERN}`)).toBe(true);

    const stored = (await t.request({ method: 'GET', url: `/api/conversations/${done.data.conversation_id}`, token: viewer })).json();
    expect(stored.turns[0]).toMatchObject({ answer: deltas.join(''), mode: 'generative', sources: done.data.sources });
  });

  it('trims the lowest-relevance sources, then the oldest turns, to fit the context window', async () => {
    const query = 'Tell me about the lantern, the dredger, the basin and the orchard trees';
    const first = (await chat({ query })).json();
    expect(first.sources.length).toBeGreaterThan(1);
    const full = generator.countPromptTokens(generator.calls[0].messages);

    // A window one token short of the whole prompt: the lowest-relevance source goes.
    let n = full;
    while (n - reservedCompletion(n) >= full) n--;
    install({ nCtx: n });
    const trimmed = (await chat({ query })).json();
    expect(trimmed.token_budget).toMatchObject({ limit: n, reserved_completion: reservedCompletion(n), turns_dropped: 0 });
    expect(trimmed.token_budget.chunks_dropped).toBeGreaterThan(0);
    expect(trimmed.sources).toEqual(first.sources.slice(0, first.sources.length - trimmed.token_budget.chunks_dropped));
    const sent = generator.calls[0];
    expect(generator.countPromptTokens(sent.messages)).toBe(trimmed.token_budget.estimated_prompt);
    expect(trimmed.token_budget.estimated_prompt).toBeLessThanOrEqual(n - reservedCompletion(n));
    expect(sent.options.maxTokens).toBe(reservedCompletion(n));
    expect(lastUser(sent.messages)).not.toContain(first.sources.at(-1).text);

    // With history: every source but the best goes first, then the oldest turn.
    install({ pieces: [Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ')] });
    const conversation = (await chat({ query: LANTERN })).json().conversation_id;
    await chat({ query: 'What does the dredger remove?', conversation_id: conversation });
    const history = (await t.request({ method: 'GET', url: `/api/conversations/${conversation}`, token: viewer })).json().turns;
    const best = first.sources.slice(0, 1);
    const target = generator.countPromptTokens(buildMessages(history.slice(1), best, query));
    n = target;
    while (n - reservedCompletion(n) < target) n++;
    install({ nCtx: n });
    const budget = (await chat({ query, conversation_id: conversation })).json();
    expect(budget.token_budget).toMatchObject({ chunks_dropped: first.sources.length - 1, turns_dropped: 1 });
    expect(budget.sources).toEqual(best);
  });

  it('maps a busy model to 503 with Retry-After, and to an error event; nothing is stored', async () => {
    install({ fail: new GeneratorBusyError(7) });
    const before = await turnCount();
    const res = await chat({ query: LANTERN });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('7');
    expect(res.json().error).toMatchObject({ code: 'model_busy' });
    const streamed = await chat({ query: LANTERN }, SSE);
    expect(streamed.headers['retry-after']).toBe('7');
    expect(parseEventStream(streamed.body)).toEqual([{ event: 'error', data: { detail: expect.any(String), code: 'model_busy', retry_after: 7 } }]);
    expect(await turnCount()).toBe(before);
  });

  it('maps a timeout to 504 generation_timeout; a stream that fails midway ends with an error event and stores nothing', async () => {
    install({ pieces: ['The lantern ', 'was ', 'replaced'], fail: new GenerationTimeoutError(120), failAfter: 2 });
    const before = await turnCount();
    const res = await chat({ query: LANTERN });
    expect(res.statusCode).toBe(504);
    expect(res.json().error.code).toBe('generation_timeout');
    const events = parseEventStream((await chat({ query: LANTERN }, SSE)).body);
    expect(events.map((event) => event.event)).toEqual(['delta', 'delta', 'error']);
    expect(events[2].data).toMatchObject({ code: 'generation_timeout', detail: expect.stringMatching(/120 s/) });
    expect(await turnCount()).toBe(before);
  });

  it('maps upstream failures to 502, passing Retry-After on from a 429; an unknown failure shows no internals', async () => {
    install({ fail: new UpstreamError(429, 'The hosted model is rate limited', 30) });
    const limited = await chat({ query: LANTERN });
    expect(limited.statusCode).toBe(502);
    expect(limited.headers['retry-after']).toBe('30');
    expect(limited.json().error).toEqual({ code: 'upstream_rate_limited', message: 'The hosted model is rate limited' });
    install({ fail: new UpstreamError(500, 'The hosted model failed') });
    const failed = await chat({ query: LANTERN });
    expect(failed.statusCode).toBe(502);
    expect(failed.headers['retry-after']).toBeUndefined();
    install({ fail: new Error('socket hang up at 10.0.0.3') });
    const unknown = await chat({ query: LANTERN });
    expect(unknown.statusCode).toBe(500);
    expect(unknown.body).not.toContain('10.0.0.3');
    const events = parseEventStream((await chat({ query: LANTERN }, SSE)).body);
    expect(events).toEqual([{ event: 'error', data: { detail: 'Internal server error', code: 'internal_error' } }]);
  });

  it('a client that disconnects mid-stream cancels the generation and stores nothing', async () => {
    install({ pieces: Array.from({ length: 200 }, (_, i) => `w${i} `), delayMs: 10 });
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const before = await turnCount();
    const seen = (await chatThenDisconnect(address, viewer, { query: LANTERN }, 3)).map((event) => event.event);
    for (let i = 0; i < 100 && generator.cancelled === 0; i++) await sleep(10);
    expect(generator.cancelled).toBe(1);
    expect(seen).toEqual(['delta', 'delta', 'delta']);
    await sleep(50);
    expect(await turnCount()).toBe(before);
  });

  it('answers concurrent chats each with its own answer and conversation', async () => {
    install({ pieces: (messages) => (isPrompt(messages) ? ['Answer to: ', lastUser(messages).split('Question: ')[1]] : ['DOCUMENT']), delayMs: 5 });
    const questions = ['copper lantern?', 'dredger silt?', 'apple trees?', 'pear trees?', 'pruning winter?'];
    const answers = await Promise.all(questions.map((query) => chat({ query })));
    const ids = new Set<string>();
    for (const [index, res] of answers.entries()) {
      expect(res.statusCode).toBe(200);
      expect(res.json().answer).toBe(`Answer to: ${questions[index]}`);
      ids.add(res.json().conversation_id);
    }
    expect(ids.size).toBe(questions.length);
  });

  it('resolves ambiguous queries with the model (RAG_CLASSIFIER_LLM_ENABLED), capped at its token limit', async () => {
    install({ pieces: (messages) => (isPrompt(messages) ? ['unused'] : ['SMALL_TALK']) });
    const res = (await chat({ query: 'hmm interesting' })).json();
    expect(res).toMatchObject({ answer: SMALL_TALK_ANSWERS.chit_chat, retrieval_settings: { classification: 'small_talk', retrieved: false } });
    expect(generator.calls).toHaveLength(1);
    expect(generator.calls[0].options.maxTokens).toBe(8);
    // A clear question never asks the classifier.
    await chat({ query: LANTERN });
    expect(generator.calls).toHaveLength(2);
    expect(isPrompt(generator.calls[1].messages)).toBe(true);
  });

  it('rewrites a follow-up into a standalone query (RAG_QUERY_REWRITE_ENABLED), by the model or by key terms', async () => {
    await t.app.settings.set({ RAG_QUERY_REWRITE_ENABLED: true });
    try {
      install({ pieces: (messages) => (messages[0].content.startsWith('Rewrite') ? ['Who paid for the copper lantern?'] : ['The council [1].']) });
      const first = (await chat({ query: LANTERN })).json();
      const followUp = (await chat({ query: 'and who paid for it?', conversation_id: first.conversation_id })).json();
      expect(followUp.retrieval_settings.rewritten_query).toBe('Who paid for the copper lantern?');
      const rewriteCall = generator.calls.find((call) => call.messages[0].content.startsWith('Rewrite'))!;
      expect(lastUser(rewriteCall.messages)).toContain(`User: ${LANTERN}`);

      useGenerator(t.app, null);
      const byTerms = (await chat({ query: 'and who paid for it?', conversation_id: first.conversation_id })).json();
      expect(byTerms.retrieval_settings.rewritten_query).toBe('and who paid for it? replaced lantern copper');
      expect(byTerms.sources[0].text).toContain('maintenance fund');
      // A standalone question is searched as asked.
      expect((await chat({ query: 'How many apple trees grow in the orchard?', conversation_id: first.conversation_id })).json().retrieval_settings.rewritten_query).toBeNull();
    } finally {
      await t.app.settings.set({ RAG_QUERY_REWRITE_ENABLED: false });
    }
  });

  it('logs the token figures with RAG_LOG_TOKEN_USAGE, and the query only when RAG_LOG_REDACT_QUERIES is off', async () => {
    const usageLines = () => t.logs().split('\n').filter((line) => line.includes('"chat.token_usage"')).map((line) => JSON.parse(line));
    await chat({ query: LANTERN });
    expect(usageLines()).toHaveLength(0);
    await t.app.settings.set({ RAG_LOG_TOKEN_USAGE: true });
    try {
      await chat({ query: LANTERN });
      expect(usageLines()[0]).toMatchObject({ limit: 4096, estimated_prompt: expect.any(Number), reserved_completion: 512, chunks_dropped: 0, turns_dropped: 0, query: `[redacted ${LANTERN.length} chars]` });
      expect(t.logs()).not.toContain(LANTERN);
      await t.app.settings.set({ RAG_LOG_REDACT_QUERIES: false });
      await chat({ query: LANTERN });
      expect(usageLines()[1].query).toBe(LANTERN);
    } finally {
      await t.app.settings.set({ RAG_LOG_TOKEN_USAGE: false, RAG_LOG_REDACT_QUERIES: true });
    }
  });
});
