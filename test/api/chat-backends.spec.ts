import path from 'node:path';
import { setImmediate as tick } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GeneratorBusyError, importLlm, type ChatMessage } from '../../native/llm/index.js';
import { buildMessages } from '../../plugins/chat/prompt.js';
import { reservedCompletion } from '../../plugins/chat/token-budget.js';
import { startWithCorpus } from '../fixtures/chat-corpus.js';
import { STORIES_GGUF } from '../fixtures/models.js';
import { parseEventStream } from '../fixtures/sse.js';
import type { TestApp } from '../helpers.js';

/**
 * POST /api/chat on the local backend as an operator installs it: stories260K imported into
 * MODEL_DIR, run in process by node-llama-cpp. (The hosted backend, against a loopback server
 * speaking the OpenAI wire format, carries the generative tests in chat-generative.spec.ts.)
 */
const SSE = { accept: 'text/event-stream' };
const LANTERN = 'When was the copper lantern replaced?';
const BOTH = 'Tell me about the lantern, the dredger, the basin and the orchard trees';
const STORIES = STORIES_GGUF;

let t: TestApp;
let viewer: string;
const chat = (payload: object, headers: Record<string, string> = {}) => t.request({ method: 'POST', url: '/api/chat', token: viewer, headers, payload });
const turnCount = async () => (await t.app.db.selectFrom('conversation_turns').selectAll().execute()).length;

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

  it('with the bounded queue full, a chat is 503 model_busy with Retry-After, in JSON and as the one error event; nothing stored', async () => {
    // Other clients hold the one model: one generating (stories260K writes on without an end of story: it runs until
    // aborted), then waiters until the queue refuses one, however long the queue is.
    const model = t.app.generator!;
    const others = new AbortController();
    const story: ChatMessage[] = [{ role: 'user', content: 'Once upon a time' }];
    const holders: Promise<unknown>[] = [];
    let refused: unknown;
    for (let i = 0; i < 64 && !refused; i++) {
      holders.push(model.generate(story, { maxTokens: 100_000, signal: others.signal }).catch((error: unknown) => (refused = error)));
      await tick();
    }
    try {
      expect(refused).toBeInstanceOf(GeneratorBusyError);
      const before = await turnCount();
      const res = await chat({ query: LANTERN });
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toMatch(/^[1-9]\d*$/);
      expect(res.json().error).toEqual({ code: 'model_busy', message: 'The model is busy; retry shortly' });
      const streamed = await chat({ query: LANTERN }, SSE);
      expect(streamed.statusCode).toBe(200);
      expect(streamed.headers['retry-after']).toBe(res.headers['retry-after']);
      expect(parseEventStream(streamed.body)).toEqual([{ event: 'error', data: { detail: 'The model is busy; retry shortly', code: 'model_busy', retry_after: Number(res.headers['retry-after']) } }]);
      expect(await turnCount()).toBe(before);
    } finally {
      others.abort();
      await Promise.all(holders);
    }
    // The queue drained: the model answers again.
    expect((await chat({ query: LANTERN })).statusCode).toBe(200);
  });

  it('a chat that reaches a model already closed (shutdown under way) is a 500 that shows no internals', async () => {
    await t.app.generator!.close();
    const mark = t.logs().length;
    const res = await chat({ query: LANTERN });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: { code: 'internal_error', message: 'Internal server error' } });
    expect(parseEventStream((await chat({ query: LANTERN }, SSE)).body)).toEqual([{ event: 'error', data: { detail: 'Internal server error', code: 'internal_error' } }]);
    // The cause is for the operator's log only: one error line each.
    const failures = t.logs().slice(mark).split('\n').filter((line) => line.includes('"level":50'));
    expect(failures.map((line) => JSON.parse(line).msg)).toEqual(['request failed', 'chat stream failed']);
  });
});
