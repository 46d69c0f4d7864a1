import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { OpenAIGenerator, importLlm, type ChatMessage, type Generator } from '../native/llm/index.js';
import { buildMessages } from '../plugins/chat/prompt.js';
import { reservedCompletion } from '../plugins/chat/token-budget.js';
import { startWithCorpus } from './fixtures/chat-corpus.js';
import { useGenerator } from './fixtures/scripted-generator.js';
import { chatThenDisconnect, parseEventStream } from './fixtures/sse.js';
import type { TestApp } from './helpers.js';

/**
 * POST /api/chat on the real backends, configured as an operator would: LLM_BACKEND=hosted against a
 * loopback server speaking the OpenAI streaming wire format, and stories260K installed in MODEL_DIR
 * (node-llama-cpp in process).
 */
const SSE = { accept: 'text/event-stream' };
const KEY = 'sk-hearth-chat-test-5e1f0a9c';
const LANTERN = 'When was the copper lantern replaced?';
const BOTH = 'Tell me about the lantern, the dredger, the basin and the orchard trees';
const STORIES = path.resolve(import.meta.dirname, '../../shared/models/stories260K/stories260K.gguf');

let t: TestApp;
let viewer: string;
const chat = (payload: object, headers: Record<string, string> = {}) => t.request({ method: 'POST', url: '/api/chat', token: viewer, headers, payload });
const turnCount = async () => (await t.app.db.selectFrom('conversation_turns').selectAll().execute()).length;

describe('hosted backend (OpenAI wire format on loopback)', () => {
  type Reply = { status?: number; headers?: Record<string, string>; pieces?: string[]; delayMs?: number; hang?: boolean };
  let reply: (messages: ChatMessage[]) => Reply = () => ({ pieces: ['ok'] });
  const requests: { messages: ChatMessage[]; max_tokens: number; closedEarly: boolean; authorization?: string }[] = [];
  const frame = (data: unknown) => `data: ${JSON.stringify(data)}\n\n`;
  const server = http.createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const body = JSON.parse(raw);
    const seen = { messages: body.messages, max_tokens: body.max_tokens, closedEarly: false, authorization: req.headers.authorization };
    requests.push(seen);
    res.on('close', () => (seen.closedEarly = !res.writableEnded));
    const { status = 200, headers = {}, pieces = [], delayMs = 0, hang = false } = reply(body.messages);
    if (status !== 200) return void res.writeHead(status, { 'content-type': 'application/json', ...headers }).end('{"error":{"message":"no"}}');
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    if (hang) return;
    for (const piece of pieces) {
      if (res.destroyed) return;
      if (delayMs) await sleep(delayMs);
      // Each piece split across two writes, as TCP may deliver it.
      const event = frame({ object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] });
      res.write(event.slice(0, 12));
      res.write(event.slice(12));
    }
    res.write(frame({ choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] }));
    res.end('data: [DONE]\n\n');
  });
  let base = '';
  /** The same client with another context size: the window is set at boot, the budget test needs several. */
  const hosted = (nCtx: number) => new OpenAIGenerator({ backend: 'hosted', baseUrl: `${base}/v1`, apiKey: KEY, model: 'test-model', nCtx, timeoutSeconds: 10 });

  let configured: Generator;
  beforeAll(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    ({ t, viewer } = await startWithCorpus({ LLM_BACKEND: 'hosted', HOSTED_LLM_API_KEY: KEY, HOSTED_LLM_MODEL: 'test-model', HOSTED_LLM_BASE_URL: `${base}/v1` }));
    configured = t.app.generator!;
  });
  afterAll(async () => {
    await t.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  beforeEach(() => useGenerator(t.app, configured));

  it('streams the model\'s deltas with the markers that point at a source, and stores the turn', async () => {
    expect(t.app.generator!.info()).toMatchObject({ backend: 'hosted', model: 'test-model' });
    reply = () => ({ pieces: ['The lantern was replaced in 1987 [', '1', '] after a storm [', '4', '2].'] });
    const events = parseEventStream((await chat({ query: LANTERN }, SSE)).body);
    const done = events.at(-1)!;
    expect(done).toMatchObject({ event: 'done', data: { mode: 'generative', token_budget: null } });
    const answer = events.filter((event) => event.event === 'delta').map((event) => event.data.text).join('');
    expect(answer).toBe('The lantern was replaced in 1987 [1] after a storm.');
    expect(requests.at(-1)!.authorization).toBe(`Bearer ${KEY}`);
    expect(requests.at(-1)!.messages.at(-1)!.content).toContain(`[1] harbour-log.md`);
    const stored = (await t.request({ method: 'GET', url: `/api/conversations/${done.data.conversation_id}`, token: viewer })).json();
    expect(stored.turns[0].answer).toBe(answer);
    expect(t.logs()).not.toContain(KEY);
  });

  it('trims the lowest-relevance sources to fit a tiny N_CTX', async () => {
    reply = () => ({ pieces: ['Several things [1].'] });
    const full = (await chat({ query: BOTH })).json();
    expect(full.sources.length).toBeGreaterThan(1);
    const generator = t.app.generator!;
    const prompt = generator.countPromptTokens(requests.at(-1)!.messages);
    let n = prompt;
    while (n - reservedCompletion(n) >= prompt) n--;
    useGenerator(t.app, hosted(n));
    const trimmed = (await chat({ query: BOTH })).json();
    expect(n).toBeLessThan(512);
    expect(trimmed.token_budget).toMatchObject({ limit: n, reserved_completion: reservedCompletion(n), turns_dropped: 0 });
    expect(trimmed.token_budget.chunks_dropped).toBeGreaterThan(0);
    expect(trimmed.sources).toEqual(full.sources.slice(0, full.sources.length - trimmed.token_budget.chunks_dropped));
    expect(generator.countPromptTokens(requests.at(-1)!.messages)).toBe(trimmed.token_budget.estimated_prompt);
    expect(requests.at(-1)!.max_tokens).toBe(reservedCompletion(n));
  });

  it('a client that disconnects mid-answer (stream or JSON) closes the upstream request and stores nothing', async () => {
    reply = () => ({ pieces: Array.from({ length: 200 }, (_, i) => `w${i} `), delayMs: 15 });
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const before = await turnCount();
    expect((await chatThenDisconnect(address, viewer, { query: LANTERN }, 3)).map((event) => event.event)).toEqual(['delta', 'delta', 'delta']);
    const upstream = requests.at(-1)!;
    for (let i = 0; i < 100 && !upstream.closedEarly; i++) await sleep(10);
    expect(upstream.closedEarly).toBe(true);

    // The same for a JSON request dropped while the model writes.
    const json = new AbortController();
    const pending = fetch(`${address}/api/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${viewer}` },
      body: JSON.stringify({ query: LANTERN }),
      signal: json.signal,
    }).catch((error) => error);
    for (let i = 0; i < 100 && requests.at(-1) === upstream; i++) await sleep(10);
    await sleep(60);
    json.abort();
    expect((await pending).name).toBe('AbortError');
    const second = requests.at(-1)!;
    for (let i = 0; i < 100 && !second.closedEarly; i++) await sleep(10);
    expect(second.closedEarly).toBe(true);
    await sleep(50);
    expect(await turnCount()).toBe(before);
  });

  it('answers concurrent chats each with its own stream', async () => {
    reply = (messages) => ({ pieces: ['Re: ', messages.at(-1)!.content.split('Question: ')[1]], delayMs: 10 });
    const questions = ['copper lantern?', 'dredger silt?', 'apple trees?', 'pruning winter?'];
    const answers = await Promise.all(questions.map(async (query) => parseEventStream((await chat({ query }, SSE)).body)));
    for (const [index, events] of answers.entries()) {
      expect(events.filter((event) => event.event === 'delta').map((event) => event.data.text).join('')).toBe(`Re: ${questions[index]}`);
      expect(events.at(-1)!.event).toBe('done');
    }
  });

  it('a stalled upstream times out: 504 in JSON, an error event in a stream; nothing stored', async () => {
    reply = () => ({ hang: true });
    await t.app.settings.set({ INFERENCE_TIMEOUT_SECONDS: 1 });
    try {
      const before = await turnCount();
      const res = await chat({ query: LANTERN });
      expect(res.statusCode).toBe(504);
      expect(res.json().error.code).toBe('generation_timeout');
      expect(parseEventStream((await chat({ query: LANTERN }, SSE)).body)).toEqual([{ event: 'error', data: { code: 'generation_timeout', detail: expect.any(String) } }]);
      expect(await turnCount()).toBe(before);
    } finally {
      await t.app.settings.set({ INFERENCE_TIMEOUT_SECONDS: 120 });
    }
  });

  it('passes an upstream 429\'s Retry-After on; other upstream failures are 502', async () => {
    reply = () => ({ status: 429, headers: { 'retry-after': '12' } });
    const limited = await chat({ query: LANTERN });
    expect(limited.statusCode).toBe(502);
    expect(limited.headers['retry-after']).toBe('12');
    expect(limited.json().error.code).toBe('upstream_rate_limited');
    const streamed = await chat({ query: LANTERN }, SSE);
    expect(streamed.headers['retry-after']).toBe('12');
    expect(parseEventStream(streamed.body)).toEqual([{ event: 'error', data: { code: 'upstream_rate_limited', detail: expect.any(String), retry_after: 12 } }]);
    reply = () => ({ status: 500 });
    expect((await chat({ query: LANTERN })).json().error.code).toBe('upstream_error');
    expect(t.logs()).not.toContain(KEY);
  });
});

describe('local backend (node-llama-cpp on stories260K)', () => {
  beforeAll(async () => {
    // One thread: more than the cores present collapses llama.cpp throughput on a small box.
    ({ t, viewer } = await startWithCorpus({ N_CTX: '768', N_THREADS: '1' }, (modelDir) => importLlm(STORIES, { modelDir })));
    expect(t.app.generator!.info()).toMatchObject({ backend: 'local', model: 'stories260K', context: { effective: 768 } });
  });
  afterAll(() => t.close());

  it('streams a generated answer and stores exactly what was streamed', async () => {
    const res = await chat({ query: LANTERN }, SSE);
    const events = parseEventStream(res.body);
    const done = events.at(-1)!;
    expect(done.event).toBe('done');
    expect(done.data.mode).toBe('generative');
    const answer = events.filter((event) => event.event === 'delta').map((event) => event.data.text).join('');
    expect(answer.length).toBeGreaterThan(0);
    // A story model cites nothing on purpose; any marker left points at a source.
    for (const match of answer.matchAll(/\[(\d+)\]/g)) expect(Number(match[1])).toBeLessThanOrEqual(done.data.sources.length);
    const stored = (await t.request({ method: 'GET', url: `/api/conversations/${done.data.conversation_id}`, token: viewer })).json();
    expect(stored.turns[0].answer).toBe(answer);
  });

  it('counts the budget with the model\'s own tokenizer and trims to its window', async () => {
    const body = (await chat({ query: BOTH })).json();
    expect(body.token_budget).toMatchObject({ limit: 768, reserved_completion: reservedCompletion(768), turns_dropped: 0 });
    expect(body.token_budget.chunks_dropped).toBeGreaterThan(0);
    expect(body.sources.length).toBeGreaterThan(0);
    // The estimate is the prompt of the kept sources as the model's tokenizer and template count it.
    expect(body.token_budget.estimated_prompt).toBe(t.app.generator!.countPromptTokens(buildMessages([], body.sources, BOTH)));
    expect(body.token_budget.estimated_prompt).toBeLessThanOrEqual(768 - reservedCompletion(768));
  });
});
