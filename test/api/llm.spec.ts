import { appendFileSync, chmodSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../core/config.js';
import {
  GenerationTimeoutError,
  GeneratorBusyError,
  LocalGenerator,
  UpstreamError,
  importLlm,
  loadGenerator,
  type ChatMessage,
  type Generator,
} from '../../native/llm/index.js';
import { LLM_PRESETS } from '../../native/model-files/index.js';
import { selfTestGpu } from '../../native/llm/gpu-self-test.js';
import { generatorOptions } from '../../plugins/llm/generator-options.js';
import { main as modelsCli } from '../../appliance/cli/models.js';
import { STORIES_GGUF } from '../fixtures/models.js';
import { OpenAIWireServer } from '../fixtures/openai-wire-server.js';
import { installTinyEmbeddingModel } from '../fixtures/tiny-embedding-model.js';
import { startApp, TEST_JWT_SECRET, TEST_MFA_KEY, type TestApp } from '../helpers.js';

const STORIES = STORIES_GGUF;
const KEY = 'sk-hearth-test-3f9a1c7e5b2d8046';
const story: ChatMessage[] = [{ role: 'user', content: 'Once upon a time' }];

/** The loader's options as the service derives them from these environment variables. */
const llmOptions = (env: Record<string, string> = {}) => generatorOptions(loadConfig({ JWT_SECRET_KEY: TEST_JWT_SECRET, MFA_ENCRYPTION_KEY: TEST_MFA_KEY, ...env }).llm);
const tempDir = (name: string) => mkdtempSync(path.join(os.tmpdir(), `hearth-llm-${name}-`));

function captureLog() {
  const lines: string[] = [];
  return { lines, log: { info: (m: string) => lines.push(m), warn: (m: string) => lines.push(`WARN ${m}`), debug: (m: string) => lines.push(m) } };
}

/** The copy is read-only like its source: make it writable, then change one byte's worth. */
function tamper(file: string): void {
  chmodSync(file, 0o644);
  appendFileSync(file, Buffer.from([0]));
}

/** Whether node-llama-cpp's CUDA build loads and decodes here, asked of the runtime itself in a child (it needs the CUDA libraries and a GPU). */
async function cudaLlamaWorks(): Promise<boolean> {
  return (await selfTestGpu(STORIES_GGUF, 'cuda')).ok;
}

/** Holds this thread (and its event loop) for `seconds`, as a consumer that stalls would. */
const stallFor = (seconds: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, seconds * 1000);

/** Runs one generation, recording each streamed piece and when it arrived. */
async function streamed(gen: Generator, maxTokens: number, signal?: AbortSignal, onPiece?: (count: number) => void, messages = story) {
  const pieces: string[] = [];
  const times: number[] = [];
  const result = await gen.generate(messages, { maxTokens, signal, onToken: (text) => (pieces.push(text), times.push(performance.now()), onPiece?.(pieces.length)) });
  return { result, pieces, times };
}

let modelDir: string;
beforeAll(async () => {
  modelDir = tempDir('models');
  await importLlm(STORIES, { modelDir, id: 'stories260K' });
});
afterAll(() => rmSync(modelDir, { recursive: true, force: true }));

describe('local backend: node-llama-cpp on stories260K', () => {
  let gen: LocalGenerator;
  let timeout = 30;
  const captured = captureLog();
  beforeAll(async () => {
    const loaded = await loadGenerator({ ...llmOptions({ N_CTX: '65536', N_THREADS: '1' }), modelDir, timeoutSeconds: () => timeout, log: captured.log, maxWaiting: 3 });
    gen = loaded as LocalGenerator;
  });
  afterAll(async () => gen?.close());

  it('loads on the CPU with EFFECTIVE_N_CTX capped by the trained context, and says so', () => {
    expect(gen).toBeInstanceOf(LocalGenerator);
    const info = gen.info();
    expect(info).toMatchObject({ backend: 'local', model: 'stories260K', file: 'stories260K/model.gguf', quantisation: 'F32', threads: 1, gpu_layers: 0, device: 'cpu' });
    expect(info.context).toMatchObject({ requested: 65536, trained: 2048 });
    expect(info.context.effective).toBeLessThanOrEqual(2048);
    expect(info.context.effective).toBeGreaterThanOrEqual(256);
    expect(info.parameters).toBeGreaterThan(200_000);
    expect(captured.lines.some((l) => l.startsWith('WARN') && l.includes('N_CTX=65536') && l.includes('2048'))).toBe(true);
    expect(captured.lines.some((l) => l.includes('no chat template') && l.includes('GeneralChatWrapper'))).toBe(true);
  });

  it('caps N_THREADS at the cores present; N_GPU_LAYERS=-1 offloads to CUDA where the runtime has it, else runs on the CPU and says why', async () => {
    const cuda = await cudaLlamaWorks();
    const { lines, log } = captureLog();
    const wide = await LocalGenerator.load({ modelPath: STORIES, name: 'wide', nCtx: 512, nThreads: 512, nGpuLayers: -1, timeoutSeconds: 5, log });
    try {
      expect(wide.info().threads).toBe(Math.min(512, os.availableParallelism()));
      expect(lines.some((l) => l.includes(`capped at the ${os.availableParallelism()} cores`))).toBe(true);
      if (cuda) {
        expect(wide.info().device).toBe('cuda');
        expect(wide.info().gpu_layers).toBeGreaterThan(0);
      } else {
        expect(wide.info()).toMatchObject({ device: 'cpu', gpu_layers: 0 });
        expect(lines.some((l) => (l.includes('no usable CUDA GPU') || l.includes('failed its self-test')) && l.includes('running on the CPU'))).toBe(true);
      }
      expect(await wide.generate(story, { maxTokens: 5 })).toMatchObject({ completionTokens: 5, stopReason: 'max_tokens' });
    } finally {
      await wide.close();
    }
  });

  it('streams pieces that concatenate to the result and honours maxTokens', async () => {
    await gen.generate(story, { maxTokens: 4 });
    // A prompt the sequence has not seen (it holds the one before): all of it is evaluated. Its speed: bench/chat.ts.
    const fresh: ChatMessage[] = [{ role: 'system', content: 'You write short stories for children.' }, ...story];
    const { result, pieces } = await streamed(gen, 128, undefined, undefined, fresh);
    expect(pieces.length).toBeGreaterThan(1);
    expect(pieces.join('')).toBe(result.text);
    expect(result).toMatchObject({ completionTokens: 128, stopReason: 'max_tokens', promptTokens: gen.countPromptTokens(fresh) });
    const short = await gen.generate(story, { maxTokens: 7 });
    expect(short).toMatchObject({ completionTokens: 7, stopReason: 'max_tokens' });
  });

  it('counts prompt tokens with its own tokenizer, exactly as many as the sequence evaluates', async () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'Answer from the sources [1] and [2].' },
      { role: 'user', content: 'What did Lily find?' },
      { role: 'assistant', content: 'A red ball [1].' },
      { role: 'user', content: 'And then?' },
    ];
    const counted = gen.countPromptTokens(messages);
    const result = await gen.generate(messages, { maxTokens: 10 });
    expect(result.promptTokens).toBe(counted);
    // The sequence holds the prompt and every generated token but the last (not yet evaluated).
    const sequence = (gen as unknown as { chat: { sequence: { contextTokens: unknown[] } } }).chat.sequence;
    expect(sequence.contextTokens.length).toBe(counted + result.completionTokens - 1);
    const longer = [...messages, { role: 'user' as const, content: 'Tell me more about the big red ball in the park.' }];
    expect(gen.countPromptTokens(longer)).toBeGreaterThanOrEqual(counted + gen.countTokens('Tell me more about the big red ball in the park.'));
    expect(gen.countTokens('Once upon a time')).toBeGreaterThan(0);
  });

  it('stops a running generation at the next token when its signal aborts', async () => {
    const controller = new AbortController();
    const run = await streamed(gen, 100_000, controller.signal, (n) => n === 5 && controller.abort());
    expect(run.result.stopReason).toBe('cancelled');
    expect(run.result.text).toBe(run.pieces.join(''));
    // Counted in tokens, not milliseconds: what was decoded before the abort is flushed, nothing more is generated.
    expect(run.result.completionTokens).toBeGreaterThanOrEqual(5);
    expect(run.result.completionTokens).toBeLessThanOrEqual(6);
    expect(run.pieces.length).toBeLessThanOrEqual(6);
    const already = new AbortController();
    already.abort();
    expect((await gen.generate(story, { maxTokens: 50, signal: already.signal })).stopReason).toBe('cancelled');
  });

  it('stops mid-answer at INFERENCE_TIMEOUT_SECONDS with GenerationTimeoutError, within a few tokens, then serves the next request', async () => {
    timeout = 0.3;
    let pieces = 0;
    try {
      // The consumer of the first piece holds the thread past the deadline: it expires mid-answer on any machine.
      const onToken = () => ++pieces === 1 && stallFor(2 * timeout);
      await expect(gen.generate(story, { maxTokens: 100_000, onToken })).rejects.toBeInstanceOf(GenerationTimeoutError);
    } finally {
      timeout = 30;
    }
    // The deadline's timer runs at the event loop's next turn: a handful of tokens at most, not the 100,000 asked for.
    expect(pieces).toBeGreaterThanOrEqual(1);
    expect(pieces).toBeLessThanOrEqual(10);
    expect((await gen.generate(story, { maxTokens: 5 })).stopReason).toBe('max_tokens');
  });

  it('runs concurrent requests one at a time, first come first served, without interleaving', async () => {
    const runs = await Promise.all([0, 1, 2, 3].map(() => streamed(gen, 40)));
    for (const run of runs) {
      expect(run.result).toMatchObject({ completionTokens: 40, stopReason: 'max_tokens' });
      expect(run.pieces.join('')).toBe(run.result.text);
    }
    for (let i = 1; i < runs.length; i++) expect(runs[i].times[0]).toBeGreaterThanOrEqual(runs[i - 1].times.at(-1)!);
  });

  it('refuses beyond the bounded queue and lets an aborted waiter leave it', async () => {
    const waiter = new AbortController();
    let waiterPieces = 0;
    const first = streamed(gen, 300);
    const left = gen.generate(story, { maxTokens: 300, signal: waiter.signal, onToken: () => waiterPieces++ });
    const others = [streamed(gen, 20), streamed(gen, 20)];
    const busy = await gen.generate(story, { maxTokens: 20 }).catch((e: unknown) => e);
    expect(busy).toBeInstanceOf(GeneratorBusyError);
    expect((busy as GeneratorBusyError).retryAfterSeconds).toBeGreaterThanOrEqual(1);
    waiter.abort();
    expect(await left).toMatchObject({ text: '', stopReason: 'cancelled' });
    expect(waiterPieces).toBe(0);
    const done = await Promise.all([first, ...others]);
    expect(done.map((r) => r.result.stopReason)).toEqual(['max_tokens', 'max_tokens', 'max_tokens']);
  });
});

describe('choosing the backend', () => {
  it('hosted beats INFERENCE_URL, which beats a local GGUF; nothing installed is null', async () => {
    const both = { INFERENCE_URL: 'http://127.0.0.1:9/', N_THREADS: '1' };
    const hosted = await loadGenerator({ ...llmOptions({ ...both, LLM_BACKEND: 'hosted', HOSTED_LLM_API_KEY: KEY, HOSTED_LLM_MODEL: 'm' }), modelDir, timeoutSeconds: 5 });
    expect(hosted?.info()).toMatchObject({ backend: 'hosted', model: 'm', device: 'remote' });
    const server = await loadGenerator({ ...llmOptions(both), modelDir, timeoutSeconds: 5 });
    expect(server?.info()).toMatchObject({ backend: 'inference-server', model: 'llama.cpp server' });
    expect(await loadGenerator({ ...llmOptions(), modelDir: tempDir('empty'), timeoutSeconds: 5 })).toBeNull();
  });

  it('refuses a GGUF whose sha256 no longer matches its manifest', async () => {
    const dir = tempDir('tampered');
    await importLlm(STORIES, { modelDir: dir });
    tamper(path.join(dir, 'llm', 'stories260K', 'model.gguf'));
    await expect(loadGenerator({ ...llmOptions(), modelDir: dir, timeoutSeconds: 5 })).rejects.toThrow(/refused: model\.gguf has sha256/);
    rmSync(dir, { recursive: true, force: true });
  });
});

describe('models CLI for chat models', () => {
  const cli = async (args: string[], env: Record<string, string>) => {
    const saved = { ...process.env };
    Object.assign(process.env, env);
    const out: string[] = [];
    try {
      const code = await modelsCli(args, (l) => out.push(l), (l) => out.push(l));
      return { code, output: out.join('\n') };
    } finally {
      for (const name of Object.keys(env)) {
        if (saved[name] === undefined) delete process.env[name];
        else process.env[name] = saved[name];
      }
    }
  };

  it('import-llm installs a GGUF by id and activates it; pull refuses bytes that are not the pinned SmolLM2', async () => {
    const dir = tempDir('cli');
    const imported = await cli(['import-llm', STORIES, '--id', 'tiny-story'], { MODEL_DIR: dir });
    expect(imported).toMatchObject({ code: 0, output: expect.stringMatching(/^imported chat model tiny-story {2}1185376 bytes .*\(active\)$/) });
    expect(readFileSync(path.join(dir, 'llm', 'ACTIVE'), 'utf8').trim()).toBe('tiny-story');
    const preset = LLM_PRESETS['smollm2-135m-instruct-q8'];
    const hub = http.createServer((req, res) => {
      if (req.url === `/${preset.repo}/resolve/${preset.revision}/${preset.files.model.path}`) res.end(readFileSync(STORIES));
      else res.writeHead(404).end();
    });
    await new Promise<void>((resolve) => hub.listen(0, '127.0.0.1', resolve));
    try {
      const pulled = await cli(['pull', '--model', 'smollm2-135m-instruct-q8'], { MODEL_DIR: dir, HEARTH_MODEL_HUB_URL: `http://127.0.0.1:${(hub.address() as AddressInfo).port}` });
      expect(pulled.code).toBe(1);
      expect(pulled.output).toMatch(/1185376 bytes, pinned 144811968/);
      expect(readdirSync(path.join(dir, 'llm')).sort()).toEqual(['ACTIVE', 'tiny-story']);
    } finally {
      await new Promise((resolve) => hub.close(resolve));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('OpenAI-compatible backends against a loopback server', () => {
  let wire: OpenAIWireServer;
  let hosted: Generator;
  let timeout = 5;
  const captured = captureLog();
  const hello = { pieces: ['Hel', 'lo', ' world'], usage: { prompt_tokens: 12, completion_tokens: 3 } };
  const unauthorised = { status: 401, body: { error: { message: `Incorrect API key provided: ${KEY}`, type: 'invalid_request_error', code: 'invalid_api_key' } } };
  beforeAll(async () => {
    wire = await OpenAIWireServer.start();
    const options = llmOptions(wire.hostedEnv(KEY));
    hosted = (await loadGenerator({ ...options, modelDir, timeoutSeconds: () => timeout, log: captured.log }))!;
  });
  afterAll(async () => wire.close());
  beforeEach(() => wire.reset());
  const failure = async (promise: Promise<unknown>) => {
    const err = (await promise.catch((e: unknown) => e)) as Error;
    expect(err.message).not.toContain(KEY);
    expect(JSON.stringify(err)).not.toContain(KEY);
    return err;
  };

  it('streams SSE deltas with the key as a Bearer token, and reads plain JSON without onToken', async () => {
    wire.script(hello, { pieces: ['Hello world'], finishReason: 'length', usage: { prompt_tokens: 12, completion_tokens: 2 } });
    const pieces: string[] = [];
    const result = await hosted.generate(story, { maxTokens: 30, temperature: 0.2, onToken: (t) => pieces.push(t) });
    expect(pieces).toEqual(['Hel', 'lo', ' world']);
    expect(result).toEqual({ text: 'Hello world', promptTokens: 12, completionTokens: 3, stopReason: 'eos' });
    const request = wire.requests.at(-1)!;
    expect(request.url).toBe('/v1/chat/completions');
    expect(request.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(request.body).toMatchObject({ model: 'test-model', messages: story, max_tokens: 30, temperature: 0.2, stream: true, stream_options: { include_usage: true } });
    expect(await hosted.generate(story, { maxTokens: 2 })).toEqual({ text: 'Hello world', promptTokens: 12, completionTokens: 2, stopReason: 'max_tokens' });
    expect(wire.requests.at(-1)!.body).toMatchObject({ stream: false });
    expect(hosted.countTokens('abcdefghi')).toBe(3); // ceil(chars / 4), an estimate
  });

  it('maps 401, 429, 500 and a refused connection to UpstreamError without the key', async () => {
    wire.script(unauthorised, { status: 429, headers: { 'retry-after': '7' }, body: { error: { message: 'slow down' } } }, { status: 500, body: 'boom' });
    const rejected = await failure(hosted.generate(story, { maxTokens: 5, onToken: () => undefined }));
    expect(rejected).toBeInstanceOf(UpstreamError);
    expect(rejected).toMatchObject({ status: 401, message: 'The hosted model rejected the API key' });
    expect(await failure(hosted.generate(story, { maxTokens: 5 }))).toMatchObject({ status: 429, retryAfterSeconds: 7, message: expect.stringMatching(/rate limiting/) });
    expect(await failure(hosted.generate(story, { maxTokens: 5 }))).toMatchObject({ status: 500, message: expect.stringMatching(/unavailable/) });
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const options = llmOptions({ LLM_BACKEND: 'hosted', HOSTED_LLM_API_KEY: KEY, HOSTED_LLM_MODEL: 'm', HOSTED_LLM_BASE_URL: `http://127.0.0.1:${port}/v1` });
    const down = (await loadGenerator({ ...options, modelDir, timeoutSeconds: 5, log: captured.log }))!;
    const refused = await failure(down.generate(story, { maxTokens: 5 }));
    expect(refused).toBeInstanceOf(UpstreamError);
    expect(refused.message).toMatch(/unreachable/);
    expect(captured.lines.join('\n')).not.toContain(KEY);
  });

  it('times out a stalled stream and cancels a stream whose client left', async () => {
    wire.script({ pieces: ['Hel', 'lo'], stallAfter: 1 }, { pieces: Array.from({ length: 500 }, () => 'la '), delayMs: 20 });
    timeout = 0.3;
    try {
      // The server never sends more: only the deadline can end this call.
      expect(await failure(hosted.generate(story, { maxTokens: 5, onToken: () => undefined }))).toBeInstanceOf(GenerationTimeoutError);
    } finally {
      timeout = 5;
    }
    expect(await wire.requests.at(-1)!.ended).toBe(true); // the stalled request is closed, not left open
    const controller = new AbortController();
    const result = await hosted.generate(story, { maxTokens: 500, signal: controller.signal, onToken: (t) => t && setTimeout(() => controller.abort(), 30) });
    expect(result.stopReason).toBe('cancelled');
    expect(result.text).toMatch(/^(la )+$/);
    expect(await wire.requests.at(-1)!.ended).toBe(true);
  });

  it('talks to a llama.cpp server on INFERENCE_URL without a key and names its model', async () => {
    wire.script(hello, unauthorised);
    const server = (await loadGenerator({ ...llmOptions({ INFERENCE_URL: wire.url }), modelDir, timeoutSeconds: 5 }))!;
    expect(server.info()).toMatchObject({ backend: 'inference-server', model: 'served-model', file: null });
    expect((await server.generate(story, { maxTokens: 5, onToken: () => undefined })).text).toBe('Hello world');
    expect(wire.requests.map((request) => `${request.method} ${request.url}`)).toEqual(['GET /v1/models', 'POST /v1/chat/completions']);
    expect(wire.requests.at(-1)!.headers.authorization).toBeUndefined();
    expect(await failure(server.generate(story, { maxTokens: 5 }))).toMatchObject({ message: 'The inference server refused the request (HTTP 401)' });
  });

  it('keeps the key out of the service logs and of GET /api/model-info', async () => {
    const t = await startApp(wire.hostedEnv(KEY));
    try {
      const viewer = (await t.userWithRole('viewer')).access;
      const info = await t.request({ method: 'GET', url: '/api/model-info', token: viewer });
      expect(info.json().chat).toMatchObject({ backend: 'hosted', model: 'test-model', device: 'remote' });
      expect(info.body).not.toContain(KEY);
      wire.script(unauthorised, { status: 500, body: 'boom' });
      await failure(t.app.generator!.generate(story, { maxTokens: 5, onToken: () => undefined }));
      await failure(t.app.generator!.generate(story, { maxTokens: 5 }));
      expect(t.logs()).toContain('HTTP 500');
      expect(t.logs()).not.toContain(KEY);
    } finally {
      await t.close();
    }
  });
});

describe('GET /api/model-info and the chat_model health probe', () => {
  let t: TestApp;
  afterEach(async () => t.close());

  it('without a model: extractive answers, still useful; anonymous is refused', async () => {
    t = await startApp();
    expect((await t.request({ method: 'GET', url: '/api/model-info' })).statusCode).toBe(401);
    const viewer = (await t.userWithRole('viewer')).access;
    const res = await t.request({ method: 'GET', url: '/api/model-info', token: viewer });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ chat: null, embedding: null, mode: { search: 'keyword', answers: 'extractive' } });
    const health = (await t.request({ method: 'GET', url: '/api/health' })).json();
    expect(health.components.chat_model.status).toBe('not_installed');
    expect(health.capabilities.answers).toBe('extractive');
    expect(t.app.generator).toBeNull();
  });

  it('with stories260K and an embedding model: the local model, its context and the embedder', async () => {
    await installTinyEmbeddingModel(modelDir);
    t = await startApp({ MODEL_DIR: modelDir, N_CTX: '4096', N_THREADS: '1' });
    const viewer = (await t.userWithRole('viewer')).access;
    const body = (await t.request({ method: 'GET', url: '/api/model-info', token: viewer })).json();
    expect(body.chat).toMatchObject({ backend: 'local', model: 'stories260K', file: 'stories260K/model.gguf', threads: 1, device: 'cpu', context: { requested: 4096, trained: 2048 } });
    expect(body.chat.context.effective).toBeLessThanOrEqual(2048);
    expect(body.embedding).toMatchObject({ model_id: expect.stringMatching(/^tiny-test-minilm-shape@/), dimension: 32, device: 'cpu', max_tokens: 256 });
    expect(body.mode).toEqual({ search: 'hybrid', answers: 'generative' });
    const health = (await t.request({ method: 'GET', url: '/api/health' })).json();
    expect(health.components.chat_model).toMatchObject({ status: 'ok', detail: 'stories260K (local, cpu)' });
    expect(t.logs()).toMatch(/N_CTX=4096 exceeds the 2048 tokens/);
  });

  it('a tampered model: the service starts, health says error, answers are extractive', async () => {
    const dir = tempDir('tampered-app');
    await importLlm(STORIES, { modelDir: dir });
    tamper(path.join(dir, 'llm', 'stories260K', 'model.gguf'));
    t = await startApp({ MODEL_DIR: dir });
    const health = (await t.request({ method: 'GET', url: '/api/health' })).json();
    expect(health.components.chat_model.status).toBe('error');
    const viewer = (await t.userWithRole('viewer')).access;
    expect((await t.request({ method: 'GET', url: '/api/model-info', token: viewer })).json().chat).toBeNull();
  });
});
