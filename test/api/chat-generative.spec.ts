import { afterAll, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ChatMessage } from '../../native/llm/index.js';
import { SMALL_TALK_ANSWERS } from '../../plugins/chat/classifier.js';
import { buildMessages } from '../../plugins/chat/prompt.js';
import { reservedCompletion } from '../../plugins/chat/token-budget.js';
import { startWithCorpus } from '../fixtures/chat-corpus.js';
import { OpenAIWireServer, type ReceivedRequest } from '../fixtures/openai-wire-server.js';
import { chatThenDisconnect, parseEventStream } from '../fixtures/sse.js';
import { startApp, type TestApp } from '../helpers.js';

/**
 * The generative path through HTTP, on the hosted backend configured as an operator would
 * (LLM_BACKEND=hosted, HOSTED_LLM_BASE_URL) against a loopback server speaking the OpenAI wire format:
 * what the chat does with a model's output (markers, budget, errors, cancellation, history).
 */
const SSE = { accept: 'text/event-stream' };
const KEY = 'sk-hearth-chat-test-5e1f0a9c';
const LANTERN = 'When was the copper lantern replaced?';
const BOTH = 'Tell me about the lantern, the dredger, the basin and the orchard trees';
const lastUser = (messages: ChatMessage[]) => messages.filter((message) => message.role === 'user').at(-1)!.content;
const isAnswerPrompt = (request: ReceivedRequest) => request.messages[0].content.startsWith('You are Hearth');
/** The hosted backend's documented estimate (native/llm/openai-generator.ts): ceil(chars / 4) a message, plus 4 a message and 3 to prime the reply. */
const estimate = (messages: ChatMessage[]) => messages.reduce((sum, message) => sum + 4 + Math.ceil(message.content.length / 4), 3);

let wire: OpenAIWireServer;
let t: TestApp;
let viewer: string;
const env = (extra: Record<string, string> = {}) => ({
  ...wire.hostedEnv(KEY),
  N_CTX: '4096',
  RAG_CLASSIFIER_LLM_ENABLED: 'true',
  RAG_CLASSIFIER_LLM_MAX_TOKENS: '8',
  ...extra,
});
const chat = (payload: object, headers: Record<string, string> = {}) => t.request({ method: 'POST', url: '/api/chat', token: viewer, headers, payload });
const turnCount = async () => (await t.app.db.selectFrom('conversation_turns').selectAll().execute()).length;
const deltaText = (events: { event: string; data: any }[]) => events.filter((event) => event.event === 'delta').map((event) => event.data.text).join('');

/** Restarts the service over the same data with another environment, as an operator editing .env would (N_CTX is read at boot). */
async function reboot(extra: Record<string, string> = {}): Promise<void> {
  const { dataDir } = t;
  const modelDir = t.app.config.modelDir;
  await t.app.close();
  t = await startApp({ MODEL_DIR: modelDir, ...env(extra) }, dataDir, true);
}

beforeAll(async () => {
  wire = await OpenAIWireServer.start();
  ({ t, viewer } = await startWithCorpus(env()));
});
afterAll(async () => {
  await t?.close();
  await wire?.close();
});
beforeEach(() => wire.reset());

describe('generative answers (hosted backend on a loopback OpenAI wire server)', () => {
  it('numbers the sources in the prompt and keeps only the markers that point at one, across streamed pieces', async () => {
    expect(t.app.generator!.info()).toMatchObject({ backend: 'hosted', model: 'test-model', context: { effective: 4096 } });
    wire.script({ pieces: ['The lantern was replaced in March 1987 [', '1', ']', ' after a storm [', '7', '].', ' Paid from the fund [1, 3', '] [2', '0]', ' — see [appendix]'] });
    const res = await chat({ query: LANTERN }, SSE);
    const events = parseEventStream(res.body);
    const done = events.at(-1)!;
    expect(done.event).toBe('done');
    expect(done.data).toMatchObject({ mode: 'generative', token_budget: null });
    expect(done.data.sources).toHaveLength(1);
    const deltas = events.filter((event) => event.event === 'delta').map((event) => event.data.text);
    expect(deltas.join('')).toBe('The lantern was replaced in March 1987 [1] after a storm. Paid from the fund [1] — see [appendix]');
    expect(deltas.some((text) => /\[7|\[20|3\]/.test(text))).toBe(false);

    expect(wire.completions).toHaveLength(1);
    const sent = wire.completions[0];
    expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent.body).toMatchObject({ model: 'test-model', stream: true, max_tokens: reservedCompletion(4096) });
    expect(sent.messages[0].content).toMatch(/square brackets/);
    expect(lastUser(sent.messages)).toContain(`[1] harbour-log.md, Harbour lantern\n${done.data.sources[0].text}`);
    expect(lastUser(sent.messages).endsWith(`Question: ${LANTERN}`)).toBe(true);

    const stored = (await t.request({ method: 'GET', url: `/api/conversations/${done.data.conversation_id}`, token: viewer })).json();
    expect(stored.turns[0]).toMatchObject({ answer: deltas.join(''), mode: 'generative', sources: done.data.sources });
    expect(t.logs()).not.toContain(KEY);
  });

  it('answers in JSON with the same marker filtering, and stores that answer', async () => {
    wire.script({ pieces: ['Replaced in 1987 [1] [9', '].'] });
    const body = (await chat({ query: LANTERN })).json();
    expect(body).toMatchObject({ mode: 'generative', answer: 'Replaced in 1987 [1].', token_budget: null });
    const stored = (await t.request({ method: 'GET', url: `/api/conversations/${body.conversation_id}`, token: viewer })).json();
    expect(stored.turns[0]).toMatchObject({ answer: body.answer, sources: body.sources });
  });

  it('trims the lowest-relevance sources, then the oldest turns, to fit N_CTX', async () => {
    const first = (await chat({ query: BOTH })).json();
    expect(first.token_budget).toBeNull();
    expect(first.sources.length).toBeGreaterThan(1);
    const full = estimate(wire.completions[0].messages);

    // A window one token short of the whole prompt: the lowest-relevance source goes.
    let n = full;
    while (n - reservedCompletion(n) >= full) n--;
    try {
      await reboot({ N_CTX: String(n) });
      wire.reset();
      const trimmed = (await chat({ query: BOTH })).json();
      expect(trimmed.token_budget).toMatchObject({ limit: n, reserved_completion: reservedCompletion(n), turns_dropped: 0 });
      expect(trimmed.token_budget.chunks_dropped).toBeGreaterThan(0);
      expect(trimmed.sources).toEqual(first.sources.slice(0, first.sources.length - trimmed.token_budget.chunks_dropped));
      const sent = wire.completions[0];
      expect(estimate(sent.messages)).toBe(trimmed.token_budget.estimated_prompt);
      expect(trimmed.token_budget.estimated_prompt).toBeLessThanOrEqual(n - reservedCompletion(n));
      expect(sent.max_tokens).toBe(reservedCompletion(n));
      expect(lastUser(sent.messages)).not.toContain(first.sources.at(-1).text);

      // With history: every source but the best goes first, then the oldest turn.
      wire.otherwise = { pieces: [Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ')] };
      const conversation = (await chat({ query: LANTERN })).json().conversation_id;
      await chat({ query: 'What does the dredger remove?', conversation_id: conversation });
      const history = (await t.request({ method: 'GET', url: `/api/conversations/${conversation}`, token: viewer })).json().turns;
      expect(history).toHaveLength(2);
      const best = first.sources.slice(0, 1);
      const target = estimate(buildMessages(history.slice(1), best, BOTH));
      n = target;
      while (n - reservedCompletion(n) < target) n++;
      await reboot({ N_CTX: String(n) });
      wire.reset();
      const budget = (await chat({ query: BOTH, conversation_id: conversation })).json();
      expect(budget.token_budget).toMatchObject({ limit: n, chunks_dropped: first.sources.length - 1, turns_dropped: 1 });
      expect(budget.sources).toEqual(best);
      expect(estimate(wire.completions[0].messages)).toBe(budget.token_budget.estimated_prompt);
      expect(wire.completions[0].messages.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'user']);
    } finally {
      await reboot();
    }
  });

  it('a stalled model times out at INFERENCE_TIMEOUT_SECONDS: 504 generation_timeout, or an error event after what was streamed; nothing stored', async () => {
    await t.app.settings.set({ INFERENCE_TIMEOUT_SECONDS: 1 });
    try {
      const before = await turnCount();
      wire.script({ pieces: ['The lantern'], stallAfter: 0 }, { pieces: ['The lantern ', 'was ', 'replaced'], stallAfter: 2 });
      const res = await chat({ query: LANTERN });
      expect(res.statusCode).toBe(504);
      expect(res.json().error.code).toBe('generation_timeout');
      const events = parseEventStream((await chat({ query: LANTERN }, SSE)).body);
      expect(events.map((event) => event.event)).toEqual(['delta', 'delta', 'error']);
      expect(deltaText(events)).toBe('The lantern was');
      expect(events[2].data).toEqual({ code: 'generation_timeout', detail: expect.stringMatching(/1 s/) });
      expect(await turnCount()).toBe(before);
      // The upstream requests were given up, not left open.
      expect(await Promise.all(wire.completions.map((request) => request.ended))).toEqual([true, true]);
    } finally {
      await t.app.settings.set({ INFERENCE_TIMEOUT_SECONDS: 120 });
    }
  });

  it("maps upstream failures to 502, passing a 429's Retry-After on; a dropped connection shows no internals", async () => {
    const before = await turnCount();
    wire.otherwise = { status: 429, headers: { 'retry-after': '30' }, body: { error: { message: 'Rate limit reached for requests', type: 'requests' } } };
    const limited = await chat({ query: LANTERN });
    expect(limited.statusCode).toBe(502);
    expect(limited.headers['retry-after']).toBe('30');
    expect(limited.json().error).toEqual({ code: 'upstream_rate_limited', message: 'The hosted model is rate limiting requests; retry in 30 s' });
    const streamed = await chat({ query: LANTERN }, SSE);
    expect(streamed.headers['retry-after']).toBe('30');
    expect(parseEventStream(streamed.body)).toEqual([{ event: 'error', data: { detail: expect.any(String), code: 'upstream_rate_limited', retry_after: 30 } }]);

    wire.otherwise = { status: 500, body: { error: { message: 'The server had an error while processing your request' } } };
    const failed = await chat({ query: LANTERN });
    expect(failed.statusCode).toBe(502);
    expect(failed.headers['retry-after']).toBeUndefined();
    expect(failed.json().error).toEqual({ code: 'upstream_error', message: 'The hosted model is unavailable (HTTP 500)' });

    // A provider failing mid-answer: what was streamed stays streamed, then the error.
    wire.otherwise = { pieces: ['The lantern ', 'was '], errorAfterPieces: { message: 'overloaded', type: 'server_error' } };
    const midway = parseEventStream((await chat({ query: LANTERN }, SSE)).body);
    expect(midway.map((event) => event.event)).toEqual(['delta', 'delta', 'error']);
    expect(midway.at(-1)!.data).toEqual({ detail: 'The hosted model failed while answering', code: 'upstream_error' });

    wire.otherwise = { hangUpAfter: 0 };
    const dropped = await chat({ query: LANTERN });
    expect(dropped.statusCode).toBe(502);
    expect(dropped.json().error).toEqual({ code: 'upstream_error', message: 'The hosted model is unreachable' });
    expect(dropped.body).not.toContain('127.0.0.1');
    wire.otherwise = { pieces: ['The lantern ', 'was ', 'replaced'], hangUpAfter: 2 };
    expect(parseEventStream((await chat({ query: LANTERN }, SSE)).body).at(-1)).toEqual({ event: 'error', data: { detail: 'The hosted model is unreachable', code: 'upstream_error' } });
    expect(await turnCount()).toBe(before);
    expect(t.logs()).not.toContain(KEY);
  });

  it('a client that disconnects mid-answer (stream or JSON) closes the upstream request and stores nothing', async () => {
    wire.otherwise = { pieces: Array.from({ length: 200 }, (_, i) => `w${i} `), delayMs: 15 };
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const before = await turnCount();
    const cancelled = () => t.logs().split('"event":"chat.cancelled"').length - 1;
    const cancelledBefore = cancelled();
    const seen = await chatThenDisconnect(address, viewer, { query: LANTERN }, 3);
    expect(seen.map((event) => event.event)).toEqual(['delta', 'delta', 'delta']);
    expect(await wire.completions[0].ended).toBe(true);

    // The same for a JSON request dropped while the model writes.
    const json = new AbortController();
    const pending = fetch(`${address}/api/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${viewer}` },
      body: JSON.stringify({ query: LANTERN }),
      signal: json.signal,
    }).catch((error) => error);
    await vi.waitFor(() => expect(wire.completions[1]?.piecesSent).toBeGreaterThanOrEqual(3), { timeout: 10_000 });
    json.abort();
    expect((await pending).name).toBe('AbortError');
    expect(await wire.completions[1].ended).toBe(true);
    // Both handlers have finished (each logs it on its way out): only now is "nothing stored" final.
    await vi.waitFor(() => expect(cancelled()).toBe(cancelledBefore + 2), { timeout: 10_000 });
    expect(await turnCount()).toBe(before);
  });

  it('answers concurrent chats (JSON and streams) each with its own answer and conversation', async () => {
    wire.otherwise = (request) => ({ pieces: ['Answer to: ', lastUser(request.messages).split('Question: ')[1]], delayMs: 5 });
    const questions = ['copper lantern?', 'dredger silt?', 'apple trees?', 'pear trees?', 'pruning winter?'];
    const answers = await Promise.all(questions.map((query, index) => (index % 2 ? chat({ query }, SSE) : chat({ query }))));
    const ids = new Set<string>();
    for (const [index, res] of answers.entries()) {
      expect(res.statusCode).toBe(200);
      const events = index % 2 ? parseEventStream(res.body) : null;
      const body = events ? { ...events.at(-1)!.data, answer: deltaText(events) } : res.json();
      expect(body.answer).toBe(`Answer to: ${questions[index]}`);
      ids.add(body.conversation_id);
    }
    expect(ids.size).toBe(questions.length);
    expect(wire.completions).toHaveLength(questions.length);
  });

  it('resolves ambiguous queries with the model (RAG_CLASSIFIER_LLM_ENABLED), capped at its token limit', async () => {
    wire.otherwise = (request) => ({ pieces: isAnswerPrompt(request) ? ['unused'] : ['SMALL_TALK'] });
    const res = (await chat({ query: 'hmm interesting' })).json();
    expect(res).toMatchObject({ answer: SMALL_TALK_ANSWERS.chit_chat, retrieval_settings: { classification: 'small_talk', retrieved: false } });
    expect(wire.completions).toHaveLength(1);
    expect(wire.completions[0].body).toMatchObject({ max_tokens: 8, temperature: 0, stream: false });
    expect(lastUser(wire.completions[0].messages)).toBe('hmm interesting');
    // A clear question never asks the classifier.
    await chat({ query: LANTERN });
    expect(wire.completions).toHaveLength(2);
    expect(isAnswerPrompt(wire.completions[1])).toBe(true);
  });

  it('rewrites a follow-up into a standalone query (RAG_QUERY_REWRITE_ENABLED), by the model, or by key terms when the model fails', async () => {
    await t.app.settings.set({ RAG_QUERY_REWRITE_ENABLED: true });
    const isRewrite = (request: ReceivedRequest) => request.messages[0].content.startsWith('Rewrite');
    try {
      wire.otherwise = (request) => ({ pieces: isRewrite(request) ? ['Who paid for the copper lantern?'] : ['The council [1].'] });
      const first = (await chat({ query: LANTERN })).json();
      const followUp = (await chat({ query: 'and who paid for it?', conversation_id: first.conversation_id })).json();
      expect(followUp.retrieval_settings.rewritten_query).toBe('Who paid for the copper lantern?');
      const rewriteCall = wire.completions.find(isRewrite)!;
      expect(lastUser(rewriteCall.messages)).toContain(`User: ${LANTERN}`);

      wire.otherwise = (request) => (isRewrite(request) ? { status: 503, body: { error: { message: 'overloaded' } } } : { pieces: ['The council [1].'] });
      const byTerms = (await chat({ query: 'and who paid for it?', conversation_id: first.conversation_id })).json();
      expect(byTerms.retrieval_settings.rewritten_query).toBe('and who paid for it? replaced lantern copper');
      expect(byTerms.sources[0].text).toContain('maintenance fund');
      // A standalone question is searched as asked.
      expect((await chat({ query: 'How many apple trees grow in the orchard?', conversation_id: first.conversation_id })).json().retrieval_settings.rewritten_query).toBeNull();
    } finally {
      await t.app.settings.set({ RAG_QUERY_REWRITE_ENABLED: false });
    }
  });

  it("logs the token figures (the model's reported usage included) with RAG_LOG_TOKEN_USAGE, and the query only when RAG_LOG_REDACT_QUERIES is off", async () => {
    const usageLines = () => t.logs().split('\n').filter((line) => line.includes('"chat.token_usage"')).map((line) => JSON.parse(line));
    const already = usageLines().length;
    wire.otherwise = { pieces: ['The lantern ', 'was ', 'replaced [1].'], usage: { prompt_tokens: 321, completion_tokens: 5 } };
    await chat({ query: LANTERN });
    expect(usageLines()).toHaveLength(already);
    await t.app.settings.set({ RAG_LOG_TOKEN_USAGE: true });
    try {
      await chat({ query: LANTERN });
      expect(usageLines()[already]).toMatchObject({
        limit: 4096,
        estimated_prompt: estimate(wire.completions.at(-1)!.messages),
        reserved_completion: 512,
        chunks_dropped: 0,
        turns_dropped: 0,
        prompt_tokens: 321,
        completion_tokens: 5,
        stop_reason: 'eos',
        query: `[redacted ${LANTERN.length} chars]`,
      });
      expect(t.logs()).not.toContain(LANTERN);
      await t.app.settings.set({ RAG_LOG_REDACT_QUERIES: false });
      await chat({ query: LANTERN });
      expect(usageLines()[already + 1].query).toBe(LANTERN);
    } finally {
      await t.app.settings.set({ RAG_LOG_TOKEN_USAGE: false, RAG_LOG_REDACT_QUERIES: true });
    }
  });
});
